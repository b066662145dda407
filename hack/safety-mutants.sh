#!/usr/bin/env bash
# Proves the safety tests can fail: each patch in hack/safety-mutants/ re-introduces one defect into a scratch copy of
# the tree, and the test named for it must find it. Prints one verdict per defect:
#   found       the named test passed on the unmutated tree in this run and fails with the mutant applied;
#   SURVIVED    the named test passes with the mutant applied;
#   NOT JUDGED  nothing can be concluded: the mutant does not build, the named test did not pass on the unmutated
#               tree (a failure, a skip for a missing tool, no test of that name), or the run failed without the
#               named test failing (an unrelated failure, a panic in another test, a timeout);
#   STALE       the patch no longer applies.
# Only "found" is a kill; anything else makes the exit code 1.
#
# Which test must find a mutant: a patch may start, before its first `diff --git` line (git apply ignores that
# text), with one line
#     kill: <package> <test name regexp>
# e.g. `kill: ./core/domain/sakubeconfig ^TestCheckRequest$`; a top-level test whose name matches the regexp (run
# with -short, so without API servers unless the package's tests need none) must fail. A line
# `kill-integration: <package> <test name regexp>` names an integration test instead: it runs without -short, with
# the envtest binaries (hack/envtest.sh). Patches without a kill line must be found by the safety property test
# (TestSafetyProperties in core/usecase, seed SAFETY_SEED, default 1), bounded by the given number of sequences.
#
# Usage: hack/safety-mutants.sh [max sequences per property mutant, default 20000] [name filter regexp]
#        hack/safety-mutants.sh --check   only check that every patch still applies to the working tree
# MUTANTS_ROOT overrides the repository the mutants are read from and applied to (the judge's own test uses it).
# MUTANT_BASELINE_JSON names go test -json reports (space-separated; make test passes test-all's) of a run of this
# same commit without -short, with the envtest binaries: for kill-integration lines only (they run the same way), a
# named top-level test the reports hold is not run again for the baseline; its verdict there is its baseline (a FAIL
# or SKIP there means NOT JUDGED). A named test the reports lack gets its baseline run here. MUTANT_SHORT_JSON does the
# same for kill lines (the unit judges) with reports of a -short run of this commit made as the unit judges run:
# make test passes test-fips's, and MUTANT_UNIT_GODEBUG=fips140=only,tlsmlkem=0, its mode, which the unit and property
# judges then run in. The reports are used only when the tree has no uncommitted change (the mutants patch HEAD; the
# reports must be of HEAD too). Judges run with -vet=off: lint vets the unmutated tree, and a mutant is judged by its test.
# MUTANT_TEST_BINARIES names a directory of test binaries of this commit kept by testreport (-keep-binaries, make test
# passes test-fips's), on the same condition: a mutant that changes no Go source, module file or file embedded into
# its package's test binary (an RBAC or admission policy, a script a test runs) leaves that binary as it is, so its
# judge runs the kept binary in the mutated tree instead of linking the same binary again.
set -euo pipefail
root="${MUTANTS_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}"
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
jobs="${MUTANT_JOBS:-2}"
echo "safety-mutants: property mutants judged by TestSafetyProperties with seed ${seed} and at most ${max} sequences;" \
  "${jobs} mutants judged at a time, integration tests one at a time"
work="$(mktemp -d)"
trees=()
cleanup() {
  for tree in "${trees[@]}"; do git -C "${root}" worktree remove --force "${tree}" >/dev/null 2>&1 || true; done
  rm -rf "${work}"
}
trap cleanup EXIT
# One scratch tree per slot, and one for the integration judges (one runs at a time): a mutant is applied to its own
# tree, so two mutants never see each other's patch.
for tree in $(seq 1 "${jobs}") int; do
  git -C "${root}" worktree add --detach -q "${work}/tree-${tree}" HEAD
  trees+=("${work}/tree-${tree}")
