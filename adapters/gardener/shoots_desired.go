package gardener

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
)

// desired is the object to apply: the generated shoot plus, for an existing shoot, the parts the update rules
// compute from the current state (merged provider configs, kept immutable fields, pools with their versions).
func (c *Shoots) desired(a ports.ShootApply, current *gardencorev1beta1.Shoot) (*gardencorev1beta1.Shoot, error) {
	d, err := translate.ToShoot(a.Spec)
	if err != nil {
		return nil, err
	}
	if current != nil {
		merged, err := translate.ApplySpec(current, a.Spec)
		if err != nil {
			return nil, err
		}
		d.Spec.Provider.InfrastructureConfig = merged.Spec.Provider.InfrastructureConfig
		d.Spec.Provider.ControlPlaneConfig = merged.Spec.Provider.ControlPlaneConfig
		d.Spec.Provider.Workers = merged.Spec.Provider.Workers
		d.Spec.Networking = merged.Spec.Networking
		d.Spec.DNS = merged.Spec.DNS
		// In the shoot's order and, where one already says what is generated, with its bytes: server-side apply
		// takes the applied order and compares configs as values, so anything else is a write for nothing.
		d.Spec.Extensions = merged.Spec.Extensions
		d.Spec.ExposureClassName = merged.Spec.ExposureClassName
		d.Spec.ControlPlane = merged.Spec.ControlPlane
	}
	if d.Labels == nil {
		d.Labels = map[string]string{}
	}
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	d.Labels[wire.LabelManagedBy] = wire.ManagedByValue
	d.Annotations[shoot.AnnotationRuntimeID] = a.RuntimeID
	d.Annotations[shoot.AnnotationRuntimeGeneration] = strconv.FormatInt(a.RuntimeGeneration, 10)
	d.Annotations[AnnotationSpecHash] = a.SpecHash
	if a.Plan != "" {
		d.Annotations[AnnotationPlan] = a.Plan
	}
	if c.RuntimeNamespace != "" {
		d.Annotations[AnnotationRuntimeNamespace] = c.RuntimeNamespace
	}
	return d, nil
}

// removeStalePools deletes what the spec no longer has and server-side apply keeps because another manager owns
// fields of it: worker pools (Gardener's maintenance sets image versions) and registry-cache credential resources
// (`reg-cache-*`, which the previous infrastructure manager wrote with its own requests; it dropped stale ones on
// every update, and so does this). Removal is one explicit update, pinned to the version just applied.
func (c *Shoots) removeStalePools(ctx context.Context, s *gardencorev1beta1.Shoot, spec shoot.Spec) (*gardencorev1beta1.Shoot, error) {
	want := map[string]bool{}
	for _, w := range spec.Workers {
		want[w.Name] = true
	}
	kept := slices.DeleteFunc(slices.Clone(s.Spec.Provider.Workers), func(w gardencorev1beta1.Worker) bool { return !want[w.Name] })
	resources := map[string]bool{}
	for _, r := range spec.Resources {
		resources[r.Name] = true
	}
	keptResources := slices.DeleteFunc(slices.Clone(s.Spec.Resources), func(r gardencorev1beta1.NamedResourceReference) bool {
		return strings.Contains(r.Name, shoot.RegistryCredentialsPrefix) && !resources[r.Name]
	})
	if len(kept) == len(s.Spec.Provider.Workers) && len(keptResources) == len(s.Spec.Resources) {
		return s, nil
	}
	s = s.DeepCopy()
	s.Spec.Provider.Workers, s.Spec.Resources = kept, keptResources
	err := c.Client.Update(ctx, s, client.FieldOwner(FieldManager))
	if err := c.record("update", classify("remove stale worker pools and registry-cache resources of shoot "+s.Name, err)); err != nil {
		return nil, err
	}
	return s, nil
}

// applyAuthConfigMap writes the structured-authentication ConfigMap the shoot references. It carries the same
// marks as the shoot, so its watch events map back to the Runtime (a changed ConfigMap is drift).
func (c *Shoots) applyAuthConfigMap(ctx context.Context, a ports.ShootApply) error {
	spec := a.Spec
	if spec.Authentication == nil {
		return nil
	}
	data, err := translate.AuthenticationConfigMapData(spec.Authentication)
	if err != nil {
		return fmt.Errorf("authentication of shoot %s: %w: %w", spec.Name, ports.ErrShootRejected, err)
	}
	annotations := map[string]any{}
	if a.RuntimeID != "" {
		annotations[shoot.AnnotationRuntimeID] = a.RuntimeID
	}
	if c.RuntimeNamespace != "" {
		annotations[AnnotationRuntimeNamespace] = c.RuntimeNamespace
	}
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": spec.Authentication.ConfigMapName, "namespace": c.Namespace,
			"labels": map[string]any{wire.LabelManagedBy: wire.ManagedByValue}, "annotations": annotations},
		"data": toAnyMap(data),
	}}
	err = c.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(cm), client.FieldOwner(FieldManager), client.ForceOwnership)
	return c.record("apply", classify("apply authentication ConfigMap of shoot "+spec.Name, err))
}

func toAnyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// toApplyObject renders the shoot as an apply configuration: only set fields, no status, no server metadata.
func toApplyObject(s *gardencorev1beta1.Shoot) (*unstructured.Unstructured, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode shoot: %w", err)
	}
	obj := map[string]any{}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("decode shoot: %w", err)
	}
	delete(obj, "status")
	if md, ok := obj["metadata"].(map[string]any); ok {
		for _, k := range []string{"creationTimestamp", "resourceVersion", "uid", "managedFields", "generation"} {
			delete(md, k)
		}
	}
	return &unstructured.Unstructured{Object: obj}, nil
}
