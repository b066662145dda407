#!/usr/bin/env bash
# Builds the envtest control-plane binaries (kube-apiserver, etcd) from the Go module proxy, because
# setup-envtest cannot download release archives on our build machines. The binaries are cached outside
# the work tree, keyed by version, so a second run (and every later clone) reuses them.
#
# Usage: hack/envtest.sh            -> prints the directory to use as KUBEBUILDER_ASSETS
# Env:   KUBE_VERSION (default 1.36.3), ETCD_VERSION (default 3.6.8), ENVTEST_CACHE (default ~/.cache/kim/envtest)
#
# Both are built like the repository's own packages and, when they are of the Kubernetes and etcd lines it builds
# against, with its versions of the modules they share (hack/share-build.sh): they then take most of their packages
# from make test's own compile (kube-apiserver: about 650 packages compiled instead of 1,800).
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-1.36.3}"
ETCD_VERSION="${ETCD_VERSION:-3.6.8}"
CACHE_ROOT="${ENVTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kim/envtest}"
# "-fips": built like the repository's packages (above); binaries cached before that (no suffix) are not taken.
DEST="${CACHE_ROOT}/k8s-${KUBE_VERSION}-etcd-${ETCD_VERSION}-fips"
STAGING_VERSION="0.${KUBE_VERSION#1.}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

log() { echo "envtest: $*" >&2; }

mkdir -p "${DEST}"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

build_kube_apiserver() {
  log "building kube-apiserver ${KUBE_VERSION} from the Go module proxy (first time only, several minutes)..."
  local mod="${work}/kube"
  mkdir -p "${mod}"
  cd "${mod}"
  go mod init kim.local/envtest-kube >/dev/null 2>&1
  go mod edit -go=1.26
  go mod edit -require="k8s.io/kubernetes@v${KUBE_VERSION}"
  local gomod
  gomod="$(go mod download -json "k8s.io/kubernetes@v${KUBE_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')"
  # k8s.io/kubernetes refers to its staging modules through relative replaces that do not apply to
  # consumers; point each of them at the published module of the matching version instead.
  local staging
  staging="$(grep -E '^\s*k8s.io/[a-z0-9-]+ => ./staging/' "${gomod}" | awk '{print $1}' | sort -u)"
  for m in ${staging}; do
    go mod edit -replace="${m}=${m}@v${STAGING_VERSION}"
  done
  cat > tools.go <<'GO'
//go:build tools

package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
GO
  # Stamped with its version as Kubernetes' release build stamps it: /version then says v${KUBE_VERSION}, not
  # v0.0.0-master, and clients that compare versions (OLM checks a CSV's minKubeVersion) see the real one.
  local minor="${KUBE_VERSION#*.}"
  minor="${minor%%.*}"
  local v=k8s.io/component-base/version
  GOGC="${TOOLCHAIN_GOGC:-${GOGC:-}}" "${ROOT}/hack/share-build.sh" -if "k8s.io/apiserver@v${STAGING_VERSION}" go build -trimpath \
    -ldflags="-s -w -X ${v}.gitVersion=v${KUBE_VERSION} -X ${v}.gitMajor=1 -X ${v}.gitMinor=${minor} -X ${v}.gitTreeState=clean" \
    -o "${DEST}/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver
  mv "${DEST}/kube-apiserver.tmp" "${DEST}/kube-apiserver"
  echo "v${KUBE_VERSION}" >"${DEST}/kube-apiserver.version"
}

# A kube-apiserver cached before it was stamped with its version is built again (the link step: the packages come
# from the Go build cache).
stamped() { [ -x "${DEST}/kube-apiserver" ] && [ "$(cat "${DEST}/kube-apiserver.version" 2>/dev/null)" = "v${KUBE_VERSION}" ]; }

build_etcd() {
  log "building etcd ${ETCD_VERSION} from the Go module proxy (first time only)..."
  local mod="${work}/etcd"
  mkdir -p "${mod}"
  cd "${mod}"
  go mod init kim.local/envtest-etcd >/dev/null 2>&1
  go mod edit -go=1.26
  go mod edit -require="go.etcd.io/etcd/server/v3@v${ETCD_VERSION}"
  cat > tools.go <<'GO'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
GO
  GOGC="${TOOLCHAIN_GOGC:-${GOGC:-}}" "${ROOT}/hack/share-build.sh" -if "go.etcd.io/etcd/client/v3@v${ETCD_VERSION}" go build -trimpath -ldflags='-s -w' -o "${DEST}/etcd.tmp" go.etcd.io/etcd/server/v3
  mv "${DEST}/etcd.tmp" "${DEST}/etcd"
}

# Several worktrees (or test runs) may ask at once: one builds, the others wait for it.
if [ ! -x "${DEST}/etcd" ] || ! stamped; then
  exec 9>"${CACHE_ROOT}/.build.lock"
  flock -n 9 || { log "waiting for the build already under way (make test builds ahead: bin/ahead.log)"; "${ROOT}/hack/ahead.sh" --boost-while flock 9; }
  # The same etcd serves every kube-apiserver version: take it from another version's directory when one has it.
  if [ ! -x "${DEST}/etcd" ]; then
    for other in "${CACHE_ROOT}"/k8s-*-etcd-"${ETCD_VERSION}"-fips/etcd; do
      if [ -x "${other}" ]; then
        cp "${other}" "${DEST}/etcd.tmp" && mv "${DEST}/etcd.tmp" "${DEST}/etcd"
        break
      fi
    done
  fi
  [ -x "${DEST}/etcd" ] || build_etcd
  stamped || build_kube_apiserver
fi
echo "${DEST}"
