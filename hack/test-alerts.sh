#!/usr/bin/env bash
# Unit-tests the alert rules of config/prometheus/prometheus_rule.yaml with `promtool test rules`, always with the
# pinned promtool (hack/promtool.sh builds it once and caches it outside the clone).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
promtool="$("${root}/hack/promtool.sh")"
echo "test-alerts: $("${promtool}" --version 2>&1 | head -1)" >&2

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
# The PrometheusRule's .spec is a plain Prometheus rule file: drop everything up to `spec:` and un-indent it.
sed -n '/^spec:/,$p' "${root}/config/prometheus/prometheus_rule.yaml" | sed '1d; s/^  //' >"${work}/kim.rules.yaml"
cp "${root}"/config/prometheus/tests/*.yaml "${work}/"
"${promtool}" check rules "${work}/kim.rules.yaml"
"${promtool}" test rules "${work}"/*_test.yaml
