// Package gardenlet is the simulated gardenlet of the garden-in-a-box: a controller against the garden that
// drives Shoot status the way Gardener does from the outside (lastOperation Create/Reconcile/Delete with
// rising progress, hibernation, seed binding, shoot CA objects and advertised addresses), with per-shoot
// (annotations) or global (Options) fault injection. Nothing is created in any cloud.
package gardenlet

import (
	"context"
	"fmt"
	"sync"
	"time"

	authenticationv1alpha1 "github.com/gardener/gardener/pkg/apis/authentication/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kyma-project/kim/test/sandbox/runtimeapi"
)

// Options configure the simulated gardenlet. Zero durations get defaults; see Defaults.
type Options struct {
	// CreateDuration, ReconcileDuration and DeleteDuration are how long an operation stays in Processing.
	CreateDuration, ReconcileDuration, DeleteDuration time.Duration
	// ProgressInterval is how often progress is reported while Processing.
	ProgressInterval time.Duration
	// FailWith makes every operation (or only FailOperation) of every shoot fail with these error codes.
	FailWith string
	// FailOperation restricts FailWith to one operation type; empty means all.
	FailOperation gardencorev1beta1.LastOperationType
	// StuckDeletion keeps every deletion in Processing forever.
	StuckDeletion bool
	// MaxConcurrentReconciles bounds parallel shoot reconciliations (default 10).
	MaxConcurrentReconciles int
}

// Defaults returns the timing used when Options leave it empty: fast enough for tests, slow enough to
// watch in the sandbox.
func Defaults() Options {
	return Options{
		CreateDuration: 5 * time.Second, ReconcileDuration: 2 * time.Second, DeleteDuration: 2 * time.Second,
		ProgressInterval: time.Second, MaxConcurrentReconciles: 10,
	}
}

func (o Options) withDefaults() Options {
	d := Defaults()
	if o.CreateDuration == 0 {
		o.CreateDuration = d.CreateDuration
	}
	if o.ReconcileDuration == 0 {
		o.ReconcileDuration = d.ReconcileDuration
	}
	if o.DeleteDuration == 0 {
		o.DeleteDuration = d.DeleteDuration
	}
	if o.ProgressInterval == 0 {
		o.ProgressInterval = d.ProgressInterval
	}
	if o.MaxConcurrentReconciles == 0 {
		o.MaxConcurrentReconciles = d.MaxConcurrentReconciles
	}
	return o
}

// Scheme returns a scheme with the Kubernetes core types and the Gardener APIs the sandbox uses.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, gardencorev1beta1.AddToScheme, securityv1alpha1.AddToScheme, authenticationv1alpha1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(fmt.Sprintf("build sandbox scheme: %v", err)) // static registration: cannot fail at runtime
		}
	}
	return s
}

// Gardenlet is the simulated gardenlet.
type Gardenlet struct {
	opts    Options
	mgr     manager.Manager
	client  client.Client
	runtime *runtimeapi.Pool
	log     logr.Logger

	mu  sync.Mutex
	ops map[types.UID]operation
	// deletions is the log of shoot deletions (Deletions); deletionSeen its index by UID.
	deletions    []Deletion
	deletionSeen map[types.UID]bool
	// rules are the faults of FailMatching.
	rules []*faultRule
	// held is read-locked by every reconcile and write-locked by Hold.
	held sync.RWMutex
}

// operation is the in-memory record of the operation in progress for a shoot.
type operation struct {
	kind       gardencorev1beta1.LastOperationType
	generation int64
	started    time.Time
}

// New creates the gardenlet controller against the garden (not started yet).
func New(garden *rest.Config, pool *runtimeapi.Pool, opts Options, log logr.Logger) (*Gardenlet, error) {
	mgr, err := ctrl.NewManager(garden, ctrl.Options{
		Scheme:                 Scheme(),
		Logger:                 log,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return nil, fmt.Errorf("create gardenlet manager: %w", err)
	}
	g := &Gardenlet{opts: opts.withDefaults(), mgr: mgr, client: mgr.GetClient(), runtime: pool, log: log, ops: map[types.UID]operation{}}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("sandbox-gardenlet").
		For(&gardencorev1beta1.Shoot{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: g.opts.MaxConcurrentReconciles, SkipNameValidation: ptr.To(true)}).
		Complete(g)
	if err != nil {
		return nil, fmt.Errorf("create gardenlet controller: %w", err)
	}
	return g, nil
}

// Run runs the controller until ctx ends. started receives nil once the caches are synced, or the start error.
func (g *Gardenlet) Run(ctx context.Context, started chan<- error) error {
	errCh := make(chan error, 1)
	go func() { errCh <- g.mgr.Start(ctx) }()
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !g.mgr.GetCache().WaitForCacheSync(syncCtx) {
		err := fmt.Errorf("gardenlet cache did not sync")
		select {
		case e := <-errCh:
			if e != nil {
				err = e
			}
		default:
		}
		started <- err
		return err
	}
	started <- nil
	return <-errCh
}

// Hold keeps the gardenlet from acting on any shoot until release is called; reconciles in progress finish first.
// The fleet harness writes shoots in their final state (spec, then status): seen between the two writes, a shoot
// without a last operation would get a simulated Create of its own. Events that arrive meanwhile wait in the queue.
func (g *Gardenlet) Hold() (release func()) {
	g.held.Lock()
	var once sync.Once
	return func() { once.Do(g.held.Unlock) }
}

// Options returns the effective options (with defaults).
func (g *Gardenlet) Options() Options { return g.opts }
