#!/usr/bin/env bash
# Unit-tests the alert rules of config/prometheus/prometheus_rule.yaml with `promtool test rules`.
# promtool comes from Debian's prometheus package when apt-get can install it (CI runs as root on a fresh machine),
# otherwise it is built once from the Go module proxy into bin/. Both are idempotent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${BIN:-${root}/bin}"
promtool_version="${PROMTOOL_VERSION:-v0.316.0}" # github.com/prometheus/prometheus module version (Prometheus 3.x)

find_promtool() {
  if [ -x "${bin}/promtool" ]; then echo "${bin}/promtool"; return 0; fi
  command -v promtool 2>/dev/null
}

promtool="$(find_promtool || true)"
if [ -z "${promtool}" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "test-alerts: installing promtool (Debian package prometheus)..." >&2
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus >/dev/null 2>&1; then
    apt-get update >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus >/dev/null 2>&1 || true
  fi
  promtool="$(find_promtool || true)"
fi
if [ -z "${promtool}" ]; then
  echo "test-alerts: building promtool ${promtool_version} from the Go module proxy (once)..." >&2
  mkdir -p "${bin}"
  GOFLAGS=-mod=mod GOBIN="${bin}" go install "github.com/prometheus/prometheus/cmd/promtool@${promtool_version}"
  promtool="${bin}/promtool"
fi

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
# The PrometheusRule's .spec is a plain Prometheus rule file: drop everything up to `spec:` and un-indent it.
sed -n '/^spec:/,$p' "${root}/config/prometheus/prometheus_rule.yaml" | sed '1d; s/^  //' >"${work}/kim.rules.yaml"
cp "${root}"/config/prometheus/tests/*.yaml "${work}/"
"${promtool}" check rules "${work}/kim.rules.yaml"
"${promtool}" test rules "${work}"/*_test.yaml
