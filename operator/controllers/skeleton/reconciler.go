package skeleton

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/ports"
)

// Hooks are what a controller supplies to the skeleton: how its custom resource becomes a use case request
// (Observe), how the use case runs (Act) and how its result, or its error, becomes status (Status). The deletion
// branch (FinalizeHandler) and the branch of an object that is gone (GoneHandler) are optional. Everything else
// (reading the object, the finalizer, the clock, events, the status patch, the controller-runtime result) is the
// skeleton's.
type Hooks[O client.Object, Q, R any] interface {
	// Observe maps the object to the use case's request: a pure mapping, it reads nothing else and cannot fail.
	Observe(s *State[O]) Q
	// Act runs the use case for q at now. Its result and its error (what the use case could not observe, or an
	// action that failed, as the use case reports it) both go to Status.
	Act(ctx context.Context, s *State[O], q Q, now time.Time) (R, error)
	// Status writes r into s.Obj's status (in memory; the skeleton patches the difference) and says what follows.
	// err is Act's error (r is then whatever Act returned with it): Status writes what the failure means, if
	// anything, and may put err, with context, into Result.Retry; when it leaves Retry nil the skeleton retries
	// with err itself, so an error of Act is never dropped.
	Status(ctx context.Context, s *State[O], r R, err error, now time.Time) Result
}

// FinalizeHandler is implemented by hooks whose reconciler has a Finalizer (NewReconciler refuses one without).
type FinalizeHandler[O client.Object] interface {
	// Finalize runs the next steps of deleting an object that carries the finalizer and writes its progress into
	// s.Obj's status. Result.Release lets the object go: only once what it stands for is observed gone.
	Finalize(ctx context.Context, s *State[O], now time.Time) (Result, error)
}

// LogKeys is implemented by hooks whose objects add stable keys (runtimeID, shoot) to the reconcile's logger.
type LogKeys[O client.Object] interface {
	LogValues(obj O) []any
}

// GoneHandler is implemented by hooks that act when the object no longer exists (orphans, metrics to forget).
// s.Obj is the zero value; s.Rebase tells whether the object exists after all (a cache that did not see it yet).
type GoneHandler[O client.Object] interface {
	Gone(ctx context.Context, s *State[O], now time.Time) (Result, error)
}

// Event is something worth telling people about, recorded on the object (events.k8s.io) and logged: the core's
// type, so the use cases' events are recorded as they are. An empty Action is recorded as the Reason.
type Event = ports.Event

// Result is what a hook decided beyond the status.
type Result struct {
	// RequeueAfter asks to look again after this long without an event (0: wait for an event).
	RequeueAfter time.Duration
	// Retry asks for a rate-limited retry with this error, after the status was written and events recorded.
	Retry error
	// Events are recorded on the object in order.
	Events []Event
	// ClearAnnotations are annotations the reconcile consumed (force flags); they are removed after the status.
	ClearAnnotations []string
	// Release (Finalize only) removes the finalizer.
	Release bool
}

// Reconciler is the one reconcile skeleton of the operator's controllers: get (NotFound is the hooks' Gone),
// finalizer added before anything is written and removed conflict-free once Finalize releases the object, the
// clock read once per reconcile, events recorded, the status patched once and only when it changed, and the
// hooks' result turned into controller-runtime's.
type Reconciler[O client.Object, Q, R any] struct {
	// Client reads the object from the cache and writes it; Live reads it from the API server.
	Client client.Client
	Live   client.Reader
	Clock  ports.Clock
	// Recorder records events on the object; nil only logs them (objects in another cluster, such as shoots).
	Recorder events.EventRecorder
	// Finalizer is added to every object before Act runs and removed once the hooks' Finalize releases the
	// object; the hooks must implement FinalizeHandler (NewReconciler checks it). Empty: objects get none, and
	// objects being deleted go through Act like the others.
	Finalizer string
	// Predecessors are finalizers a system this operator replaced put on the same objects for the same duty as
	// Finalizer (the previous infrastructure manager's on Runtimes). They are taken over, never added: an object
	// being deleted that carries one of them goes through Finalize as if it carried Finalizer, also when it never
	// got Finalizer (deleted before its first reconcile here), and Release removes them together with Finalizer, in
	// one write. Until then they stay, so the previous system could still finish a deletion after a rollback.
	Predecessors []string
	// New returns an empty object of the kind.
	New   func() O
	Hooks Hooks[O, Q, R]
	// AwaitStatus, when positive, makes a reconcile that patched the status wait, at most this long, until Client's
	// cache shows that write. The next reconcile of the object, whatever event starts it, then decides on the status
	// just written instead of repeating the work it records (0: no wait).
	AwaitStatus time.Duration
	// ReadOnly is for hooks that only read the object (its key, its existence) and write neither its status nor its
	// metadata: Obj is then the cache's own object, read without a deep copy, and must not be changed; the skeleton
	// takes no status baseline and never patches. A Finalizer, ClearAnnotations and Release need a writable object:
	// NewReconciler refuses a Finalizer, and a pass asking for either fails.
	ReadOnly bool
}

