#!/usr/bin/env bash
# Runs a tool's build (hack/envtest.sh: etcd and kube-apiserver) so that it shares compiled packages
# with the repository's own build. A compiled package's cache key is its source, its dependencies' keys and the build
# settings; so, in the tool's build module (the working directory: a go.mod of its own, with the tool required), this
#  - requires every module of the repository's graph (the workspace's build list) at the repository's version; minimal
#    version selection takes the higher of the two for each module the tool shares with the repository (grpc,
#    OpenTelemetry, client-go, ...): the repository's, unless the tool needs a newer one;
#  - runs COMMAND with the settings make test compiles with (the Makefile's FIPS_BUILD; the command passes -trimpath):
# and on a fresh machine the tool takes most of its packages from what make compile-deps compiled instead of
# compiling them a second time (docs/testing.md). The FIPS module is only what the tool links: `godebug fips140=off`
# keeps it out of FIPS mode at run time, as it ran before.
#
# Usage: hack/share-build.sh [-if MODULE@VERSION] COMMAND...
#   -if: share the versions only when the repository builds against MODULE@VERSION as well (the same Kubernetes line:
#        an older kube-apiserver, test-admission-oldest's, keeps its own versions; a newer dependency would not compile).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# The Makefile's FIPS_BUILD; TestToolsBuildLikeTheTests keeps the two equal.
BUILD_ENV=(CGO_ENABLED=0 GOFIPS140=v1.0.0 GOFLAGS=-mod=mod)

only_if=""
if [ "${1:-}" = "-if" ]; then
  only_if="$2"
  shift 2
fi
[ "$#" -ge 1 ] || { echo "usage: hack/share-build.sh [-if MODULE@VERSION] COMMAND..." >&2; exit 2; }
[ -f go.mod ] || { echo "share-build: no go.mod in $(pwd)" >&2; exit 2; }

# The workspace's build list (GOWORK may be off in the caller's environment); when it cannot be read, nothing is shared.
mods="$(cd "${root}" && GOWORK='' GOFLAGS='' go list -m -f '{{if not .Main}}{{.Path}}@{{.Version}}{{end}}' all)" || mods=""
if [ -n "${mods}" ] && { [ -z "${only_if}" ] || grep -qxF "${only_if}" <<<"${mods}"; }; then
  # What the build module itself requires (the tool, at the version its caller pins) stays as it is: go mod edit
  # -require replaces a requirement, so the repository's graph would otherwise set it (github.com/prometheus/prometheus
  # v0.312.0 in a build of promtool v0.316.0).
  own="$(go mod edit -print | awk '$1 == "require" && $2 == "(" {b = 1; next} b && $1 == ")" {b = 0}
    b {print $1 "@" $2} $1 == "require" && $2 != "(" {print $2 "@" $3}')"
  # shellcheck disable=SC2046 # one -require per module
  go mod edit $(sed -n 's/^./-require=&/p' <<<"${mods}") $(sed -n 's/^./-require=&/p' <<<"${own}")
  echo "share-build: with the repository's versions of the modules it shares" >&2
fi
go mod edit -godebug=fips140=off
GOFLAGS=-mod=mod go mod tidy -e >/dev/null 2>&1 || true
exec env "${BUILD_ENV[@]}" "$@"
