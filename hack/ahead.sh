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
#   LOG: the command's output (it is not interleaved with the foreground's).
set -euo pipefail
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
  parent="$1"
  shift
  if [ -w /proc/self/autogroup ]; then echo 19 >/proc/self/autogroup || true; fi
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
  kill -TERM -- "-$$"
' ahead "${parent}" "$@" >"${log}" 2>&1 </dev/null &
echo "ahead: building in the background, at the lowest CPU priority: $* (output: ${log})" >&2
