package gardener

import (
	"context"
	"encoding/json"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/cluster"
	"github.com/kyma-project/kim/core/ports"
)

// appliedByOperator reports whether the operator ever server-side applied the shoot (it then owns the fields it
// applied).
func appliedByOperator(s *gardencorev1beta1.Shoot) bool {
	for _, m := range s.ManagedFields {
		if m.Manager == FieldManager && m.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}

// adoptedInSync reports whether current is a shoot the operator adopted and never applied whose spec already holds
// every value of desired (the same pools, every field the apply sets with the same value). Such a shoot needs only
// the operator's marks: a server-side apply would store the same values, but Gardener compares provider configs
// byte by byte, and the apply re-serialises them, so it would count as a spec change (a new generation and a
// reconciliation of the cluster) although nothing changed.
func adoptedInSync(current, desired *gardencorev1beta1.Shoot) (bool, error) {
	if appliedByOperator(current) || len(current.Spec.Provider.Workers) != len(desired.Spec.Provider.Workers) {
		return false, nil
	}
	want, err := toApplyObject(desired)
	if err != nil {
		return false, err
	}
	have, err := toJSONMap(current)
	if err != nil {
		return false, err
	}
	return len(diffValues(".spec", want.Object["spec"], have["spec"])) == 0, nil
}

// recordMarks writes the labels and annotations of desired (the operator's marks and the generated ones) with a
// merge patch pinned to current's UID and resourceVersion; the spec is not sent.
func (c *Shoots) recordMarks(ctx context.Context, a ports.ShootApply, current, desired *gardencorev1beta1.Shoot) (cluster.Shoot, error) {
	name := current.Name
	raw, err := marksPatch(current, desired)
	if err != nil {
		return cluster.Shoot{}, fmt.Errorf("record marks on shoot %s: %w", name, err)
	}
	s := current.DeepCopy()
	err = c.Client.Patch(ctx, s, client.RawPatch(types.MergePatchType, raw), client.FieldOwner(FieldManager))
	if err := c.record("patch", classify("record marks on shoot "+name, err)); err != nil {
		return cluster.Shoot{}, err
	}
	if s, err = c.removeStalePools(ctx, s, a.Spec); err != nil {
		return cluster.Shoot{}, err
	}
	if err := c.ownAuthConfigMap(ctx, a.Spec, s); err != nil {
		return cluster.Shoot{}, err
	}
	return Observe(s), nil
}

// marksPatch is the merge patch of desired's labels and annotations, with current's UID and resourceVersion as
// preconditions (a shoot changed or re-created since is not written).
func marksPatch(current, desired *gardencorev1beta1.Shoot) ([]byte, error) {
	return json.Marshal(map[string]any{"metadata": map[string]any{
		"uid": current.UID, "resourceVersion": current.ResourceVersion,
		"labels": desired.Labels, "annotations": desired.Annotations,
	}})
}
