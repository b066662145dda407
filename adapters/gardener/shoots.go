package gardener

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/cluster"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
)

// Shoots implements ports.Shoots and ports.Seeds on a Gardener project.
type Shoots struct {
	// Client writes to the garden and reads shoots (a cached client is fine: reads may lag).
	Client client.Client
	// Live reads seeds (cluster-scoped, outside the project cache) and confirms shoots before destructive steps.
	Live client.Reader
	// Namespace is the project namespace (garden-<project>).
	Namespace string
	// RuntimeNamespace is recorded on shoots so watch events map back to the Runtime.
	RuntimeNamespace string
	// Observe, when set, is told about every request (verb, outcome) for metrics.
	Observe func(verb string, err error)
}

var _ ports.Shoots = (*Shoots)(nil)
var _ ports.Seeds = (*Shoots)(nil)

func (c *Shoots) record(verb string, err error) error {
	if c.Observe != nil {
		c.Observe(verb, err)
	}
	return err
}

// classify wraps an API error into the port's error classes.
func classify(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%s: %w: %w", op, ports.ErrShootNotFound, err)
	case apierrors.IsInvalid(err), apierrors.IsForbidden(err), apierrors.IsBadRequest(err):
		return fmt.Errorf("%s: %w: %w", op, ports.ErrShootRejected, err)
	case errors.Is(err, ports.ErrShootNotManaged), errors.Is(err, ports.ErrShootRejected):
		return fmt.Errorf("%s: %w", op, err)
	}
	return fmt.Errorf("%s: %w: %w", op, ports.ErrTransient, err)
}

func (c *Shoots) get(ctx context.Context, name string) (*gardencorev1beta1.Shoot, error) {
	s := &gardencorev1beta1.Shoot{}
	err := c.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, s)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, c.record("get", classify("get shoot "+name, err))
	}
	return s, nil
}

// Get implements ports.Shoots.
func (c *Shoots) Get(ctx context.Context, name string) (cluster.Shoot, error) {
	s, err := c.get(ctx, name)
	if err != nil {
		return cluster.Shoot{}, err
	}
	return Observe(s), nil
}

// Current implements ports.Shoots.
func (c *Shoots) Current(ctx context.Context, name string) (*shoot.Current, error) {
	s, err := c.get(ctx, name)
	if err != nil || s == nil {
		return nil, err
	}
	cur, err := CurrentFromShoot(s)
	if err != nil {
		return nil, fmt.Errorf("current state of shoot %s: %w", name, err)
	}
	return &cur, nil
}

// Apply implements ports.Shoots with server-side apply: only the fields the spec sets are owned by FieldManager.
func (c *Shoots) Apply(ctx context.Context, a ports.ShootApply) (cluster.Shoot, error) {
	name := a.Spec.Name
	a.Spec.Namespace = c.Namespace
	current, err := c.get(ctx, name)
	if err != nil {
		return cluster.Shoot{}, err
	}
	if current != nil && current.Labels[LabelManagedBy] != ManagedByValue {
		return cluster.Shoot{}, fmt.Errorf("apply shoot %s: %w", name, ports.ErrShootNotManaged)
	}
	if err := c.applyAuthConfigMap(ctx, a); err != nil {
		return cluster.Shoot{}, err
	}
	desired, err := c.desired(a, current)
	if err != nil {
		return cluster.Shoot{}, fmt.Errorf("apply shoot %s: %w: %w", name, ports.ErrShootRejected, err)
	}
	u, err := toApplyObject(desired)
	if err != nil {
		return cluster.Shoot{}, fmt.Errorf("apply shoot %s: %w", name, err)
	}
	err = c.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager), client.ForceOwnership)
	if err := c.record("apply", classify("apply shoot "+name, err)); err != nil {
		return cluster.Shoot{}, err
	}
	applied := &gardencorev1beta1.Shoot{}
	if err := c.Client.Scheme().Convert(u, applied, nil); err != nil {
		return cluster.Shoot{}, fmt.Errorf("apply shoot %s: read result: %w", name, err)
	}
	if applied, err = c.removeStalePools(ctx, applied, a.Spec); err != nil {
		return cluster.Shoot{}, err
	}
	if err := c.ownAuthConfigMap(ctx, a.Spec, applied); err != nil {
		return cluster.Shoot{}, err
	}
	return Observe(applied), nil
}

