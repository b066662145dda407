package gardener

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/shootstate"
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
func (c *Shoots) recordMarks(ctx context.Context, a ports.ShootApply, current, desired *gardencorev1beta1.Shoot) (shootstate.Shoot, error) {
	name := current.Name
	raw, err := marksPatch(current, desired)
	if err != nil {
		return shootstate.Shoot{}, fmt.Errorf("record marks on shoot %s: %w", name, err)
	}
	s := current.DeepCopy()
	err = c.Client.Patch(ctx, s, client.RawPatch(types.MergePatchType, raw), client.FieldOwner(FieldManager))
	if err := c.record("patch", classify("record marks on shoot "+name, err)); err != nil {
		return shootstate.Shoot{}, err
	}
	if s, err = c.removeStalePools(ctx, s, a.Spec); err != nil {
		return shootstate.Shoot{}, err
	}
	if err := c.ownAuthConfigMap(ctx, a.Spec, s); err != nil {
		return shootstate.Shoot{}, err
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

// TakenOver reports whether this operator ever wrote its spec hash on the shoot (a full apply or the marks of an
// adopted shoot already in sync). The previous infrastructure manager writes the runtime-generation annotation and
// applies with the same field manager, so neither tells the two apart; the spec hash is this operator's alone.
func TakenOver(s *gardencorev1beta1.Shoot) bool {
	_, ok := s.Annotations[AnnotationSpecHash]
	return ok
}

// holdAdopted refuses (ports.ErrAdoptionReviewRequired) an apply of a with a.HoldAdoptedChanges that would change
// current, a shoot this operator adopted and never took over, in its spec or its authentication ConfigMap.
// Labels and annotations the shoot lacks are no change to the cluster and do not hold the apply.
func (c *Shoots) holdAdopted(ctx context.Context, a ports.ShootApply, current *gardencorev1beta1.Shoot) error {
	if !a.HoldAdoptedChanges || TakenOver(current) {
		return nil
	}
	var liveAuth map[string]string
	if api := current.Spec.Kubernetes.KubeAPIServer; api != nil && api.StructuredAuthentication != nil {
		// Read live: the cache holds only the operator's own ConfigMaps, and an adopted shoot's is not yet.
		cm := &corev1.ConfigMap{}
		err := c.Live.Get(ctx, client.ObjectKey{Namespace: current.Namespace, Name: api.StructuredAuthentication.ConfigMapName}, cm)
		switch {
		case err == nil:
			liveAuth = cm.Data
			if liveAuth == nil {
				liveAuth = map[string]string{}
			}
		case !apierrors.IsNotFound(err):
			return c.record("get", classify("read the authentication ConfigMap of adopted shoot "+current.Name, err))
		}
	}
	diffs, err := AdoptionDifferences(current, liveAuth, a)
	if err != nil {
		return fmt.Errorf("apply shoot %s: %w: %w", current.Name, ports.ErrShootRejected, err)
	}
	var changes []string
	for _, d := range diffs {
		if d.Have == nil && (strings.HasPrefix(d.Path, ".metadata.labels.") || strings.HasPrefix(d.Path, ".metadata.annotations.")) {
			continue
		}
		changes = append(changes, d.Path)
	}
	if len(changes) == 0 {
		return nil
	}
	shown := changes[:min(3, len(changes))]
	return fmt.Errorf("apply shoot %s: the first apply after adopting it would change %d value(s) (%s%s): %w", current.Name,
		len(changes), strings.Join(shown, ", "), map[bool]string{true: ", ...", false: ""}[len(changes) > len(shown)], ports.ErrAdoptionReviewRequired)
}
