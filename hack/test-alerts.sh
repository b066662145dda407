#!/usr/bin/env bash
# Unit-tests the alert rules of config/prometheus/prometheus_rule.yaml with `promtool test rules`.
# promtool is always the pinned version, built once from the Go module proxy and cached outside the clone
# (~/.cache/kim/tools, PROMTOOL_CACHE overrides): Debian's package and a source build of another version judge the
# rules differently, so no promtool found on the PATH is used.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
promtool_version="${PROMTOOL_VERSION:-v0.316.0}" # github.com/prometheus/prometheus module version (Prometheus 3.x)
# Without Prometheus's service-discovery plugins (its remove_all_sd build tag): rule checks and rule tests use none of
# them, and leaving out their cloud SDKs makes the first build on a fresh machine several minutes shorter.
promtool_tags="remove_all_sd"
cache="${PROMTOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kim/tools}/promtool-${promtool_version}-${promtool_tags}"
promtool="${cache}/promtool"
if [ ! -x "${promtool}" ]; then
  echo "test-alerts: building promtool ${promtool_version} from the Go module proxy (first time only)..." >&2
  mkdir -p "${cache}"
  build="$(mktemp -d)"
  GOFLAGS=-mod=mod GOWORK=off GOBIN="${build}" go install -tags "${promtool_tags}" \
    "github.com/prometheus/prometheus/cmd/promtool@${promtool_version}"
  mv "${build}/promtool" "${promtool}" # complete binaries only: an interrupted build leaves nothing in the cache
  rmdir "${build}"
fi
echo "test-alerts: $("${promtool}" --version 2>&1 | head -1)" >&2

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
# The PrometheusRule's .spec is a plain Prometheus rule file: drop everything up to `spec:` and un-indent it.
sed -n '/^spec:/,$p' "${root}/config/prometheus/prometheus_rule.yaml" | sed '1d; s/^  //' >"${work}/kim.rules.yaml"
cp "${root}"/config/prometheus/tests/*.yaml "${work}/"
"${promtool}" check rules "${work}/kim.rules.yaml"
"${promtool}" test rules "${work}"/*_test.yaml
