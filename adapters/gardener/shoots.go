package gardener

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/domain/wire"
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

	// seeds caches the regions of the garden's seeds (see SeedRegion).
	seeds seedRegions
	// inSync remembers the shoots found in sync (see InSync).
	inSync inSyncMemo
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
		if resource := missingReference(err); resource != "" {
			return fmt.Errorf("%s: %w: %w", op, &ports.MissingReferenceError{Resource: resource}, err)
		}
		return fmt.Errorf("%s: %w: %w", op, ports.ErrShootRejected, err)
	case errors.Is(err, ports.ErrShootNotManaged), errors.Is(err, ports.ErrShootRejected):
		return fmt.Errorf("%s: %w", op, err)
	}
	return fmt.Errorf("%s: %w: %w", op, ports.ErrTransient, err)
}

// missingReferenceText is how Gardener's reference admission (plugin/pkg/global/resourcereferencemanager) refuses
// a shoot whose spec.resources entry names an object that does not exist: "failed to resolve resource reference
// "<entry>": <kind> "<name>" not found".
var missingReferenceText = regexp.MustCompile(`failed to resolve resource reference "([^"]+)": .* not found`)

// missingReference is the spec.resources entry whose object the garden did not find, or "" for another refusal.
func missingReference(err error) string {
	if m := missingReferenceText.FindStringSubmatch(err.Error()); m != nil {
		return m[1]
	}
	return ""
}

// get returns the shoot with its whole spec (nil when it does not exist): from the cache, or from the API server
// when the cache holds it trimmed (CacheTransform: a shoot the operator never applied). Its callers compare the
// spec (drift, adoption) or compute a write from it, which a trimmed spec would turn into wrong decisions.
func (c *Shoots) get(ctx context.Context, name string) (*gardencorev1beta1.Shoot, error) {
	return c.whole(ctx, name, false)
}

// whole is get; shared (a read-only caller) takes the cache's own object instead of a copy (see peek).
func (c *Shoots) whole(ctx context.Context, name string, shared bool) (*gardencorev1beta1.Shoot, error) {
	read := c.read
	if shared {
		read = c.peek
	}
	s, err := read(ctx, name, ports.ReadCached)
	if err != nil || s == nil || !specTrimmed(s) {
		return s, err
	}
	return c.read(ctx, name, ports.ReadLive)
}

// read returns the shoot from the cache or the API server; nil when it does not exist.
func (c *Shoots) read(ctx context.Context, name string, mode ports.ReadMode) (*gardencorev1beta1.Shoot, error) {
	return c.readShoot(ctx, name, mode, false)
}

// peek is read, except that a cached read returns the cache's own object, not a copy: for callers that only read
// it (translate it, compare it, encode it) and keep no part of it that anyone changes. A Runtime's pass read its
// shoot from the cache three times (observation, current state, in-sync check), and each copy of a whole shoot was
// garbage of several kilobytes per Gardener report (docs/operations/scale.md, tenth pass).
func (c *Shoots) peek(ctx context.Context, name string, mode ports.ReadMode) (*gardencorev1beta1.Shoot, error) {
	return c.readShoot(ctx, name, mode, mode == ports.ReadCached)
}

func (c *Shoots) readShoot(ctx context.Context, name string, mode ports.ReadMode, shared bool) (*gardencorev1beta1.Shoot, error) {
	var r client.Reader = c.Client
	if mode == ports.ReadLive {
		r = c.Live
	}
	var opts []client.GetOption
	if shared {
		opts = append(opts, client.UnsafeDisableDeepCopy)
	}
	s := &gardencorev1beta1.Shoot{}
	err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, s, opts...)
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
func (c *Shoots) Get(ctx context.Context, name string, mode ports.ReadMode) (shootstate.Shoot, error) {
	s, err := c.peek(ctx, name, mode) // Observe copies what it keeps
	if err != nil {
		return shootstate.Shoot{}, err
	}
	out := Observe(s)
	out.Live = mode == ports.ReadLive
	return out, nil
}

// Current implements ports.Shoots.
func (c *Shoots) Current(ctx context.Context, name string) (*shoot.Current, error) {
	s, err := c.whole(ctx, name, true) // CurrentFromShoot copies what it keeps
	if err != nil || s == nil {
		return nil, err
	}
	cur, err := translate.CurrentFromShoot(s)
	if err != nil {
		return nil, fmt.Errorf("current state of shoot %s: %w", name, err)
	}
	return &cur, nil
}

