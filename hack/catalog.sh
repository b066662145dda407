#!/usr/bin/env bash
# Writes a file-based catalog (FBC) with one bundle image for `make catalog-build`, as operator-sdk projects do with
# opm, and the catalog.Dockerfile that serves it. The bundle image must be pushed already (opm renders it from the
# registry). Each catalog image carries one version; `skipRange: <VERSION` lets OLM upgrade to it from any older
# version installed from an earlier catalog image.
#
#   hack/catalog.sh DIR PACKAGE VERSION BUNDLE_IMG CHANNELS DEFAULT_CHANNEL
# Env: OPM (default opm).
set -euo pipefail
[ $# -eq 6 ] || { sed -n '2,8p' "$0" >&2; exit 2; }
dir="$1" package="$2" version="$3" bundle_img="$4" channels="$5" default_channel="$6"
opm="${OPM:-opm}"
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
"${opm}" generate dockerfile "${dir}"
echo "catalog: ${dir}/ and ${dir}.Dockerfile with ${bundle} (${bundle_img}) in channel(s) ${channels}" >&2
