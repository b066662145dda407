#!/usr/bin/env bash
# Proves the safety property test can fail: each patch in hack/safety-mutants/ re-introduces one defect of issue 12
# into a scratch copy of the tree, and the property test must find it. Prints, per defect, whether it was found,
# after how many sequences, and how long it took. Exit code 1 when a defect survives.
#
# Usage: hack/safety-mutants.sh [max sequences per mutant, default 20000]
#        hack/safety-mutants.sh --check   only check that every patch still applies to the working tree (make test)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ "${1:-}" = --check ]; then
  # A mutant that no longer applies proves nothing; the code it patches moved on and the patch must be regenerated.
  stale=0
  for patch in "${root}"/hack/safety-mutants/*.patch; do
    if ! git -C "${root}" apply --check "${patch}" 2>/dev/null; then
      echo "stale mutant: ${patch#"${root}"/} no longer applies; re-create it on the current code" >&2
      stale=1
    fi
  done
  exit "${stale}"
fi
max="${1:-20000}"
seed="${SAFETY_SEED:-1}"
work="$(mktemp -d)"
trap 'git -C "${root}" worktree remove --force "${work}/tree" >/dev/null 2>&1 || true; rm -rf "${work}"' EXIT
git -C "${root}" worktree add --detach -q "${work}/tree" HEAD
survivors=0
for patch in "${root}"/hack/safety-mutants/*.patch; do
  name="$(basename "${patch}" .patch)"
  git -C "${work}/tree" checkout -q -- .
  git -C "${work}/tree" apply "${patch}"
  start=$(date +%s)
  out="$(cd "${work}/tree" && go test ./core/usecase -run TestSafetyProperties -count=1 -safety.seed="${seed}" -safety.sequences="${max}" 2>&1 || true)"
  secs=$(( $(date +%s) - start ))
  if grep -q "safety invariant broken" <<<"${out}"; then
    where="$(grep -o 'sequence [0-9]* of [0-9]*' <<<"${out}" | head -1)"
    why="$(grep -o 'safety invariant broken[^:]*: [^\n]*' <<<"${out}" | head -1 | cut -c1-160)"
    printf 'found     %-40s %s, %ss incl. build and shrinking\n          %s\n' "${name}" "${where}" "${secs}" "${why}"
  else
    printf 'SURVIVED  %-40s (%s sequences, %ss)\n' "${name}" "${max}" "${secs}"
    survivors=$((survivors + 1))
  fi
done
exit $(( survivors > 0 ))
