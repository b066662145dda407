#!/usr/bin/env bash
# Proves the safety tests can fail: each patch in hack/safety-mutants/ re-introduces one defect into a scratch copy of
# the tree, and a test must find it. Prints, per defect, whether it was found and how long it took. Exit code 1 when
# a defect survives (or a mutant does not build: a mutant that does not compile proves nothing).
#
# Which test must find a mutant: a patch may start, before its first `diff --git` line (git apply ignores that
# text), with one line
#     kill: <package> <test name regexp>
# e.g. `kill: ./core/domain/sakubeconfig ^TestCheckRequest$`; that test (run with -short, so without API servers
# unless the package's tests need none) must fail. A line `kill-integration: <package> <test name regexp>` names an
# integration test instead: it runs without -short, with the envtest binaries (hack/envtest.sh), and must fail (the
# two-replica chaos test, some minutes). Patches without a kill line must be found by the safety property test
# (TestSafetyProperties in core/usecase), bounded by the given number of sequences.
#
# Usage: hack/safety-mutants.sh [max sequences per property mutant, default 20000] [name filter regexp]
#        hack/safety-mutants.sh --check   only check that every patch still applies to the working tree
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
filter="${2:-.}"
seed="${SAFETY_SEED:-1}"
work="$(mktemp -d)"
trap 'git -C "${root}" worktree remove --force "${work}/tree" >/dev/null 2>&1 || true; rm -rf "${work}"' EXIT
git -C "${root}" worktree add --detach -q "${work}/tree" HEAD
# The mutants patch HEAD (what CI's fresh clone holds): commit before running this on uncommitted work.
survivors=0
for patch in "${root}"/hack/safety-mutants/*.patch; do
  name="$(basename "${patch}" .patch)"
  grep -Eq -- "${filter}" <<<"${name}" || continue
  git -C "${work}/tree" checkout -q -- .
  git -C "${work}/tree" clean -qfd
  if ! git -C "${work}/tree" apply "${patch}"; then
    printf 'STALE     %-48s does not apply\n' "${name}"
    survivors=$((survivors + 1))
    continue
  fi
  start=$(date +%s)
  kill_line="$(sed -n '/^diff --git/q;s/^kill: *//p' "${patch}" | head -1)"
  integration_line="$(sed -n '/^diff --git/q;s/^kill-integration: *//p' "${patch}" | head -1)"
  if [ -n "${kill_line}" ] || [ -n "${integration_line}" ]; then
    set +e
    if [ -n "${kill_line}" ]; then
      read -r pkg run <<<"${kill_line}"
      out="$(cd "${work}/tree" && go test -short -count=1 "${pkg}" -run "${run}" 2>&1)"
    else
      read -r pkg run <<<"${integration_line}"
      out="$(cd "${work}/tree" && KUBEBUILDER_ASSETS="$("${root}/hack/envtest.sh")" go test -count=1 -timeout 30m "${pkg}" -run "${run}" 2>&1)"
    fi
    rc=$?
    set -e
    secs=$(( $(date +%s) - start ))
    if grep -Eq '\[build failed\]|\[setup failed\]|^# ' <<<"${out}"; then
      printf 'NO BUILD  %-48s %s does not compile with the mutant\n' "${name}" "${pkg}"
      sed 's/^/          /' <<<"${out}" | head -5
      survivors=$((survivors + 1))
    elif [ "${rc}" -ne 0 ] && grep -q -- '--- FAIL' <<<"${out}"; then
      why="$(grep -m1 -- '--- FAIL' <<<"${out}" | sed 's/^ *//')"
      printf 'found     %-48s %ss: %s\n' "${name}" "${secs}" "${why}"
    else
      printf 'SURVIVED  %-48s %s -run %s passed (%ss)\n' "${name}" "${pkg}" "${run}" "${secs}"
      survivors=$((survivors + 1))
    fi
    continue
  fi
  out="$(cd "${work}/tree" && go test ./core/usecase -run TestSafetyProperties -count=1 -safety.seed="${seed}" -safety.sequences="${max}" 2>&1 || true)"
  secs=$(( $(date +%s) - start ))
  if grep -q "safety invariant broken" <<<"${out}"; then
    where="$(grep -o 'sequence [0-9]* of [0-9]*' <<<"${out}" | head -1)"
    why="$(grep -o 'safety invariant broken[^:]*: [^\n]*' <<<"${out}" | head -1 | cut -c1-160)"
    printf 'found     %-48s %s, %ss incl. build and shrinking\n          %s\n' "${name}" "${where}" "${secs}" "${why}"
  else
    printf 'SURVIVED  %-48s (%s sequences, %ss)\n' "${name}" "${max}" "${secs}"
    survivors=$((survivors + 1))
  fi
done
exit $(( survivors > 0 ))