// NewReconciler returns the reconciler r describes, or an error when its parts do not fit: a Finalizer whose
// hooks have no Finalize would keep every deleted object forever.
func NewReconciler[O client.Object, Q, R any](r Reconciler[O, Q, R]) (*Reconciler[O, Q, R], error) {
	if r.Finalizer != "" {
		if _, ok := r.Hooks.(FinalizeHandler[O]); !ok {
			return nil, fmt.Errorf("reconciler with finalizer %s: its hooks (%T) have no Finalize", r.Finalizer, r.Hooks)
		}
		if r.ReadOnly {
			return nil, fmt.Errorf("reconciler with finalizer %s: a read-only reconciler cannot hold a finalizer", r.Finalizer)
		}
	}
	return &r, nil
}

// State is one reconcile's view of the object: the object the hooks work on and the baseline of the status patch.
type State[O client.Object] struct {
	// Obj is the object this reconcile works on. Hooks write its status; after Rebase it is the live object.
	Obj    O
	before O
	key    client.ObjectKey
	live   client.Reader
	newObj func() O
	// rebased is true once Obj was read from the API server in this reconcile.
	rebased bool
}

// Key is the object's namespace and name.
func (s *State[O]) Key() client.ObjectKey { return s.key }

// Rebase re-reads the object from the API server and makes it both the object the hooks work on and the baseline
// of the status patch, so a decision is not taken on a lagging cache and the patch carries only this reconcile's
// changes. exists is false when the object is gone (Obj is then unchanged). A second call reads again.
func (s *State[O]) Rebase(ctx context.Context) (exists bool, err error) {
	fresh := s.newObj()
	if err := s.live.Get(ctx, s.key, fresh); apierrors.IsNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("read %s live: %w", s.key, err)
	}
	s.Obj, s.rebased = fresh, true
	s.before = copyOf(fresh)
	return true, nil
}

// Rebased reports whether Obj was read from the API server in this reconcile.
func (s *State[O]) Rebased() bool { return s.rebased }

// NewState returns the state of a reconcile of the object key whose live reads go to live (for tests of hooks and
// of ports built on the state; the Reconciler makes its own).
func NewState[O client.Object](key client.ObjectKey, live client.Reader, newObj func() O) *State[O] {
	return &State[O]{key: key, live: live, newObj: newObj}
}

// Live reads from the API server (not the cache).
func (s *State[O]) Live() client.Reader { return s.live }

func copyOf[O client.Object](o O) O {
	c, _ := o.DeepCopyObject().(O)
	return c
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler[O, Q, R]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	s := NewState(req.NamespacedName, r.Live, r.New)
	now := r.Clock.Now()
	obj := r.New()
	var opts []client.GetOption
	if r.ReadOnly {
		// A shoot event of the reaper copied the whole shoot twice (the cache's copy and the status baseline) only
		// for its name: at 5,000 Runtimes most of what its pass allocated.
		opts = append(opts, &client.GetOptions{UnsafeDisableDeepCopy: ptr.To(true)})
	}
	if err := r.Client.Get(ctx, req.NamespacedName, obj, opts...); apierrors.IsNotFound(err) {
		gone, ok := r.Hooks.(GoneHandler[O])
		if !ok {
			return ctrl.Result{}, nil
		}
		res, err := gone.Gone(ctx, s, now)
		return r.finish(ctx, s, res, err)
	} else if err != nil {
		return ctrl.Result{}, fmt.Errorf("get %s: %w", req.NamespacedName, err)
	}
	s.Obj = obj
	if !r.ReadOnly {
		s.before = copyOf(obj)
	}
	if keys, ok := r.Hooks.(LogKeys[O]); ok {
		ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues(keys.LogValues(obj)...))
	}
	if r.Finalizer != "" && !obj.GetDeletionTimestamp().IsZero() {
		if !r.holds(obj) {
			return ctrl.Result{}, nil
		}
		fin, ok := r.Hooks.(FinalizeHandler[O])
		if !ok { // a reconciler not built by NewReconciler
			return ctrl.Result{}, fmt.Errorf("finalize %s: the hooks (%T) have no Finalize for finalizer %s", req.NamespacedName,
				r.Hooks, r.Finalizer)
		}
		res, err := fin.Finalize(ctx, s, now)
		return r.finish(ctx, s, res, err)
	}
	if r.Finalizer != "" {
		// Before anything is written: nothing may exist without the guarantee that it is removed with the object.
		if err := EnsureFinalizer(ctx, r.Client, obj, r.Finalizer); err != nil {
			return ctrl.Result{}, err
		}
		s.before.SetFinalizers(obj.GetFinalizers())
	}
	out, err := r.Hooks.Act(ctx, s, r.Hooks.Observe(s), now)
	res := r.Hooks.Status(ctx, s, out, err, now)
	if err != nil && res.Retry == nil {
		res.Retry = err
	}
	return r.finish(ctx, s, res, nil)
}

