package testenv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
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
	// Identity is what the operator connects with (see GrantBundleRBAC): a test can check what it may not do.
	Identity Identity
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
// kcp and garden are admin configs: the operator runs with exactly the permissions that ship in this repository
// (GrantBundleRBAC), not with theirs.
func StartOperator(ctx context.Context, kcp, garden *rest.Config, opts app.Options, overrides ...app.Override) (*Operator, error) {
	return StartOperatorFrom(ctx, RepoRoot(), kcp, garden, opts, overrides...)
}

// StartOperatorFrom is StartOperator with the permissions read from the repository at root (the sandbox finds it
// next to the CRDs it was given).
func StartOperatorFrom(ctx context.Context, root string, kcp, garden *rest.Config, opts app.Options, overrides ...app.Override) (*Operator, error) {
	c, err := client.New(kcp, client.Options{})
	if err != nil {
		return nil, err
	}
	for _, ns := range opts.WatchNamespaces {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	// The Gardener project may come from the configuration file.
	if err := opts.ResolveConfig(); err != nil {
		return nil, err
	}
	id, err := GrantBundleRBAC(ctx, root, kcp, garden, OperatorScope(opts))
	if err != nil {
		return nil, err
	}
	mgr, err := app.NewManager(ctx, id.KCP, id.Garden, opts, overrides...)
	if err != nil {
		return nil, err
	}
	residue, err := busyness()
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	o := &Operator{Manager: mgr, Identity: id, cancel: cancel, done: make(chan struct{}), residue: residue}
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

// OperatorScope is where an operator started with opts is granted its permissions: its namespace (the first
// watched one), the other watched namespaces, the namespace of its leader lease, and its Gardener project.
func OperatorScope(opts app.Options) Scope {
	namespaces := slices.Clone(opts.WatchNamespaces)
	if opts.LeaderElectionNamespace != "" {
		namespaces = append(namespaces, opts.LeaderElectionNamespace)
	}
	return Scope{Namespaces: namespaces, GardenNamespace: opts.GardenNamespace()}
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
	logs := CaptureLogs()
	mark := logs.Mark()
	o, err := StartOperator(context.Background(), kcp, garden, opts, overrides...)
	if err != nil {
		t.Fatalf("start operator: %v", err)
	}
	t.Cleanup(func() {
		if err := o.Stop(); err != nil {
			t.Errorf("manager: %v", err)
		}
		// A test that failed waiting shows what the operator stumbled over meanwhile (an error retried with
		// backoff writes no status, so the last state seen does not tell).
		if t.Failed() {
			if lines := logs.ErrorsSince(mark, 40); len(lines) > 0 {
				t.Logf("the operator's last %d errors during the test:\n%s", len(lines), strings.Join(lines, "\n"))
			}
		}
	})
	return o
}