done
# The mutants patch HEAD (what CI's fresh clone holds): commit before running this on uncommitted work. make test
# builds with -trimpath (FIPS_BUILD): a package's cache key then leaves out its directory, so the trees share the
# packages compiled before and each judge recompiles only what its mutant changes. (go test -overlay in one unmutated
# tree was tried instead and let mutant 145 survive: the test it names builds the manager in a child process, which
# does not see the overlay.)

# go_test <kind> <package> <go test flags...>: runs a package's tests the way a kill line of that kind asks. Integration
# tests (API servers, timing of leases and watches) run one at a time, whatever else runs beside them.
go_test() {
  local kind="$1" pkg="$2"
  shift 2
  if [ "${kind}" = kill-integration ]; then
    KUBEBUILDER_ASSETS="${assets}" flock "${work}/integration.lock" go test -count=1 -vet=off -v -timeout 30m "${pkg}" "$@"
  else
    GODEBUG="${unit_godebug}" go test -short -count=1 -vet=off -v "${pkg}" "$@"
  fi
}

# The kill lines of the selected patches: "<name> <kind> <package> <regexp>", kind "property" without a kill line.
declare -a judged=()
for patch in "${root}"/hack/safety-mutants/*.patch; do
  name="$(basename "${patch}" .patch)"
  grep -Eq -- "${filter}" <<<"${name}" || continue
  line="$(sed -n '/^diff --git/q;s/^\(kill\(-integration\)\{0,1\}\): *\(.*\)$/\1 \3/p' "${patch}" | awk '!n++')"
  judged+=("${name} ${line:-property ./core/usecase ^TestSafetyProperties\$}")
done
unit_godebug="${MUTANT_UNIT_GODEBUG:-${GODEBUG:-}}"
assets=""
if printf '%s\n' "${judged[@]}" | grep -q '^[^ ]* kill-integration '; then
  assets="$("${root}/hack/envtest.sh")"
fi
# The reports that hold the baselines of each kind of judge (the property judge has its own seed and bound: none).
declare -A reports=([kill-integration]="${MUTANT_BASELINE_JSON:-}" [kill]="${MUTANT_SHORT_JSON:-}")
for kind in "${!reports[@]}"; do
  for report in ${reports[${kind}]}; do
    [ -f "${report}" ] || { echo "safety-mutants: the baseline report ${report} does not exist" >&2; exit 1; }
  done
done
binaries="${MUTANT_TEST_BINARIES:-}"
if [ -n "${binaries}" ] && [ ! -f "${binaries}/index" ]; then
  echo "safety-mutants: ${binaries} holds no kept test binaries (no index)" >&2
  exit 1
fi
[ -z "${binaries}" ] || binaries="$(cd "${binaries}" && pwd)" # the judges run them in the trees' package directories
if [ -n "${reports[kill-integration]}${reports[kill]}${binaries}" ]; then
  if [ -n "$(git -C "${root}" status --porcelain)" ]; then
    echo "safety-mutants: uncommitted changes, so the baseline reports and kept binaries are not of HEAD: every baseline runs here, every judge is built"
    reports=([kill-integration]="" [kill]="")
    binaries=""
  else
    # The report reader of this repository (also when MUTANTS_ROOT is another one), built outside the trees.
    (cd "$(dirname "$0")/.." && GOWORK='' GOFLAGS=-buildvcs=false go build -o "${work}/testreport" ./test/cmd/testreport)
  fi
fi

# run_binary <kind> <binary> <test flags...>: a kept test binary, in the current directory (the package's), run the
# way go_test runs the package's tests.
run_binary() {
  local kind="$1" bin="$2"
  shift 2
  if [ "${kind}" = kill-integration ]; then
    KUBEBUILDER_ASSETS="${assets}" flock "${work}/integration.lock" "${bin}" -test.count=1 -test.v -test.paniconexit0 -test.timeout 30m "$@"
  else
    GODEBUG="${unit_godebug}" "${bin}" -test.short -test.count=1 -test.v -test.paniconexit0 "$@"
  fi
}

# kept_binary <patch> <package>: the package's kept test binary when the patch changes no Go source, module file or
# file embedded into that binary (so the binary of the mutated tree would be the same); nothing otherwise.
kept_binary() {
  [ -n "${binaries}" ] || return 0
  local files importpath embedded f
  files="$(sed -n 's|^diff --git a/\(.*\) b/.*|\1|p' "$1")"
  if grep -Eq '(^|/)(go\.(mod|sum|work|work\.sum)|[^/]*\.go)$' <<<"${files}"; then
    return 0
  fi
  importpath="$(cd "${root}" && go list "$2")"
  embedded="$(cd "${root}" && go list -deps -test -f '{{$d := .Dir}}{{range .EmbedFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}' "$2")"
  while IFS= read -r f; do
    if grep -qxF "${root}/${f}" <<<"${embedded}"; then
      return 0
    fi
  done <<<"${files}"
  awk -F'\t' -v p="${importpath}" -v d="${binaries}" '$1 == p {print d "/" $2}' "${binaries}/index"
}

# run_named <tree> <kind> <package> <regexp> [binary]: the named tests of a package in a tree, with the output of go
# test -v; with a kept binary, that binary in the package's directory of the tree.
run_named() {
  local tree="$1" kind="$2" pkg="$3" run="$4" bin="${5:-}"
  if [ "${kind}" = property ]; then
    (cd "${tree}" && GODEBUG="${unit_godebug}" go test -count=1 -vet=off -v ./core/usecase -run "${run}" \
      -safety.seed="${seed}" -safety.sequences="${max}" 2>&1)
  elif [ -n "${bin}" ]; then
    (cd "${tree}/${pkg}" && run_binary "${kind}" "${bin}" -test.run "${run}" 2>&1)
  else
    (cd "${tree}" && go_test "${kind}" "${pkg}" -run "${run}" 2>&1)
  fi
}

# Baseline: every named test runs once on the unmutated tree, grouped by package and kind (one build each; up to
# ${jobs} groups at a time in the first slot's tree, which no mutant touches before the baseline is done); a mutant
# whose test did not pass here is not judged. A test that the reports of its kind (MUTANT_BASELINE_JSON,
# MUTANT_SHORT_JSON) hold takes its verdict from there instead (written like go test -v's, marked "from the report").
mkdir -p "${work}/baseline" "${work}/verdicts"
groups=()
while IFS= read -r group; do groups+=("${group}"); done < <(printf '%s\n' "${judged[@]}" | awk '{print $2 "|" $3}' | sort -u)
for g in "${!groups[@]}"; do
  kind="${groups[$g]%%|*}" pkg="${groups[$g]#*|}"
  : > "${work}/baseline/${g}"
  regexps=()
  while IFS= read -r re; do regexps+=("${re}"); done < <(printf '%s\n' "${judged[@]}" | awk -v k="${kind}" -v p="${pkg}" '$2 == k && $3 == p {print $4}' | sort -u)
  torun=("${regexps[@]}")
  kind_reports=()
  read -ra kind_reports <<<"${reports[${kind}]:-}"
  if [ "${#kind_reports[@]}" -gt 0 ]; then
    importpath="$(cd "${root}" && go list "${pkg}")"
    torun=() from=()
    # One read of the reports per package: the verdicts of every test any regexp names, then each regexp's share
    # (matched as baseline_verdicts matches them).
    all="$("${work}/testreport" verdicts -pkg "${importpath}" -run "$(printf '(%s)\n' "${regexps[@]}" | paste -sd'|')" "${kind_reports[@]}")"
    for re in "${regexps[@]}"; do
      verdicts="$(awk -v re="${re}" '$2 ~ re' <<<"${all}")"
      if [ -n "${verdicts}" ]; then
        sed 's/^\([A-Z]*\) \(.*\)$/--- \1: \2 (from the report)/' <<<"${verdicts}" >> "${work}/baseline/${g}"
        from+=("$(paste -sd' ' <<<"${verdicts}")")
      else
        torun+=("${re}")
      fi
    done
    echo "safety-mutants: baselines of ${kind} ${pkg} from the report: ${#from[@]} (${from[*]:-none}); run here (not in the report): ${#torun[@]}${torun[*]:+ (${torun[*]})}"
  fi
  [ "${#torun[@]}" -gt 0 ] || continue
  union="$(printf '(%s)\n' "${torun[@]}" | paste -sd'|')"
  while [ "$(jobs -rp | wc -l)" -ge "${jobs}" ]; do wait -n || true; done
  { run_named "${work}/tree-1" "${kind}" "${pkg}" "${union}" >> "${work}/baseline/${g}" || true; } &
done
wait
declare -A baseline=()
for g in "${!groups[@]}"; do baseline["${groups[$g]}"]="$(cat "${work}/baseline/${g}")"; done

# baseline_verdicts <kind> <package> <regexp>: "PASS|FAIL|SKIP <test>" of each top-level test the regexp names.
baseline_verdicts() {
  sed -n 's/^--- \(PASS\|FAIL\|SKIP\): \([^ ]*\) .*/\1 \2/p' <<<"${baseline["$1|$2"]}" | awk -v re="$3" '$2 ~ re'
}

