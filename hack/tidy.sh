#!/usr/bin/env bash
# go mod tidy in every module of the repository: the root, the API module (operator/api) and the pinned tools
# (hack/tools, hack/tools/actionlint, hack/tools/goreleaser, hack/tools/krew, hack/tools/olm). With --check (make tidy-check) nothing is written and any difference fails;
# without it (make tidy) the go.mod and go.sum files are rewritten.
#
# The root requires the API module at its release version, which may not be published yet, and go mod tidy does not
# read go.work (it never runs in workspace mode, golang/go#50750). So the root is tidied through a temporary copy of
# its go.mod that replaces the API module with ./operator/api, which is what the workspace builds with. The root's
# go.sum needs no lines for the API module (the workspace does not use them and go install <module>@<version> checks
# the published module against the checksum database); lines that the release process or a tool added are ignored
# by the check and dropped by make tidy.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
check=false
if [ "${1:-}" = --check ]; then
  check=true
fi
api=github.com/kyma-project/kim/operator/api
# Every module on its own, as an importer or go install sees it.
export GOWORK=off
status=0

for dir in operator/api hack/tools hack/tools/actionlint hack/tools/goreleaser hack/tools/krew hack/tools/olm; do
  if "${check}"; then
    (cd "${root}/${dir}" && go mod tidy -diff) || {
      echo "tidy-check: go.mod of ${dir} is not tidy: run make tidy" >&2
      status=1
    }
  else
    (cd "${root}/${dir}" && go mod tidy)
  fi
done

tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
cp "${root}/go.mod" "${tmp}/go.mod"
grep -vF "${api} " "${root}/go.sum" >"${tmp}/go.sum" || true
go mod edit -replace="${api}=${root}/operator/api" "${tmp}/go.mod"
cd "${root}"
if "${check}"; then
  # The diff names the temporary copy; it is the change go mod tidy would make to go.mod and go.sum.
  go mod tidy -modfile="${tmp}/go.mod" -diff || {
    echo "tidy-check: go.mod of the root is not tidy: run make tidy" >&2
    status=1
  }
else
  go mod tidy -modfile="${tmp}/go.mod"
  go mod edit -dropreplace="${api}" "${tmp}/go.mod"
  cp "${tmp}/go.mod" go.mod
  cp "${tmp}/go.sum" go.sum
fi
exit "${status}"
