package gardener

import (
	"context"
	"encoding/json"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// ownAuthConfigMap makes the shoot the owner of its structured-authentication ConfigMap, so the garden's garbage
// collector deletes the ConfigMap with the shoot (garden-in-a-box runs no garbage collector: there it stays). The
// ConfigMap must exist before the shoot (the gardener-apiserver checks the reference), so the owner, whose UID is
// known only once the shoot is stored, is recorded right after. A ConfigMap the previous infrastructure manager
// created under its name is adopted the same way. No write when the reference is already there.
func (c *Shoots) ownAuthConfigMap(ctx context.Context, spec shoot.Spec, s *gardencorev1beta1.Shoot) error {
	if spec.Authentication == nil || s == nil || s.UID == "" {
		return nil
	}
	cm := &corev1.ConfigMap{}
	err := c.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: spec.Authentication.ConfigMapName}, cm)
	if err == nil && ownedByShoot(cm.OwnerReferences, s) {
		return nil
	}
	// A strategic merge patch adds the reference next to any other (ownerReferences merge by uid); it is owned by
	// an Update entry of the field manager, so the content applies of the ConfigMap never remove it.
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": []metav1.OwnerReference{shootOwnerReference(s)}}})
	if err != nil {
		return fmt.Errorf("encode owner reference: %w", err)
	}
	target := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: spec.Authentication.ConfigMapName}}
	err = c.Client.Patch(ctx, target, client.RawPatch(types.StrategicMergePatchType, patch), client.FieldOwner(FieldManager))
	return c.record("patch", classify(fmt.Sprintf("own authentication ConfigMap %s by shoot %s", spec.Authentication.ConfigMapName, s.Name), err))
}

func shootOwnerReference(s *gardencorev1beta1.Shoot) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: gardencorev1beta1.SchemeGroupVersion.String(), Kind: "Shoot", Name: s.Name, UID: s.UID}
}

// ownedByShoot reports whether refs name the shoot (by UID: a re-created shoot of the same name is another owner).
func ownedByShoot(refs []metav1.OwnerReference, s *gardencorev1beta1.Shoot) bool {
	for _, r := range refs {
		if r.Kind == "Shoot" && r.UID == s.UID && s.UID != "" {
			return true
		}
	}
	return false
}