// desired is the object to apply: the generated shoot plus, for an existing shoot, the parts the update rules
// compute from the current state (merged provider configs, kept immutable fields, pools with their versions).
func (c *Shoots) desired(a ports.ShootApply, current *gardencorev1beta1.Shoot) (*gardencorev1beta1.Shoot, error) {
	d, err := ToShoot(a.Spec)
	if err != nil {
		return nil, err
	}
	if current != nil {
		merged, err := ApplySpec(current, a.Spec)
		if err != nil {
			return nil, err
		}
		d.Spec.Provider.InfrastructureConfig = merged.Spec.Provider.InfrastructureConfig
		d.Spec.Provider.ControlPlaneConfig = merged.Spec.Provider.ControlPlaneConfig
		d.Spec.Provider.Workers = merged.Spec.Provider.Workers
		d.Spec.Networking = merged.Spec.Networking
		d.Spec.DNS = merged.Spec.DNS
		d.Spec.ExposureClassName = merged.Spec.ExposureClassName
		d.Spec.ControlPlane = merged.Spec.ControlPlane
	}
	if d.Labels == nil {
		d.Labels = map[string]string{}
	}
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	d.Labels[LabelManagedBy] = ManagedByValue
	d.Annotations[shoot.AnnotationRuntimeID] = a.RuntimeID
	d.Annotations[shoot.AnnotationRuntimeGeneration] = strconv.FormatInt(a.RuntimeGeneration, 10)
	d.Annotations[AnnotationSpecHash] = a.SpecHash
	if c.RuntimeNamespace != "" {
		d.Annotations[AnnotationRuntimeNamespace] = c.RuntimeNamespace
	}
	return d, nil
}

// removeStalePools deletes worker pools the spec no longer has. Server-side apply keeps a pool another manager
// also owns fields of (Gardener's maintenance sets image versions), so removal is an explicit update.
func (c *Shoots) removeStalePools(ctx context.Context, s *gardencorev1beta1.Shoot, spec shoot.Spec) (*gardencorev1beta1.Shoot, error) {
	want := map[string]bool{}
	for _, w := range spec.Workers {
		want[w.Name] = true
	}
	kept := slices.DeleteFunc(slices.Clone(s.Spec.Provider.Workers), func(w gardencorev1beta1.Worker) bool { return !want[w.Name] })
	if len(kept) == len(s.Spec.Provider.Workers) {
		return s, nil
	}
	s = s.DeepCopy()
	s.Spec.Provider.Workers = kept
	err := c.Client.Update(ctx, s, client.FieldOwner(FieldManager))
	if err := c.record("update", classify("remove worker pools of shoot "+s.Name, err)); err != nil {
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
	data, err := AuthenticationConfigMapData(spec.Authentication)
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
			"labels": map[string]any{LabelManagedBy: ManagedByValue}, "annotations": annotations},
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

// mutate reads a managed shoot, lets change edit it and sends the difference as a merge patch.
func (c *Shoots) mutate(ctx context.Context, verb, name string, change func(*gardencorev1beta1.Shoot)) (*gardencorev1beta1.Shoot, error) {
	s, err := c.get(ctx, name)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, fmt.Errorf("%s shoot %s: %w", verb, name, ports.ErrShootNotFound)
	}
	if s.Labels[LabelManagedBy] != ManagedByValue {
		return nil, fmt.Errorf("%s shoot %s: %w", verb, name, ports.ErrShootNotManaged)
	}
	patch := client.MergeFrom(s.DeepCopy())
	change(s)
	err = c.Client.Patch(ctx, s, patch, client.FieldOwner(FieldManager))
	return s, c.record("patch", classify(verb+" shoot "+name, err))
}

// RequestRetry implements ports.Shoots.
func (c *Shoots) RequestRetry(ctx context.Context, name string, attempt int, at time.Time) (cluster.Shoot, error) {
	s, err := c.mutate(ctx, "retry", name, func(s *gardencorev1beta1.Shoot) {
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, v1beta1constants.GardenerOperation, v1beta1constants.ShootOperationRetry)
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, AnnotationRetryAttempts, strconv.Itoa(attempt))
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, AnnotationRetryGeneration, strconv.FormatInt(s.Generation, 10))
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, AnnotationRetryRequestedAt, formatTime(at))
	})
	if err != nil {
		return cluster.Shoot{}, err
	}
	return Observe(s), nil
}

// SeedAvailable implements ports.Seeds: a seed of the provider in the region that is visible for scheduling and
// not being deleted.
func (c *Shoots) SeedAvailable(ctx context.Context, provider, region string) (bool, error) {
	seeds := &gardencorev1beta1.SeedList{}
	err := c.Live.List(ctx, seeds)
	if err := c.record("list", classify("list seeds", err)); err != nil {
		return false, err
	}
	for _, s := range seeds.Items {
		visible := s.Spec.Settings == nil || s.Spec.Settings.Scheduling == nil || s.Spec.Settings.Scheduling.Visible
		if s.Spec.Provider.Type == provider && s.Spec.Provider.Region == region && visible && s.DeletionTimestamp == nil {
			return true, nil
		}
	}
	return false, nil
}

// ShootToRuntime returns the Runtime (namespace, name) a shoot belongs to, from the operator's marks.
func ShootToRuntime(labels, annotations map[string]string) (namespace, name string, ok bool) {
	if labels[LabelManagedBy] != ManagedByValue {
		return "", "", false
	}
	name = annotations[shoot.AnnotationRuntimeID]
	namespace = annotations[AnnotationRuntimeNamespace]
	return namespace, name, name != "" && namespace != ""
}
