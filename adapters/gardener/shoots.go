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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
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

// count tells Observe about a request whose error the caller handles itself.
func (c *Shoots) count(verb string, err error) {
	if c.Observe != nil {
		c.Observe(verb, err)
	}
}

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
	case apierrors.IsConflict(err), errors.Is(err, ports.ErrConflict):
		return fmt.Errorf("%s: %w: %w", op, ports.ErrConflict, err)
	case apierrors.IsInvalid(err), apierrors.IsForbidden(err), apierrors.IsBadRequest(err):
		return fmt.Errorf("%s: %w: %w", op, ports.ErrShootRejected, err)
	case errors.Is(err, ports.ErrShootNotManaged), errors.Is(err, ports.ErrShootRejected):
		return fmt.Errorf("%s: %w", op, err)
	}
	return fmt.Errorf("%s: %w: %w", op, ports.ErrTransient, err)
}

func (c *Shoots) get(ctx context.Context, name string) (*gardencorev1beta1.Shoot, error) {
	return c.read(ctx, name, ports.ReadCached)
}

// read returns the shoot from the cache or the API server; nil when it does not exist.
func (c *Shoots) read(ctx context.Context, name string, mode ports.ReadMode) (*gardencorev1beta1.Shoot, error) {
	var r client.Reader = c.Client
	if mode == ports.ReadLive {
		r = c.Live
	}
	s := &gardencorev1beta1.Shoot{}
	err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, s)
	if mode == ports.ReadLive {
		c.count("get", client.IgnoreNotFound(err))
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, c.record("get", classify("get shoot "+name, err))
	}
	return s, nil
}

