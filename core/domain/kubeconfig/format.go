package kubeconfig

import (
	"maps"
	"time"

	"github.com/kyma-project/kim/core/domain/wire"
)

// Labels and annotations of the kubeconfig Secret. KEB and lifecycle-manager find Secrets by these; the operator's
// cache selects Secrets by wire.LabelManagedBy=wire.ManagedByValue (core/domain/wire).
const (
	// LabelClusterName is the name of the GardenerCluster (the runtime ID) that owns the Secret.
	LabelClusterName = "operator.kyma-project.io/cluster-name"

	// AnnotationLastSync records when the kubeconfig in the Secret was issued (RFC3339, UTC).
	AnnotationLastSync = "operator.kyma-project.io/last-sync"
	// AnnotationExpiresAt records when the kubeconfig in the Secret expires, as reported by Gardener (RFC3339, UTC).
	AnnotationExpiresAt = "operator.kyma-project.io/kubeconfig-expires-at"
	// AnnotationOwner records the owning GardenerCluster as <namespace>/<name>, so a Secret left behind by a deleted
	// GardenerCluster can be traced to it even when it lives in another namespace.
	AnnotationOwner = "operator.kyma-project.io/gardener-cluster"
	// AnnotationShootName and AnnotationShootUID record the shoot the kubeconfig was issued for.
	AnnotationShootName = "operator.kyma-project.io/shoot-name"
	AnnotationShootUID  = "operator.kyma-project.io/shoot-uid"
	// LabelRuntimeID is the runtime-id label KEB puts on everything of a runtime, its kubeconfig Secret included.
	LabelRuntimeID = "kyma-project.io/runtime-id"
)

// FormatTime renders a timestamp the way the Secret annotations record it: RFC3339 in UTC, seconds precision.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// parseTime reads a timestamp written by FormatTime (any RFC3339 offset is accepted).
func parseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// SecretLabels returns the labels of the kubeconfig Secret of cluster clusterName: every label of the owning
// GardenerCluster, plus the cluster-name label and the managed-by label. The managed-by label is always
// wire.ManagedByValue, also when the GardenerCluster carries another one (KEB-created clusters say lifecycle-manager):
// the operator only sees Secrets with its own value.
func SecretLabels(owner map[string]string, clusterName string) map[string]string {
	out := make(map[string]string, len(owner)+2)
	maps.Copy(out, owner)
	out[wire.LabelManagedBy] = wire.ManagedByValue
	out[LabelClusterName] = clusterName
	return out
}

// LabelsMissing reports the labels of want that have lacks (absent or with another value). Labels only in have
// are not reported: the operator never removes labels others may have set.
func LabelsMissing(have, want map[string]string) map[string]string {
	var missing map[string]string
	for k, v := range want {
		if cur, ok := have[k]; !ok || cur != v {
			if missing == nil {
				missing = map[string]string{}
			}
			missing[k] = v
		}
	}
	return missing
}

// SecretKey is the data key of the kubeconfig in its Secret (docs/keb-contract.md).
const SecretKey = "config"

// SecretNamePrefix starts the name of every runtime's admin kubeconfig Secret. Consumers (KEB, lifecycle-manager)
// trust a Secret of that name to be the runtime's admin kubeconfig, so only the runtime's GardenerCluster writes one.
const SecretNamePrefix = "kubeconfig-"

// SecretName is the name of the kubeconfig Secret of a runtime, kubeconfig-<runtimeID> (docs/keb-contract.md).
func SecretName(runtimeID string) string { return SecretNamePrefix + runtimeID }
