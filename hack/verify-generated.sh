#!/usr/bin/env bash
# Fails when a generated file (deepcopy, CRDs, RBAC, bundle) differs from what the generators produce from the
# current sources. It regenerates into a scratch copy of the tree, so it never touches the work tree.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "${scratch}"' EXIT

# Copy the sources (tracked and untracked-but-not-ignored files), not build output.
(cd "${root}" && git ls-files -co --exclude-standard -z | xargs -0 -I{} cp --parents {} "${scratch}/" 2>/dev/null || true)
# The generators already built (controller-gen), not the test binaries or reports that may sit beside them.
bin="${BIN:-${root}/bin}"
mkdir -p "${scratch}/bin"
if [ -d "${bin}" ]; then find "${bin}" -maxdepth 1 -type f -perm -u+x -exec cp -a {} "${scratch}/bin/" \;; fi

targets="generate manifests"
if grep -q '^bundle:' "${root}/Makefile"; then targets="${targets} bundle"; fi
make -s -C "${scratch}" BIN="${scratch}/bin" ${targets} >/dev/null

status=0
for dir in operator/api config bundle; do
  [ -d "${root}/${dir}" ] || continue
  if ! diff -r -u "${root}/${dir}" "${scratch}/${dir}" >"${scratch}/diff.txt"; then
    echo "verify-generated: ${dir}/ is stale; run 'make generate manifests bundle' and commit the result:" >&2
    head -50 "${scratch}/diff.txt" >&2
    status=1
  fi
done
[ "${status}" -eq 0 ] && echo "verify-generated: generated files are up to date"
exit "${status}"