# judge <entry> <tree>: prints the verdict of one mutant, judged in tree.
judge() {
  local name kind pkg run tree="$2"
  read -r name kind pkg run <<<"$1"
  local patch="${root}/hack/safety-mutants/${name}.patch"
  git -C "${tree}" checkout -q -- .
  git -C "${tree}" clean -qfd
  if ! git -C "${tree}" apply "${patch}"; then
    printf 'STALE       %-48s does not apply\n' "${name}"
    return
  fi
  local verdicts
  verdicts="$(baseline_verdicts "${kind}" "${pkg}" "${run}")"
  if [ -z "${verdicts}" ] || grep -q '^\(FAIL\|SKIP\) ' <<<"${verdicts}"; then
    printf 'NOT JUDGED  %-48s %s -run %s did not pass on the unmutated tree: %s\n' "${name}" "${pkg}" "${run}" \
      "$(paste -sd' ' <<<"${verdicts:-no test of that name ran}")"
    return
  fi
  local start out rc secs failed why bin="" via=""
  if [ "${kind}" != property ]; then
    bin="$(kept_binary "${patch}" "${pkg}")"
  fi
  [ -z "${bin}" ] || via=" (kept test binary)"
  start=$(date +%s)
  set +e
  out="$(run_named "${tree}" "${kind}" "${pkg}" "${run}" "${bin}")"
  rc=$?
  set -e
  secs=$(( $(date +%s) - start ))
  # No pipeline below may end early (head, grep without a match): under pipefail that would end the whole judge.
  failed="$(sed -n 's/^--- FAIL: \([^ ]*\) .*/\1/p' <<<"${out}" | awk -v re="${run}" '$0 ~ re && !n++')"
  if grep -Eq '\[build failed\]|\[setup failed\]|^# ' <<<"${out}"; then
    printf 'NOT JUDGED  %-48s %s does not compile with the mutant\n' "${name}" "${pkg}"
    awk '/^# |\.go:[0-9]+/ && n++ < 4 {print "            " $0}' <<<"${out}"
  elif [ "${rc}" -ne 0 ] && [ -n "${failed}" ] && { [ "${kind}" != property ] || grep -q "safety invariant broken" <<<"${out}"; }; then
    # The failure's first message: the property's invariant, a test file's line, or (a contract suite) any Go file's.
    why="$(awk '/safety invariant broken|_test\.go:[0-9]+:/ && !n++' <<<"${out}")"
    why="${why:-$(awk '/\.go:[0-9]+:/ && !n++' <<<"${out}")}"
    why="$(sed 's/^ *//' <<<"${why}" | cut -c1-160)"
    printf 'found       %-48s %ss%s: %s: %s\n' "${name}" "${secs}" "${via}" "${failed}" "${why}"
  elif [ "${rc}" -ne 0 ]; then
    printf 'NOT JUDGED  %-48s %s failed, but not in a test named %s (%ss%s)\n' "${name}" "${pkg}" "${run}" "${secs}" "${via}"
    awk '/^(--- FAIL|panic:|FAIL|\*\*\* Test killed)/ && n++ < 4 {print "            " $0}' <<<"${out}"
  else
    printf 'SURVIVED    %-48s %s -run %s passed (%ss%s)\n' "${name}" "${pkg}" "${run}" "${secs}" "${via}"
  fi
}