// Apply implements ports.ShootProvisioner. A new shoot is created with a plain create, so a shoot someone else
// created under the name meanwhile fails with AlreadyExists instead of being taken over; an existing shoot of this
// runtime is updated with server-side apply: only the fields the spec sets are owned by FieldManager.
func (c *Shoots) Apply(ctx context.Context, a ports.ShootApply) (shootstate.Shoot, error) {
	name := a.Spec.Name
	a.Spec.Namespace = c.Namespace
	current, err := c.get(ctx, name)
	if err != nil {
		return shootstate.Shoot{}, err
	}
	if a.Precondition == (ports.Precondition{}) {
		// The caller observed no shoot: create it. One that exists after all was missed by a lagging cache; what
		// the caller computed does not account for it, so the caller has to look again.
		created, err := c.create(ctx, a)
		if !errors.Is(err, errAlreadyExists) {
			return created, err
		}
		// Nothing was written; whose shoot it is, the caller decides on its next, fresh observation (a failure
		// reported from a stale view would tell KEB the runtime failed).
		return shootstate.Shoot{}, fmt.Errorf("apply shoot %s: it exists, the observation was stale: %w", name, ports.ErrConflict)
	}
	if current == nil || (a.Precondition.ResourceVersion != "" && current.ResourceVersion != a.Precondition.ResourceVersion) {
		// The caller observed another version than the cache holds (it read live, or the cache moved on):
		// decide on the shoot as it is now.
		if current, err = c.read(ctx, name, ports.ReadLive); err != nil {
			return shootstate.Shoot{}, err
		}
		if current == nil {
			return shootstate.Shoot{}, fmt.Errorf("apply shoot %s: it is gone: %w", name, ports.ErrConflict)
		}
	}
	if err := ownedBy(current, a.RuntimeID); err != nil {
		return shootstate.Shoot{}, fmt.Errorf("apply shoot %s: %w", name, err)
	}
	desired, err := c.desired(a, current)
	if err != nil {
		return shootstate.Shoot{}, fmt.Errorf("apply shoot %s: %w: %w", name, ports.ErrShootRejected, err)
	}
	if err := checkPrecondition(a.Precondition, current); err != nil {
		return shootstate.Shoot{}, fmt.Errorf("apply shoot %s: %w", name, err)
	}
	// Before anything is written: the authentication ConfigMap decides who may log in, it is held too.
	if err := c.holdAdopted(ctx, a, current); err != nil {
		return shootstate.Shoot{}, err
	}
	if err := c.applyAuthConfigMap(ctx, a); err != nil {
		return shootstate.Shoot{}, err
	}
	if marksOnly, err := adoptedInSync(current, desired); err != nil || marksOnly {
		if err != nil {
			return shootstate.Shoot{}, fmt.Errorf("apply shoot %s: %w", name, err)
		}
		return c.recordMarks(ctx, a, current, desired)
	}
	u, err := toApplyObject(desired)
	if err != nil {
		return shootstate.Shoot{}, fmt.Errorf("apply shoot %s: %w", name, err)
	}
	// Force takes over fields another manager set (drift correction); the shoot is ours (checked above). The UID
	// and the resourceVersion the spec was computed from (checked above) pin the apply to that very state: an apply
	// computed from a stale cache fails with a conflict instead of writing old values back.
	u.SetUID(current.UID)
	u.SetResourceVersion(current.ResourceVersion)
	err = c.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager), client.ForceOwnership)
	if err := c.record("apply", classify("apply shoot "+name, err)); err != nil {
		return shootstate.Shoot{}, err
	}
	applied := &gardencorev1beta1.Shoot{}
	if err := c.Client.Scheme().Convert(u, applied, nil); err != nil {
		return shootstate.Shoot{}, fmt.Errorf("apply shoot %s: read result: %w", name, err)
	}
	if applied, err = c.removeStalePools(ctx, applied, a.Spec); err != nil {
		return shootstate.Shoot{}, err
	}
	if err := c.ownAuthConfigMap(ctx, a.Spec, applied); err != nil {
		return shootstate.Shoot{}, err
	}
	return Observe(applied), nil
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
		if s.Labels[wire.LabelManagedBy] != wire.ManagedByValue {
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

// errRetryOutdated: the shoot moved past the generation a retry produced before the retry could be recorded for it.
var errRetryOutdated = errors.New("the shoot has a newer generation than the retry produced")

// RequestRetry implements ports.ShootProvisioner.
func (c *Shoots) RequestRetry(ctx context.Context, name string, attempt int, at time.Time) (shootstate.Shoot, error) {
	s, err := c.mutate(ctx, "retry", name, ports.Precondition{}, func(s *gardencorev1beta1.Shoot) error {
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, v1beta1constants.GardenerOperation, v1beta1constants.ShootOperationRetry)
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, AnnotationRetryAttempts, strconv.Itoa(attempt))
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, AnnotationRetryGeneration, strconv.FormatInt(s.Generation, 10))
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, AnnotationRetryRequestedAt, formatTime(at))
		return nil
	})
	if err != nil {
		return shootstate.Shoot{}, err
	}
	if s.Annotations[AnnotationRetryGeneration] != strconv.FormatInt(s.Generation, 10) {
		// The gardener-apiserver turns a retry of a Failed shoot into a new generation. The attempts are counted per
		// generation of the spec, so the mark must name the generation the retry produced, or every retry would
		// count as the first (no growing backoff, no limit for failures without an error code). The gardenlet
		// writes the status at once, so this is not pinned to the version just written but to the generation: a
		// newer one (a new spec) starts the attempts again, the safe side.
		uid, gen := s.UID, s.Generation
		marked, err := c.mutate(ctx, "retry", name, ports.Precondition{}, func(s *gardencorev1beta1.Shoot) error {
			if s.UID != uid || s.Generation != gen {
				return errRetryOutdated
			}
			metav1.SetMetaDataAnnotation(&s.ObjectMeta, AnnotationRetryGeneration, strconv.FormatInt(gen, 10))
			return nil
		})
		switch {
		case err == nil:
			s = marked
		case !errors.Is(err, errRetryOutdated):
			return shootstate.Shoot{}, err
		}
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