// finish records the events, patches the status when it changed, clears consumed annotations, removes the
// finalizer when released and turns the result into controller-runtime's.
func (r *Reconciler[O, Q, R]) finish(ctx context.Context, s *State[O], res Result, hookErr error) (ctrl.Result, error) {
	present := !isNil(s.Obj)
	if present {
		r.record(ctx, s.Obj, res.Events)
	} else {
		logEvents(ctx, res.Events)
	}
	var errs []error
	if hookErr != nil {
		errs = append(errs, hookErr)
	}
	if r.ReadOnly && present && (len(res.ClearAnnotations) > 0 || res.Release) {
		// The cached object is shared: clearing an annotation in place would change the cache.
		errs = append(errs, fmt.Errorf("%s: a read-only reconciler cannot clear annotations or release a finalizer", s.key))
	}
	if present && !r.ReadOnly && StatusChanged(s.before, s.Obj) {
		// A merge patch of the status carries no resourceVersion: it cannot conflict with writers of other fields.
		patch := statusMergeFrom{before: s.before}
		if log := ctrl.LoggerFrom(ctx).V(1); log.Enabled() {
			// Which field a reconcile changed: the question behind every unexpected write (e.g. after a restart).
			if data, err := patch.Data(s.Obj); err == nil {
				log.Info("status patch", "patch", string(data))
			}
		}
		if err := r.patchStatus(ctx, s.Obj, patch); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("patch status of %s: %w", s.key, err))
		} else if err == nil && r.AwaitStatus > 0 {
			r.awaitCached(ctx, s.key, s.Obj.GetResourceVersion())
		}
	}
	if present && hookErr == nil && !r.ReadOnly {
		for _, key := range res.ClearAnnotations {
			if _, set := s.Obj.GetAnnotations()[key]; !set {
				continue
			}
			if err := ClearAnnotation(ctx, r.Client, s.Obj, key); err != nil {
				errs = append(errs, err)
			}
		}
		if res.Release && r.Finalizer != "" {
			if err := RemoveFinalizers(ctx, r.Client, r.Live, s.Obj, append([]string{r.Finalizer}, r.Predecessors...)...); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if res.Retry != nil {
		errs = append(errs, res.Retry)
	}
	if len(errs) > 0 {
		return ctrl.Result{}, errors.Join(errs...)
	}
	return ctrl.Result{RequeueAfter: res.RequeueAfter}, nil
}

// holds reports whether obj carries the reconciler's finalizer or one of the predecessors' it took over.
func (r *Reconciler[O, Q, R]) holds(obj O) bool {
	if hasFinalizer(obj, r.Finalizer) {
		return true
	}
	return slices.ContainsFunc(r.Predecessors, func(f string) bool { return hasFinalizer(obj, f) })
}

func (r *Reconciler[O, Q, R]) record(ctx context.Context, obj O, evs []Event) {
	for _, e := range evs {
		if r.Recorder != nil {
			kind := "Normal"
			if e.Warning {
				kind = "Warning"
			}
			action := e.Action
			if action == "" {
				action = e.Reason
			}
			r.Recorder.Eventf(obj, nil, kind, e.Reason, action, "%s", e.Message)
		}
	}
	logEvents(ctx, evs)
}

func logEvents(ctx context.Context, evs []Event) {
	for _, e := range evs {
		ctrl.LoggerFrom(ctx).Info("event", "reason", e.Reason, "message", e.Message, "warning", e.Warning)
	}
}