// Get implements ports.ShootReader.
func (c *Shoots) Get(ctx context.Context, name string, mode ports.ReadMode) (cluster.Shoot, error) {
	s, err := c.read(ctx, name, mode)
	if err != nil {
		return cluster.Shoot{}, err
	}
	out := Observe(s)
	out.Live = mode == ports.ReadLive
	return out, nil
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

// Apply implements ports.ShootProvisioner. A new shoot is created with a plain create, so a shoot someone else
// created under the name meanwhile fails with AlreadyExists instead of being taken over; an existing shoot of this
// runtime is updated with server-side apply: only the fields the spec sets are owned by FieldManager.
func (c *Shoots) Apply(ctx context.Context, a ports.ShootApply) (cluster.Shoot, error) {
	name := a.Spec.Name
	a.Spec.Namespace = c.Namespace
	current, err := c.get(ctx, name)
	if err != nil {
		return cluster.Shoot{}, err
	}
	if a.Precondition == (ports.Precondition{}) {
		// The caller observed no shoot: create it. One that exists after all was missed by a lagging cache; what
		// the caller computed does not account for it, so the caller has to look again.
		created, err := c.create(ctx, a)
		if !errors.Is(err, errAlreadyExists) {
			return created, err
		}
		if current, err = c.read(ctx, name, ports.ReadLive); err != nil || current == nil {
			return cluster.Shoot{}, fmt.Errorf("apply shoot %s: it exists, the observation was stale: %w", name, ports.ErrConflict)
		}
		if err := ownedBy(current, a.RuntimeID); err != nil {
			return cluster.Shoot{}, fmt.Errorf("apply shoot %s: %w", name, err)
		}
		return cluster.Shoot{}, fmt.Errorf("apply shoot %s: it exists, the observation was stale: %w", name, ports.ErrConflict)
	}
	if current == nil || (a.Precondition.ResourceVersion != "" && current.ResourceVersion != a.Precondition.ResourceVersion) {
		// The caller observed another version than the cache holds (it read live, or the cache moved on):
		// decide on the shoot as it is now.
		if current, err = c.read(ctx, name, ports.ReadLive); err != nil {
			return cluster.Shoot{}, err
		}
		if current == nil {
			return cluster.Shoot{}, fmt.Errorf("apply shoot %s: it is gone: %w", name, ports.ErrConflict)
		}
	}
	if err := ownedBy(current, a.RuntimeID); err != nil {
		return cluster.Shoot{}, fmt.Errorf("apply shoot %s: %w", name, err)
	}
	if err := c.applyAuthConfigMap(ctx, a); err != nil {
		return cluster.Shoot{}, err
	}
	desired, err := c.desired(a, current)
	if err != nil {
		return cluster.Shoot{}, fmt.Errorf("apply shoot %s: %w: %w", name, ports.ErrShootRejected, err)
	}
	if err := checkPrecondition(a.Precondition, current); err != nil {
		return cluster.Shoot{}, fmt.Errorf("apply shoot %s: %w", name, err)
	}
	if marksOnly, err := adoptedInSync(current, desired); err != nil || marksOnly {
		if err != nil {
			return cluster.Shoot{}, fmt.Errorf("apply shoot %s: %w", name, err)
		}
		return c.recordMarks(ctx, a, current, desired)
	}
	u, err := toApplyObject(desired)
	if err != nil {
		return cluster.Shoot{}, fmt.Errorf("apply shoot %s: %w", name, err)
	}
	// Force takes over fields another manager set (drift correction); the shoot is ours (checked above). The UID
	// and the resourceVersion the spec was computed from (checked above) pin the apply to that very state: an apply
	// computed from a stale cache fails with a conflict instead of writing old values back.
	u.SetUID(current.UID)
	u.SetResourceVersion(current.ResourceVersion)
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

// conflictBackoff spaces retries after a conflict with Gardener's own writes (a shoot being reconciled is updated
// several times a second): about five seconds in all before the conflict is reported.
var conflictBackoff = wait.Backoff{Steps: 8, Duration: 20 * time.Millisecond, Factor: 2, Jitter: 0.2}

// errAlreadyExists: create found a shoot of the name (the cache had not seen it).
var errAlreadyExists = errors.New("shoot already exists")

// createManager is the field manager of the plain create of a new shoot; its entry is dropped right after the
// first server-side apply, so that only FieldManager's apply entry owns the fields and later applies can remove
// what they no longer set.
const createManager = FieldManager + "-create"

// create creates a new shoot with a plain create (never taking over a shoot someone created under the name), then
// applies the same object with server-side apply and drops the create's managedFields entry: the fields end up
// owned exactly as if the shoot had been applied, without the server's defaults becoming ours.
func (c *Shoots) create(ctx context.Context, a ports.ShootApply) (cluster.Shoot, error) {
	name := a.Spec.Name
	if err := c.applyAuthConfigMap(ctx, a); err != nil {
		return cluster.Shoot{}, err
	}
	desired, err := c.desired(a, nil)
	if err != nil {
		return cluster.Shoot{}, fmt.Errorf("create shoot %s: %w: %w", name, ports.ErrShootRejected, err)
	}
	u, err := toApplyObject(desired)
	if err != nil {
		return cluster.Shoot{}, fmt.Errorf("create shoot %s: %w", name, err)
	}
	// The create sends exactly what the apply sends (provider configs as the apply encodes them), so the apply
	// that follows changes nothing in the spec.
	created := u.DeepCopy()
	err = c.Client.Create(ctx, created, client.FieldOwner(createManager))
	if apierrors.IsAlreadyExists(err) {
		c.count("create", nil)
		return cluster.Shoot{}, fmt.Errorf("create shoot %s: %w", name, errAlreadyExists)
	}
	if err := c.record("create", classify("create shoot "+name, err)); err != nil {
		return cluster.Shoot{}, err
	}
	u.SetUID(created.GetUID())
	err = c.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager), client.ForceOwnership)
	if err := c.record("apply", classify("apply new shoot "+name, err)); err != nil {
		return cluster.Shoot{}, err
	}
	applied := &gardencorev1beta1.Shoot{}
	if err := c.Client.Scheme().Convert(u, applied, nil); err != nil {
		return cluster.Shoot{}, fmt.Errorf("create shoot %s: read result: %w", name, err)
	}
	if err := c.dropManager(ctx, applied, createManager); err != nil {
		return cluster.Shoot{}, err
	}
	if err := c.ownAuthConfigMap(ctx, a.Spec, applied); err != nil {
		return cluster.Shoot{}, err
	}
	return live(applied), nil
}

