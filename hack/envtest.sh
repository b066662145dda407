#!/usr/bin/env bash
# Builds the envtest control-plane binaries (kube-apiserver, etcd) from the Go module proxy, because
# setup-envtest cannot download release archives on our build machines. The binaries are cached outside
# the work tree, keyed by version, so a second run (and every later clone) reuses them.
#
# Usage: hack/envtest.sh            -> prints the directory to use as KUBEBUILDER_ASSETS
# Env:   KUBE_VERSION (default 1.36.3), ETCD_VERSION (default 3.6.8), ENVTEST_CACHE (default ~/.cache/kim/envtest)
#
# Both are built the way make test builds the repository (the Makefile's FIPS_BUILD: CGO_ENABLED=0, the FIPS module,
# -trimpath) and, when they are of the Kubernetes and etcd lines the repository itself builds against, with the
# repository's versions of every module they share with it (k8s.io/apiserver, client-go, grpc, OpenTelemetry, ...): a
# compiled package's cache key is its source, its dependencies' keys and those settings, so on a fresh machine they
# take most of their packages from the repository's own compile (make compile-deps) instead of compiling them again
# (kube-apiserver's build: about 650 packages instead of 1,800, a third of its CPU; docs/testing.md). The FIPS module
# is only what they are linked with: `godebug fips140=off` keeps them out of FIPS mode at run time, as they always ran.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-1.36.3}"
ETCD_VERSION="${ETCD_VERSION:-3.6.8}"
CACHE_ROOT="${ENVTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kim/envtest}"
# "-fips": the build above; binaries cached before it (no suffix) are not taken.
DEST="${CACHE_ROOT}/k8s-${KUBE_VERSION}-etcd-${ETCD_VERSION}-fips"
STAGING_VERSION="0.${KUBE_VERSION#1.}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# The Makefile's FIPS_BUILD; TestEnvtestBuildsLikeTheTests keeps the two equal.
BUILD_ENV=(CGO_ENABLED=0 GOFIPS140=v1.0.0 GOFLAGS=-mod=mod)

log() { echo "envtest: $*" >&2; }

mkdir -p "${DEST}"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

# share_versions MODULE@VERSION: in the build module of the working directory, require every module of the
# repository's graph (the workspace's build list) at its version when the repository requires MODULE at VERSION (the
# same Kubernetes or etcd line; an older kube-apiserver, test-admission-oldest's, keeps its own versions). Minimal
# version selection then takes the higher of the two for each shared module: the repository's, unless it is older.
share_versions() {
  local mods
  # The workspace's (GOWORK may be off in the caller's environment); without it, nothing is shared.
  mods="$(cd "${ROOT}" && GOWORK= GOFLAGS= go list -m -f '{{if not .Main}}{{.Path}}@{{.Version}}{{end}}' all)" || mods=""
  if grep -qxF "$1" <<<"${mods}"; then
    # shellcheck disable=SC2046 # one -require per module
    go mod edit $(sed -n 's/^./-require=&/p' <<<"${mods}")
    log "with the repository's versions of the modules it shares (the repository builds against $1)"
  fi
  go mod edit -godebug=fips140=off
}

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
  share_versions "k8s.io/apiserver@v${STAGING_VERSION}"
  cat > tools.go <<'GO'
//go:build tools

package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
GO
  GOFLAGS=-mod=mod go mod tidy -e >/dev/null 2>&1 || true
  # Stamped with its version as Kubernetes' release build stamps it: /version then says v${KUBE_VERSION}, not
  # v0.0.0-master, and clients that compare versions (OLM checks a CSV's minKubeVersion) see the real one.
  local minor="${KUBE_VERSION#*.}"
  minor="${minor%%.*}"
  local v=k8s.io/component-base/version
  env "${BUILD_ENV[@]}" go build -trimpath \
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
  share_versions "go.etcd.io/etcd/client/v3@v${ETCD_VERSION}"
  GOFLAGS=-mod=mod go mod tidy -e >/dev/null 2>&1 || true
  env "${BUILD_ENV[@]}" go build -trimpath -ldflags='-s -w' -o "${DEST}/etcd.tmp" go.etcd.io/etcd/server/v3
  mv "${DEST}/etcd.tmp" "${DEST}/etcd"
}

# Several worktrees (or test runs) may ask at once: one builds, the others wait for it.
if [ ! -x "${DEST}/etcd" ] || ! stamped; then
  exec 9>"${CACHE_ROOT}/.build.lock"
  flock -n 9 || { log "waiting for the build already under way (make test builds ahead: bin/ahead.log)"; flock 9; }
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
