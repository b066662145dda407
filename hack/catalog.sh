#!/usr/bin/env bash
# Writes a file-based catalog (FBC) with one bundle image for `make catalog-build`, as operator-sdk projects do with
# opm, and the catalog.Dockerfile that serves it. The bundle image must be pushed already (opm renders it from the
# registry). Each catalog image carries one version; `skipRange: <VERSION` lets OLM upgrade to it from any older
# version installed from an earlier catalog image.
#
#   hack/catalog.sh DIR PACKAGE VERSION BUNDLE_IMG CHANNELS DEFAULT_CHANNEL
# Env: OPM (default opm); CATALOG_BASE_IMG (required): the opm image the catalog image is built on (and its builder
# stage), pinned by digest, e.g. quay.io/operator-framework/opm:v1.56.0@sha256:<64 hex digits>. A tag alone is
# refused: what a tag names can change between two builds of the same release (docs/release.md says where the
# release's pin comes from).
set -euo pipefail
[ $# -eq 6 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
dir="$1" package="$2" version="$3" bundle_img="$4" channels="$5" default_channel="$6"
opm="${OPM:-opm}"
base_img="${CATALOG_BASE_IMG:-}"
digest_pinned='^[^@[:space:]]+@sha256:[0-9a-f]{64}$'

if ! [[ "${base_img}" =~ ${digest_pinned} ]]; then
  echo "catalog: CATALOG_BASE_IMG='${base_img}' is not an image pinned by digest (<image>@sha256:<64 hex digits>); refusing to build the catalog on a moving tag" >&2
  exit 2
fi
bundle="${package}.v${version}" # the CSV name, which is the bundle's name in the catalog

case ",${channels}," in
  *",${default_channel},"*) ;;
  *) echo "catalog: default channel ${default_channel} is not one of the channels ${channels}" >&2; exit 2 ;;
esac

rm -rf "${dir}" "${dir}.Dockerfile"
mkdir -p "${dir}/${package}"
index="${dir}/${package}/index.yaml"
"${opm}" init "${package}" --default-channel="${default_channel}" --output=yaml >"${index}"
echo "---" >>"${index}"
"${opm}" render "${bundle_img}" --output=yaml >>"${index}"
IFS=, read -r -a channel_list <<<"${channels}"
for channel in "${channel_list[@]}"; do
  cat >>"${index}" <<YAML
---
schema: olm.channel
package: ${package}
name: ${channel}
entries:
- name: ${bundle}
  skipRange: '<${version}'
YAML
done
"${opm}" validate "${dir}"
"${opm}" generate dockerfile "${dir}" --base-image="${base_img}" --builder-image="${base_img}"
# Whatever this opm version writes, every stage of the image must be the pinned one.
while read -r _ image _; do
  if [ "${image}" != "${base_img}" ]; then
    echo "catalog: ${dir}.Dockerfile builds FROM ${image}, not the pinned ${base_img}" >&2
    exit 1
  fi
done < <(grep -iE '^FROM[[:space:]]' "${dir}.Dockerfile" || { echo "FROM (none)"; })
echo "catalog: ${dir}/ and ${dir}.Dockerfile with ${bundle} (${bundle_img}) in channel(s) ${channels}" >&2
