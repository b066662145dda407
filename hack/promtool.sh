#!/usr/bin/env bash
# Prints the path of the pinned promtool, building it first when it is not cached. promtool is always this version,
# built once from the Go module proxy and cached outside the clone (~/.cache/kim/tools, PROMTOOL_CACHE overrides):
# Debian's package and a source build of another version judge the alert rules differently, so no promtool found on
# the PATH is used.
#
# Usage: hack/promtool.sh   -> the promtool binary (hack/test-alerts.sh runs it)
# Env:   PROMTOOL_VERSION (default v0.316.0, the github.com/prometheus/prometheus module version: Prometheus 3.x)
set -euo pipefail
promtool_version="${PROMTOOL_VERSION:-v0.316.0}"
# Without Prometheus's service-discovery plugins (its remove_all_sd build tag): rule checks and rule tests use none of
# them, and leaving out their cloud SDKs makes the first build on a fresh machine several minutes shorter.
promtool_tags="remove_all_sd"
cache="${PROMTOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kim/tools}/promtool-${promtool_version}-${promtool_tags}"
promtool="${cache}/promtool"
if [ ! -x "${promtool}" ]; then
  mkdir -p "${cache}"
  # make test builds it ahead (hack/ahead.sh) while test-alerts may ask for it: one builds, the other waits.
  exec 9>"${cache}.lock"
  flock -n 9 || { echo "promtool: waiting for the build of promtool already under way" >&2; "$(dirname "$0")/ahead.sh" --boost-while flock 9; }
  if [ ! -x "${promtool}" ]; then
    echo "promtool: building promtool ${promtool_version} from the Go module proxy (first time only)..." >&2
    build="$(mktemp -d)"
    # Compiled without optimisation (the Makefile's ONCE_TOOL_GCFLAGS): a run checks a few rule files with it.
    GOGC="${TOOLCHAIN_GOGC:-${GOGC:-}}" GOFLAGS=-mod=mod GOWORK=off GOBIN="${build}" go install -tags "${promtool_tags}" -gcflags="all=-N -l" \
      "github.com/prometheus/prometheus/cmd/promtool@${promtool_version}"
    mv "${build}/promtool" "${promtool}" # complete binaries only: an interrupted build leaves nothing in the cache
    rmdir "${build}"
  fi
fi
echo "${promtool}"
