#!/usr/bin/env bash
# Installs and removes the operator without OLM, for `make deploy`, `make undeploy` and `make uninstall`, against the
# current kubeconfig context (KCP). It renders config/default through a throw-away overlay instead of editing
# config/manager/kustomization.yaml (as `kustomize edit set image` would), so the work tree stays clean.
#
#   hack/deploy.sh deploy IMG   apply config/default with the manager image IMG (server-side apply)
#   hack/deploy.sh undeploy     delete what deploy applied except the CRDs: Runtimes, GardenerClusters and their
#                               clusters stay (deleting a CRD deletes every object of it)
#   hack/deploy.sh uninstall    delete the CRDs; refuses while Runtimes or GardenerClusters exist unless FORCE=true
#   hack/deploy.sh render IMG   print what deploy would apply (RENDER_MODE=undeploy: what undeploy would delete)
# Env: KUBECTL (default kubectl), FORCE.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
kubectl="${KUBECTL:-kubectl}"
# Our CRDs by name, from the generated files (<group>_<plural>.yaml), so a new kind is never forgotten here.
crds=()
for f in "${root}"/config/crd/bases/*.yaml; do
  b="$(basename "${f}" .yaml)"
  crds+=("${b#*_}.${b%%_*}")
done

# overlay MODE [IMG] writes a kustomization over config/default into a temporary directory inside the repository
# (kustomize accepts only relative bases; .gitignore ignores config/.deploy-*) and prints the directory.
overlay() {
  local mode="$1" img="${2:-}" dir
  dir="$(mktemp -d "${root}/config/.deploy-XXXXXX")"
  {
    echo "resources:"
    echo "- ../default"
    echo "- ../admission" # admission policies: not part of config/default, which the OLM bundle is rendered from
    echo "patches:"
    if [ "${mode}" = deploy ]; then
      cat <<EOF
- target:
    kind: Deployment
    name: kim-controller-manager
  patch: |-
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: kim-controller-manager
    spec:
      template:
        spec:
          containers:
          - name: manager
            image: ${img}
EOF
    else
      for crd in "${crds[@]}"; do
        cat <<EOF
- patch: |-
    \$patch: delete
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata:
      name: ${crd}
EOF
      done
    fi
  } >"${dir}/kustomization.yaml"
  echo "${dir}"
}

render() {
  overlay_dir="$(overlay "$@")"
  trap 'rm -rf "${overlay_dir}"' EXIT
  "${kubectl}" kustomize "${overlay_dir}"
}

case "${1:-}" in
  deploy)
    [ -n "${2:-}" ] || { echo "deploy: IMG is required" >&2; exit 2; }
    render deploy "$2" | "${kubectl}" apply --server-side --field-manager=kim-deploy -f -
    # Objects of our kinds can be created as soon as deploy returns (KEB, a test, the next make target).
    "${kubectl}" wait --for=condition=Established --timeout=60s "${crds[@]/#/crd/}"
    ;;
  undeploy)
    render undeploy | "${kubectl}" delete --ignore-not-found -f -
    ;;
  uninstall)
    n="$("${kubectl}" get "$(IFS=,; echo "${crds[*]}")" -A --no-headers --ignore-not-found 2>/dev/null | wc -l)"
    if [ "${n}" -gt 0 ] && [ "${FORCE:-}" != true ]; then
      echo "uninstall: ${n} Runtimes/GardenerClusters exist and would be deleted with the CRDs; run with FORCE=true to do it anyway" >&2
      exit 1
    fi
    "${kubectl}" delete --ignore-not-found -k "${root}/config/crd"
    ;;
  render)
    render "${RENDER_MODE:-deploy}" "${2:-}"
    ;;
  *)
    sed -n '2,13p' "$0" >&2
    exit 2
    ;;
esac