// dropManager removes the (Update) managedFields entry of manager, if present, with a merge patch of the whole
// list under optimistic locking; a concurrent writer (the gardenlet) makes it read again and retry.
func (c *Shoots) dropManager(ctx context.Context, s *gardencorev1beta1.Shoot, manager string) error {
	err := retry.RetryOnConflict(conflictBackoff, func() error {
		fresh, err := c.read(ctx, s.Name, ports.ReadLive)
		if err != nil || fresh == nil {
			return err
		}
		kept := slices.DeleteFunc(slices.Clone(fresh.ManagedFields), func(e metav1.ManagedFieldsEntry) bool {
			return e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationUpdate
		})
		if len(kept) == len(fresh.ManagedFields) {
			return nil
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": fresh.ResourceVersion, "managedFields": kept}})
		if err != nil {
			return err
		}
		err = c.Client.Patch(ctx, fresh, client.RawPatch(types.MergePatchType, patch))
		c.count("patch", err)
		return err
	})
	return classify("hand the fields of new shoot "+s.Name+" to the apply manager", err)
}

// ownedBy tells whether the operator may update an existing shoot for runtimeID: it carries the managed-by mark and
// names this runtime, and no deletion record (a shoot pending deletion changes only by restore or deletion).
func ownedBy(s *gardencorev1beta1.Shoot, runtimeID string) error {
	switch {
	case s.Labels[LabelManagedBy] != ManagedByValue:
		return ports.ErrShootNotManaged
	case s.Annotations[shoot.AnnotationRuntimeID] != runtimeID:
		return fmt.Errorf("it belongs to runtime %q: %w", s.Annotations[shoot.AnnotationRuntimeID], ports.ErrShootNotManaged)
	case s.Annotations[AnnotationDeletionRuntimeID] != "":
		return fmt.Errorf("it waits for the deletion of runtime %q: %w", s.Annotations[AnnotationDeletionRuntimeID], ports.ErrShootNotManaged)
	}
	return nil
}

// checkPrecondition fails with ErrConflict when s is not the observed shoot pre names.
func checkPrecondition(pre ports.Precondition, s *gardencorev1beta1.Shoot) error {
	if (pre.UID != "" && string(s.UID) != pre.UID) || (pre.ResourceVersion != "" && s.ResourceVersion != pre.ResourceVersion) {
		return fmt.Errorf("observed uid %q version %q, now uid %q version %q: %w", pre.UID, pre.ResourceVersion, s.UID, s.ResourceVersion, ports.ErrConflict)
	}
	return nil
}

// live is the observation of a shoot the API server just returned.
func live(s *gardencorev1beta1.Shoot) cluster.Shoot {
	out := Observe(s)
	out.Live = true
	return out
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
	if a.Plan != "" {
		d.Annotations[AnnotationPlan] = a.Plan
	}
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

// mutate reads a managed shoot from the API server, checks pre, lets change edit it and sends the difference as a
// merge patch with optimistic locking. When pre pins a resourceVersion, a shoot changed since then is not written
// (ErrConflict): the caller decided on that version. Otherwise a conflict (Gardener updating the shoot meanwhile)
// is retried on a fresh read, on which change runs again with its own checks.
func (c *Shoots) mutate(ctx context.Context, verb, name string, pre ports.Precondition, change func(*gardencorev1beta1.Shoot) error) (*gardencorev1beta1.Shoot, error) {
	var s *gardencorev1beta1.Shoot
	err := retry.OnError(conflictBackoff, func(err error) bool {
		return pre.ResourceVersion == "" && apierrors.IsConflict(err)
	}, func() error {
		var err error
		if s, err = c.read(ctx, name, ports.ReadLive); err != nil {
			return err
		}
		if s == nil {
			return fmt.Errorf("%s shoot %s: %w", verb, name, ports.ErrShootNotFound)
		}
		if s.Labels[LabelManagedBy] != ManagedByValue {
			return fmt.Errorf("%s shoot %s: %w", verb, name, ports.ErrShootNotManaged)
		}
		if err := checkPrecondition(pre, s); err != nil {
			return fmt.Errorf("%s shoot %s: %w", verb, name, err)
		}
		patch := client.MergeFromWithOptions(s.DeepCopy(), client.MergeFromWithOptimisticLock{})
		if err := change(s); err != nil {
			return fmt.Errorf("%s shoot %s: %w", verb, name, err)
		}
		err = c.Client.Patch(ctx, s, patch, client.FieldOwner(FieldManager))
		c.count("patch", err)
		return err
	})
	return s, classify(verb+" shoot "+name, err)
}

// RequestRetry implements ports.ShootProvisioner.
func (c *Shoots) RequestRetry(ctx context.Context, name string, attempt int, at time.Time) (cluster.Shoot, error) {
	s, err := c.mutate(ctx, "retry", name, ports.Precondition{}, func(s *gardencorev1beta1.Shoot) error {
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, v1beta1constants.GardenerOperation, v1beta1constants.ShootOperationRetry)
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, AnnotationRetryAttempts, strconv.Itoa(attempt))
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, AnnotationRetryGeneration, strconv.FormatInt(s.Generation, 10))
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, AnnotationRetryRequestedAt, formatTime(at))
		return nil
	})
	if err != nil {
		return cluster.Shoot{}, err
	}
	return live(s), nil
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
