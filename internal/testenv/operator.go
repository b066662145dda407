package testenv

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kyma-project/kim/operator/app"
)

// Operator is the operator running in this process.
type Operator struct {
	// Manager is the running manager; its client reads through the operator's cache (what its reconcilers see).
	Manager manager.Manager
	cancel  context.CancelFunc
	done    chan struct{}
	err     error
	once    sync.Once
	// residue is what stopped operators of this process left in the shared queue gauges.
	residue map[string]float64
}

// Options are the manager options tests start the operator with: the defaults without metrics endpoint, probes
// and leader election, a generous Gardener rate limit, and restarts in one process allowed.
func Options(project string) app.Options {
	opts := app.DefaultOptions()
	opts.MetricsAddr, opts.ProbeAddr, opts.LeaderElection = "0", "0", false
	opts.GardenerProject = project
	opts.GardenerQPS, opts.GardenerBurst = 500, 1000
	opts.SkipNameValidation = true
	return opts
}

// StartOperator creates the watched namespaces (if missing), starts the manager with opts and returns once its
// caches are synced. A manager that fails before is an error, as is a cache that does not sync within 2 minutes.
func StartOperator(ctx context.Context, kcp, garden *rest.Config, opts app.Options, overrides ...app.Override) (*Operator, error) {
	c, err := client.New(kcp, client.Options{})
	if err != nil {
		return nil, err
	}
	for _, ns := range opts.WatchNamespaces {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	mgr, err := app.NewManager(kcp, garden, opts, overrides...)
	if err != nil {
		return nil, err
	}
	residue, err := busyness()
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	o := &Operator{Manager: mgr, cancel: cancel, done: make(chan struct{}), residue: residue}
	go func() {
		o.err = mgr.Start(runCtx)
		close(o.done)
	}()
	syncCtx, stopWaiting := context.WithTimeout(runCtx, 2*time.Minute)
	defer stopWaiting()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		cancel()
		<-o.done
		if o.err != nil {
			return nil, fmt.Errorf("operator: %w", o.err)
		}
		return nil, errors.New("operator caches did not sync within 2m")
	}
	return o, nil
}

// Done is closed when the manager has stopped; Err then tells why.
func (o *Operator) Done() <-chan struct{} { return o.done }

// Err is the manager's error once Done is closed (nil after a clean stop).
func (o *Operator) Err() error {
	<-o.done
	if errors.Is(o.err, context.Canceled) {
		return nil
	}
	return o.err
}

// Stop stops the manager, waits until it has, and returns its error (idempotent).
func (o *Operator) Stop() error {
	o.once.Do(o.cancel)
	return o.Err()
}

// RunOperator starts the operator for a test and stops it when the test ends; a manager error fails the test (a
// manager that failed would make the later assertions meaningless).
func RunOperator(t testing.TB, kcp, garden *rest.Config, opts app.Options, overrides ...app.Override) *Operator {
	t.Helper()
	o, err := StartOperator(context.Background(), kcp, garden, opts, overrides...)
	if err != nil {
		t.Fatalf("start operator: %v", err)
	}
	t.Cleanup(func() {
		if err := o.Stop(); err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return o
}
