#!/usr/bin/env bash
# Runs a command in the background, at the lowest CPU priority, for as long as a given process (the make that started
# it) runs. `make test` starts the builds of the tools its later stages need (goreleaser, govulncheck, promtool, the
# envtest API servers, OLM) this way: on a fresh machine they are compiled on the CPU the earlier stages leave idle
# (downloads, links, tests waiting for API servers) instead of one after another on the critical path. Every such
# build holds a lock (the Makefile's tool rules, hack/envtest.sh, hack/olm.sh, hack/promtool.sh), so a stage that
# reaches a tool still being built waits for that build rather than compiling it a second time; on a warm machine
# each is a cache hit and the command ends in seconds.
#
# Usage: hack/ahead.sh PID LOG COMMAND...
#   PID: when this process ends (make failed or was interrupted), the command and everything it started are stopped.
#   LOG: the command's output (it is not interleaved with the foreground's). LOG.pgid holds the builds' process group
#        while they run.
# Usage: hack/ahead.sh --boost-while COMMAND...
#   A stage that waits for a build ahead (a lock) waits through this: while COMMAND (the wait) runs, the builds ahead
#   run at normal priority, as the stage would have; when the last such wait ends they go back to the lowest. At the
#   lowest priority throughout, they got only what the foreground left: in a cold run of 3ec10c1 OLM's build, started
#   at 18 minutes, ran beside test-all and the mutants until 45 minutes, and test-olm waited for it with the cores
#   half idle. Raised for good after the first wait (f972ae3), they competed with the foreground as equals from the
#   first minutes, were all done by 20 minutes, and nothing filled what test-all and the mutants left idle (a cold run
#   of b3a56a7: 176 core-seconds idle). A wait inside the builds' own session (one chain ahead waiting for the
#   foreground's compile of the dependencies) raises nothing: what it waits for already runs at normal priority.
#   AHEAD_PGID names LOG.pgid (the Makefile exports it); without it, or when the builds have ended, COMMAND just runs.
#   Changing a priority needs CAP_SYS_NICE (root); without it COMMAND just runs. Exits with COMMAND's status.
set -euo pipefail
# priority NICE PGID: the builds' process group and their session (where the kernel groups sessions) at NICE.
priority() {
  renice -n "$1" -g "$2" >/dev/null 2>&1 || return 1
  if [ -w "/proc/$2/autogroup" ]; then echo "$1" >"/proc/$2/autogroup" 2>/dev/null || true; fi
}
if [ "${1:-}" = --boost-while ]; then
  shift
  [ "$#" -ge 1 ] || { echo "usage: hack/ahead.sh --boost-while COMMAND..." >&2; exit 2; }
  pgidfile="${AHEAD_PGID:-/nonexistent}"
  pgid="$(cat "${pgidfile}" 2>/dev/null || true)"
  # Only the session hack/ahead.sh started (its $0 is "ahead"), not whatever reuses a stale number; and not from
  # inside it (field 6 of /proc/PID/stat is the session; the command name before it has no spaces here).
  if [ -z "${pgid}" ] || ! tr '\0' ' ' <"/proc/${pgid}/cmdline" 2>/dev/null | grep -q ' ahead ' ||
    [ "$(cut -d' ' -f6 "/proc/$$/stat")" = "${pgid}" ]; then
    exec "$@"
  fi
  # Waits may overlap (the mutants' stage runs several commands at once): each registers under a lock, and the last
  # to end lowers the priority again. A waiter killed before it ends leaves a file naming a dead process, ignored.
  waiters="${pgidfile}.waiting"
  mkdir -p "${waiters}"
  {
    flock 8
    touch "${waiters}/$$"
    priority 0 "${pgid}" && echo "ahead: a stage waits for a build ahead: the builds ahead run at normal priority while it waits" >&2
  } 8>"${pgidfile}.lock"
  status=0
  "$@" || status=$?
  {
    flock 8
    rm -f "${waiters}/$$"
    others=0
    for w in "${waiters}"/*; do
      [ -e "${w}" ] || continue
      if kill -0 "${w##*/}" 2>/dev/null; then others=1; else rm -f "${w}"; fi
    done
    if [ "${others}" = 0 ] && priority 19 "${pgid}"; then
      echo "ahead: the wait ended: the builds ahead are back at the lowest priority" >&2
    fi
  } 8>"${pgidfile}.lock"
  exit "${status}"
fi
[ "$#" -ge 3 ] || { echo "usage: hack/ahead.sh PID LOG COMMAND..." >&2; exit 2; }
parent="$1" log="$2"
shift 2
mkdir -p "$(dirname "${log}")"
# A session of its own: its process group is the command and every process the command starts (go, compile, link),
# stopped as one. The watcher polls: a parent that is not ours cannot be waited for. Where the kernel groups the
# scheduling of each session (sched_autogroup_enabled=1, as on this machine and CI's), a process's nice value ranks it
# only within its session, and a new session competed with make's as an equal: the session itself is niced too.
# shellcheck disable=SC2016 # expanded by the inner shell
setsid bash -c '
  parent="$1" pgidfile="$2"
  shift 2
  if [ -w /proc/self/autogroup ]; then echo 19 >/proc/self/autogroup || true; fi
  echo "$$" >"${pgidfile}"
  trap "rm -f \"${pgidfile}\"" EXIT
  nice -n 19 "$@" &
  job=$!
  while kill -0 "${parent}" 2>/dev/null; do
    if ! kill -0 "${job}" 2>/dev/null; then
      wait "${job}" && echo "ahead: done" || echo "ahead: failed (exit $?); each stage builds what it needs itself"
      exit 0
    fi
    sleep 1
  done
  echo "ahead: process ${parent} ended; stopping the builds"
  rm -f "${pgidfile}"
  kill -TERM -- "-$$"
' ahead "${parent}" "${log}.pgid" "$@" >"${log}" 2>&1 </dev/null &
echo "ahead: building in the background, at the lowest CPU priority: $* (output: ${log})" >&2
