#!/usr/bin/env bash
# Builds OLM v0's two operators (cmd/olm and cmd/catalog of operator-lifecycle-manager) and opm (operator-registry, the
# version OLM requires) from the Go module proxy for `make test-olm`, and copies OLM's CRDs from the same module. Only
# the three commands are built (not package-server or the rest of the modules), in one go build with the same flags
# (opm's build tags, cgo for its sqlite, -trimpath) so they compile their shared dependencies once, and the result is
# cached outside the work tree keyed by version, like the envtest API servers (hack/envtest.sh): a second run and every
# later clone reuse it. `make opm` copies opm from here into bin/.
#
# The versions and checksums of every module they are built from are pinned in hack/tools/olm/go.mod and go.sum
# (checked against the Go checksum database on first download).
#
# The bundle's ServiceMonitor and PrometheusRule need the Prometheus Operator's CRDs, a prerequisite of the install
# (docs/install/olm.md): they are copied from the module github.com/prometheus-operator/prometheus-operator at the
# version of the monitoring API the operator is built with, checked against the go.sum hash below.
#
# Usage: hack/olm.sh   -> prints the directory holding olm, catalog, opm, crds/ (OLM's CRDs) and monitoring-<version>/
#                         (the two monitoring CRDs): OLM_ASSETS of `make test-olm`
# Env:   OLM_CACHE (default ~/.cache/kim/olm)
set -euo pipefail
cd "$(dirname "$0")/.."

MODFILE=hack/tools/olm/go.mod
MODULE=github.com/operator-framework/operator-lifecycle-manager
# The version is the one go.mod requires: one place to change it.
OLM_VERSION="$(awk -v m="${MODULE}" '$1 == m {print $2; exit} $1 == "require" && $2 == m {print $3; exit}' "${MODFILE}")"
[ -n "${OLM_VERSION}" ] || { echo "olm: no version of ${MODULE} in ${MODFILE}" >&2; exit 1; }
OPM_PACKAGE=github.com/operator-framework/operator-registry/cmd/opm
# opm's build tags (operator-registry's own Makefile: sqlite with JSON, the pure-Go OpenPGP of containers/image, no
# gpgme C library), for all three: build tags are part of every package's cache key. cgo stays on (opm's sqlite).
# Compiled without optimisation (the Makefile's ONCE_TOOL_GCFLAGS): test-olm runs them for about a minute, and a
# fresh machine builds them on its critical path.
BUILD_FLAGS=(-tags=json1,containers_image_openpgp -trimpath "-ldflags=-s -w" "-gcflags=all=-N -l")
PROMETHEUS_OPERATOR=github.com/prometheus-operator/prometheus-operator
PROMETHEUS_OPERATOR_VERSION=v0.93.1
PROMETHEUS_OPERATOR_SUM='h1:4Juk8v93RdG1DSGD/mGp+SeQKPmnlLIj2iq3blLZgFY='
CACHE_ROOT="${OLM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kim/olm}"
DEST="${CACHE_ROOT}/${OLM_VERSION}"

log() { echo "olm: $*" >&2; }

MONITORING="${DEST}/monitoring-${PROMETHEUS_OPERATOR_VERSION}"

ready() { [ -x "${DEST}/olm" ] && [ -x "${DEST}/catalog" ] && [ -x "${DEST}/opm" ] && [ -d "${DEST}/crds" ] && [ -d "${MONITORING}" ]; }

# module_dir MODULE@VERSION: the module's directory in the module cache (downloaded, checksum-verified, if missing).
module_dir() {
  local json
  json="$(GOWORK=off GOFLAGS=-mod=mod go mod download -json "$1")" || { echo "olm: go mod download $1: ${json}" >&2; return 1; }
  sed -n 's/.*"Dir": "\(.*\)",*/\1/p' <<<"${json}"
}

# copy_crds SRC DIR FILES...: copies the files into DIR atomically (a half-written directory is never there).
copy_crds() {
  local src="$1" dir="$2"
  shift 2
  rm -rf "${dir}.tmp" && mkdir -p "${dir}.tmp"
  for f in "$@"; do cp "${src}/${f}" "${dir}.tmp/"; done
  chmod -R u+w "${dir}.tmp"
  mv "${dir}.tmp" "${dir}"
}

if ! ready; then
  mkdir -p "${CACHE_ROOT}"
  # Several worktrees (or test runs) may ask at once: one builds, the others wait for it.
  exec 9>"${CACHE_ROOT}/.build.lock"
  flock -n 9 || { log "waiting for the build already under way (make test builds ahead: bin/ahead.log)"; hack/ahead.sh --boost-while flock 9; }
  if ! ready; then
    mkdir -p "${DEST}"
    if [ ! -x "${DEST}/olm" ] || [ ! -x "${DEST}/catalog" ] || [ ! -x "${DEST}/opm" ]; then
      log "building olm, catalog (${OLM_VERSION}) and opm from the Go module proxy (first time only)..."
      rm -rf "${DEST}/bin.tmp" && mkdir -p "${DEST}/bin.tmp"
      GOGC="${TOOLCHAIN_GOGC:-${GOGC:-}}" GOWORK=off go build -modfile="${MODFILE}" "${BUILD_FLAGS[@]}" -o "${DEST}/bin.tmp/" \
        "${MODULE}/cmd/olm" "${MODULE}/cmd/catalog" "${OPM_PACKAGE}"
      for cmd in olm catalog opm; do mv "${DEST}/bin.tmp/${cmd}" "${DEST}/${cmd}"; done
      rmdir "${DEST}/bin.tmp"
    fi
    if [ ! -d "${DEST}/crds" ]; then
      src="$(cd hack/tools/olm && module_dir "${MODULE}@${OLM_VERSION}")"
      copy_crds "${src}/deploy/chart/crds" "${DEST}/crds" $(cd "${src}/deploy/chart/crds" && ls -- *.yaml)
    fi
    if [ ! -d "${MONITORING}" ]; then
      log "fetching the monitoring CRDs of ${PROMETHEUS_OPERATOR}@${PROMETHEUS_OPERATOR_VERSION}..."
      # Outside any module (/): the download must not touch the root's go.mod or go.sum.
      sum="$(cd / && GOWORK=off go mod download -json "${PROMETHEUS_OPERATOR}@${PROMETHEUS_OPERATOR_VERSION}" | sed -n 's/.*"Sum": "\(.*\)",*/\1/p')"
      if [ "${sum}" != "${PROMETHEUS_OPERATOR_SUM}" ]; then
        echo "olm: ${PROMETHEUS_OPERATOR}@${PROMETHEUS_OPERATOR_VERSION} has hash '${sum}', pinned ${PROMETHEUS_OPERATOR_SUM}" >&2
        exit 1
      fi
      src="$(cd / && module_dir "${PROMETHEUS_OPERATOR}@${PROMETHEUS_OPERATOR_VERSION}")"
      copy_crds "${src}/example/prometheus-operator-crd" "${MONITORING}" \
        monitoring.coreos.com_servicemonitors.yaml monitoring.coreos.com_prometheusrules.yaml
    fi
  fi
fi
echo "${DEST}"