# The mutants, ${jobs} at a time, each in a tree of its own; verdicts are printed in name order as soon as every
# earlier one is known. The integration judges run one at a time anyway (go_test's lock), in their own tree: they are
# started first and one after the other, so no slot waits on the lock while a unit judge could run in it. A verdict
# that is not "found" (or no verdict at all) makes the exit code 1.
free=()
for slot in $(seq 1 "${jobs}"); do free+=("${slot}"); done
int_queue=() unit_queue=()
for i in "${!judged[@]}"; do
  read -r _ kind _ <<<"${judged[$i]}"
  if [ "${kind}" = kill-integration ]; then int_queue+=("${i}"); else unit_queue+=("${i}"); fi
done
declare -A slot_of=()
int_pid="" shown=0 unjudged=0
while [ "${shown}" -lt "${#judged[@]}" ]; do
  while [ "${#free[@]}" -gt 0 ]; do
    if [ -z "${int_pid}" ] && [ "${#int_queue[@]}" -gt 0 ]; then
      i="${int_queue[0]}" tree="${work}/tree-int"
      int_queue=("${int_queue[@]:1}")
    elif [ "${#unit_queue[@]}" -gt 0 ]; then
      i="${unit_queue[0]}" tree="${work}/tree-${free[0]}"
      unit_queue=("${unit_queue[@]:1}")
    else
      break
    fi
    slot="${free[0]}"
    free=("${free[@]:1}")
    { judge "${judged[$i]}" "${tree}" > "${work}/verdicts/${i}.part" 2>&1 || true
      mv "${work}/verdicts/${i}.part" "${work}/verdicts/${i}"; } &
    slot_of[$!]="${slot}"
    [ "${tree}" != "${work}/tree-int" ] || int_pid=$!
  done
  if [ "${#slot_of[@]}" -gt 0 ]; then
    pid=""
    wait -n -p pid "${!slot_of[@]}" || true
    if [ -n "${pid}" ]; then
      free+=("${slot_of[$pid]}")
      unset "slot_of[$pid]"
      [ "${pid}" != "${int_pid}" ] || int_pid=""
    fi
  fi
  if [ "${#slot_of[@]}" -eq 0 ] && [ "${#int_queue[@]}" -eq 0 ] && [ "${#unit_queue[@]}" -eq 0 ]; then
    # Nothing runs any more: a mutant without a verdict file (its job died) gets the empty verdict, not a hang.
    for i in "${!judged[@]}"; do [ -f "${work}/verdicts/${i}" ] || touch "${work}/verdicts/${i}"; done
  fi
  while [ "${shown}" -lt "${#judged[@]}" ] && [ -f "${work}/verdicts/${shown}" ]; do
    verdict="$(cat "${work}/verdicts/${shown}")"
    printf '%s\n' "${verdict:-NOT JUDGED  ${judged[$shown]%% *} the judge printed no verdict}"
    grep -q '^found ' <<<"${verdict}" || unjudged=$((unjudged + 1))
    shown=$((shown + 1))
  done
done
exit $(( unjudged > 0 ))
