package gardener

import (
	"context"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// FieldManagerOwnerReference applies the owner reference of the structured-authentication ConfigMap. It is a
// manager of its own so that applying the ConfigMap's content (FieldManager, before the shoot exists) and its
// owner reference (after the shoot exists) never remove each other's fields.
const FieldManagerOwnerReference = FieldManager + "-owner-reference"

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
	ref := shootOwnerReference(s)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": spec.Authentication.ConfigMapName, "namespace": c.Namespace,
			"ownerReferences": []any{map[string]any{"apiVersion": ref.APIVersion, "kind": ref.Kind, "name": ref.Name, "uid": string(ref.UID)}}},
	}}
	err = c.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(FieldManagerOwnerReference), client.ForceOwnership)
	return c.record("apply", classify(fmt.Sprintf("own authentication ConfigMap %s by shoot %s", spec.Authentication.ConfigMapName, s.Name), err))
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
