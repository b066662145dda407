package gardener

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
)

// conflictBackoff spaces retries after a conflict with Gardener's own writes (a shoot being reconciled is updated
// several times a second): about five seconds in all before the conflict is reported.
var conflictBackoff = wait.Backoff{Steps: 8, Duration: 20 * time.Millisecond, Factor: 2, Jitter: 0.2}

// errAlreadyExists: create found a shoot of the name (the cache had not seen it).
var errAlreadyExists = errors.New("shoot already exists")

// createManager is the field manager of the plain create of a new shoot; its entry is dropped right after the
// first server-side apply, so that only FieldManager's apply entry owns the fields and later applies can remove
// what they no longer set.
const createManager = FieldManager + "-create"

// cacheWait bounds how long a create waits for the garden cache to show the shoot it wrote (see awaitCached).
const cacheWait = 5 * time.Second

// create creates a new shoot with a plain create (never taking over a shoot someone created under the name), then
// applies the same object with server-side apply and drops the create's managedFields entry: the fields end up
// owned exactly as if the shoot had been applied, without the server's defaults becoming ours.
func (c *Shoots) create(ctx context.Context, a ports.ShootApply) (shootstate.Shoot, error) {
	name := a.Spec.Name
	if err := c.applyAuthConfigMap(ctx, a); err != nil {
		return shootstate.Shoot{}, err
	}
	desired, err := c.desired(a, nil)
	if err != nil {
		return shootstate.Shoot{}, fmt.Errorf("create shoot %s: %w: %w", name, ports.ErrShootRejected, err)
	}
	u, err := toApplyObject(desired)
	if err != nil {
		return shootstate.Shoot{}, fmt.Errorf("create shoot %s: %w", name, err)
	}
	// The create sends exactly what the apply sends (provider configs as the apply encodes them), so the apply
	// that follows changes nothing in the spec.
	created := u.DeepCopy()
	err = c.Client.Create(ctx, created, client.FieldOwner(createManager))
	if apierrors.IsAlreadyExists(err) {
		c.count("create", nil)
		// The cache missed it: let it catch up, so the caller's next observation sees the shoot instead of
		// trying to create it again (each attempt also applies the ConfigMap).
		c.awaitCached(ctx, name, "")
		return shootstate.Shoot{}, fmt.Errorf("create shoot %s: %w", name, errAlreadyExists)
	}
	if err := c.record("create", classify("create shoot "+name, err)); err != nil {
		return shootstate.Shoot{}, err
	}
	u.SetUID(created.GetUID())
	err = c.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager), client.ForceOwnership)
	if err := c.record("apply", classify("apply new shoot "+name, err)); err != nil {
		return shootstate.Shoot{}, err
	}
	applied := &gardencorev1beta1.Shoot{}
	if err := c.Client.Scheme().Convert(u, applied, nil); err != nil {
		return shootstate.Shoot{}, fmt.Errorf("create shoot %s: read result: %w", name, err)
	}
	if err := c.dropManager(ctx, applied, createManager); err != nil {
		return shootstate.Shoot{}, err
	}
	if err := c.ownAuthConfigMap(ctx, a.Spec, applied); err != nil {
		return shootstate.Shoot{}, err
	}
	// Events of the ConfigMap written above may start the next reconcile of the Runtime before the shoot's own
	// event reached the cache; observing no shoot there, it would create again (AlreadyExists, retried).
	c.awaitCached(ctx, name, string(applied.UID))
	return live(applied), nil
}

// awaitCached waits until the cache the adapter reads shoots from holds the shoot name (with uid, when given),
// at most cacheWait; a cache that does not catch up is no error: the caller's next observation then conflicts
// and looks again.
func (c *Shoots) awaitCached(ctx context.Context, name, uid string) {
	_ = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, cacheWait, true, func(ctx context.Context) (bool, error) {
		s := &gardencorev1beta1.Shoot{}
		if err := c.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, s); err != nil {
			return false, nil //nolint:nilerr // not cached yet (or a read error): keep waiting until the bound
		}
		return uid == "" || string(s.UID) == uid, nil
	})
}

// dropManager removes the (Update) managedFields entry of manager, if present, with a JSON patch on the entry's
// position guarded by tests of that entry's manager and operation. The patch carries no resourceVersion, so the
// gardenlet writing the new shoot meanwhile (finalizer, seed binding, status) does not conflict with it; only a move
// of the entry fails its tests. The first attempt uses s as the apply returned it (no read); after a failure the
// shoot is read live and the entry's new position patched, a few times with backoff. (A whole-list patch pinned to
// a resourceVersion, the earlier fallback, lost every race against a busy gardenlet on a loaded machine.)
func (c *Shoots) dropManager(ctx context.Context, s *gardencorev1beta1.Shoot, manager string) error {
	current := s
	var err error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if current, err = c.read(ctx, s.Name, ports.ReadLive); err != nil || current == nil {
				break
			}
		}
		i := slices.IndexFunc(current.ManagedFields, func(e metav1.ManagedFieldsEntry) bool {
			return e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationUpdate
		})
		if i < 0 {
			if attempt > 0 {
				return nil // read live: the entry is gone
			}
			err = errors.New("entry not in the apply's answer")
		} else if err = c.removeEntry(ctx, current, manager, i); err == nil || apierrors.IsNotFound(err) {
			return nil
		}
		if attempt+1 >= conflictBackoff.Steps {
			break
		}
		if !sleepCtx(ctx, conflictBackoff.Duration<<attempt) {
			err = ctx.Err()
			break
		}
	}
	return classify("hand the fields of new shoot "+s.Name+" to the apply manager", err)
}

// removeEntry removes managedFields[i] of s if it still is manager's Update entry.
func (c *Shoots) removeEntry(ctx context.Context, s *gardencorev1beta1.Shoot, manager string, i int) error {
	entry := fmt.Sprintf("/metadata/managedFields/%d", i)
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": entry + "/manager", "value": manager},
		{"op": "test", "path": entry + "/operation", "value": metav1.ManagedFieldsOperationUpdate},
		{"op": "remove", "path": entry}})
	if err != nil {
		return err
	}
	err = c.Client.Patch(ctx, s.DeepCopy(), client.RawPatch(types.JSONPatchType, patch))
	c.count("patch", err)
	return err
}

// sleepCtx waits d unless ctx ends first (false then).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// ownedBy tells whether the operator may update an existing shoot for runtimeID: it carries the managed-by mark and
// names this runtime, and no deletion record (a shoot pending deletion changes only by restore or deletion).
func ownedBy(s *gardencorev1beta1.Shoot, runtimeID string) error {
	switch {
	case s.Labels[wire.LabelManagedBy] != wire.ManagedByValue:
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
func live(s *gardencorev1beta1.Shoot) shootstate.Shoot {
	out := Observe(s)
	out.Live = true
	return out
}
