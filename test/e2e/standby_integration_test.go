package e2e

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/kymaruntime"
	"github.com/kyma-project/kim/test/testenv"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// leaseName is the operator's leader-election lease (operator/app).
const leaseName = "kim.infrastructuremanager.kyma-project.io"

// TestStandbyWarmsItsCachesIntegration: a replica that does not hold the lease starts the controllers' watches
// (controller-runtime's warmup), so when it takes over it lists nothing, in the KCP or in the garden, before it
// works; meanwhile none of its controllers reconciles or writes anything (the judge of safety mutant 145, controllers
// that do not wait for the lease).
func TestStandbyWarmsItsCachesIntegration(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs garden-in-a-box (run without -short)")
	}
	w := startWorld(t, theWorld)
	ctx := context.Background()
	// The other replica holds the lease until the test hands it over.
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: leaseName},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("the-other-replica"), LeaseDurationSeconds: ptr.To(int32(3600)),
			AcquireTime: &metav1.MicroTime{Time: time.Now()}, RenewTime: &metav1.MicroTime{Time: time.Now()}}}
	if err := w.kcp.Create(ctx, lease); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.kcp.Delete(context.Background(), lease) })
	var names []string
	for i := range 3 {
		rt := keb.WithIdentity(keb.GoldenRuntime(t, "aws"), keb.RuntimeID(0x5ba4d0+i), keb.ShootName(0x5ba4d0+i))
		rt.Namespace = kcpNamespace
		if err := w.kcp.Create(ctx, rt); err != nil {
			t.Fatal(err)
		}
		names = append(names, rt.Name)
		t.Cleanup(func() { _ = w.kcp.Delete(context.Background(), rt) })
	}
	// A GardenerCluster of its own (KEB's shape, for a shoot nobody provisions): the Runtimes reach only the Runtime
	// controller, and every other controller must wait for the lease too.
	gc := keb.GardenerCluster(keb.RuntimeID(0x5ba4df), keb.ShootName(0x5ba4df))
	if err := w.kcp.Create(ctx, gc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.kcp.Delete(context.Background(), gc) })
	reconciled := allReconciles(t)
	lists := &listCounter{}
	opts := testenv.Options(w.project)
	opts.LeaderElection = true
	testenv.RunOperator(t, lists.counted(w.env.KCP, "kcp"), lists.counted(w.env.Garden, "garden"), opts)

	// The standby's warmup lists the shoots; without it nothing of the garden is read before the lease.
	testenv.Eventually(t, time.Minute, "the standby to list the project's shoots (its controllers' watches started)", func() (bool, string) {
		n := lists.snapshot()["garden shoots"]
		return n > 0, fmt.Sprintf("lists so far: %v", lists.snapshot())
	})
	// A moment for the other watches to start and for a reconcile or write that must not happen.
	time.Sleep(3 * time.Second)
	if n := allReconciles(t) - reconciled; n != 0 {
		t.Errorf("the standby's controllers reconciled %.0f times without the lease", n)
	}
	for _, name := range names {
		if got := w.runtime(t, name); len(got.Finalizers) > 0 || got.Status.State != "" {
			t.Errorf("Runtime %s was written by the standby: finalizers %v, state %q", name, got.Finalizers, got.Status.State)
		}
	}
	if err := w.kcp.Get(ctx, client.ObjectKeyFromObject(gc), gc); err != nil || len(gc.Finalizers) > 0 || gc.Status.State != "" {
		t.Errorf("GardenerCluster %s was written by the standby: finalizers %v, state %q (%v)", gc.Name, gc.Finalizers, gc.Status.State, err)
	}
	if t.Failed() {
		return // the hand-over is judged from a standby that kept still: its premise is broken already
	}
	before := lists.snapshot()
	t.Logf("the standby's lists before the hand-over: %v", before)

	// The other replica steps down; the standby takes the lease and works from its caches.
	if err := w.kcp.Delete(ctx, lease); err != nil {
		t.Fatal(err)
	}
	handover := time.Now()
	testenv.Eventually(t, stepTimeout, "the new leader to take on every Runtime", func() (bool, string) {
		var waiting []string
		for _, name := range names {
			if got := w.runtime(t, name); got.Status.State == "" || !slices.Contains(got.Finalizers, kymaruntime.Finalizer) {
				waiting = append(waiting, name)
			}
		}
		return len(waiting) == 0, fmt.Sprintf("not yet taken on: %v", waiting)
	})
	t.Logf("every Runtime taken on %s after the hand-over", time.Since(handover).Round(100*time.Millisecond))
	held := &coordinationv1.Lease{}
	if err := w.kcp.Get(ctx, client.ObjectKeyFromObject(lease), held); err != nil || ptr.Deref(held.Spec.HolderIdentity, "") == "the-other-replica" {
		t.Errorf("lease holder %v (%v); the standby must have taken it", held.Spec.HolderIdentity, err)
	}
	if after := lists.snapshot(); !maps.Equal(before, after) {
		t.Errorf("the new leader listed after taking the lease (its caches were cold): before %v, after %v", before, after)
	}
	// The leader releases the GardenerCluster it took on, so no finalizer outlives the operator in the shared KCP.
	if err := w.kcp.Delete(ctx, gc); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, stepTimeout, "the GardenerCluster to be gone", func() (bool, string) {
		err := w.kcp.Get(ctx, client.ObjectKeyFromObject(gc), &imv1.GardenerCluster{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
}

// allReconciles is how many reconciles of any controller this process counted.
func allReconciles(t *testing.T) float64 {
	t.Helper()
	n, err := testenv.Reconciles("")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// listCounter counts the caches an operator fills (listedResource), by API and resource, e.g. "garden shoots".
type listCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (l *listCounter) counted(cfg *rest.Config, api string) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if resource, ok := listedResource(req); ok {
				l.mu.Lock()
				if l.n == nil {
					l.n = map[string]int{}
				}
				l.n[api+" "+resource]++
				l.mu.Unlock()
			}
			return next.RoundTrip(req)
		})
	})
	return cfg
}

func (l *listCounter) snapshot() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.n)
}

// listedResource is the resource whose cache a request fills: client-go's streaming list (a watch with
// sendInitialEvents) or an informer's list (a GET of .../<resource> at resourceVersion 0). A watch resumed from a
// resourceVersion fills nothing, and a live list (no resourceVersion: the seeds a provisioning reads) is work, not
// a cache.
func listedResource(req *http.Request) (string, bool) {
	q := req.URL.Query()
	fills := q.Get("sendInitialEvents") == "true" || (q.Get("watch") != "true" && q.Get("resourceVersion") == "0")
	if req.Method != http.MethodGet || !fills {
		return "", false
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	// /api/v1/<r>, /api/v1/namespaces/<ns>/<r>, /apis/<g>/<v>/<r>, /apis/<g>/<v>/namespaces/<ns>/<r>
	prefix := 2
	if parts[0] == "apis" {
		prefix = 3
	}
	rest := parts[min(prefix, len(parts)):]
	if len(rest) >= 2 && rest[0] == "namespaces" {
		rest = rest[2:]
	}
	if len(rest) != 1 {
		return "", false
	}
	return rest[0], true
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
