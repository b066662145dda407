package probe

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

const (
	ns  = "kcp-system"
	idA = "dc444d82-d848-42a4-99e9-3f0db746e15e"
	idB = "36d8c88a-f878-4800-993a-f885fc35791d"
	// customer is a customer's runtime that someone labelled as a probe's.
	customer = "5d1e0c9a-7b3f-4e2d-8a61-c0ffee000001"
)

// kcp is the KCP of a unit test: a fake API server with a simulated operator (a created Runtime is Ready at once and
// has its kubeconfig Secret) that records every request outside what the shipped Role and admission policy allow
// the probe (config/probe: get and delete of the Runtimes named ids, get of their kubeconfig Secrets, create of
// Runtimes named ids). The requests still go through, so a test sees what a defect would do with them.
type kcp struct {
	client.Client
	ids []string

	mu      sync.Mutex
	outside []string
	// asTest: the test itself is reading, not the probe.
	asTest bool
}

func newKCP(t *testing.T, ids []string, objs ...client.Object) *kcp {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := imv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	k := &kcp{ids: ids}
	k.Client = fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			k.check("get", obj, key.Name)
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			k.record(fmt.Sprintf("list %T", list))
			return c.List(ctx, list, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			k.check("delete", obj, obj.GetName())
			return c.Delete(ctx, obj, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			k.check("create", obj, obj.GetName())
			rt, ok := obj.(*imv1.Runtime)
			if !ok {
				return c.Create(ctx, obj, opts...)
			}
			// The operator at its fastest: Ready for the generation, the kubeconfig written.
			rt.Status = imv1.RuntimeStatus{State: imv1.RuntimeStateReady, ObservedGeneration: rt.Generation}
			if err := c.Create(ctx, rt, opts...); err != nil {
				return err
			}
			return c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: rt.Namespace, Name: kubeconfig.SecretName(rt.Name)},
				Data: map[string][]byte{kubeconfig.SecretKey: []byte("kubeconfig of " + rt.Name)}})
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			k.record(fmt.Sprintf("update %T %s", obj, obj.GetName()))
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			k.record(fmt.Sprintf("patch %T %s", obj, obj.GetName()))
			return c.Patch(ctx, obj, patch, opts...)
		},
	}).Build()
	return k
}

// check records a request the probe's Role and policy would refuse.
func (k *kcp) check(verb string, obj client.Object, name string) {
	var allowed bool
	switch obj.(type) {
	case *imv1.Runtime:
		allowed = slices.Contains(k.ids, name) && slices.Contains([]string{"get", "delete", "create"}, verb)
	case *corev1.Secret:
		allowed = verb == "get" && slices.ContainsFunc(k.ids, func(id string) bool { return kubeconfig.SecretName(id) == name })
	}
	if !allowed {
		k.record(fmt.Sprintf("%s %T %s", verb, obj, name))
	}
}

func (k *kcp) record(req string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.asTest {
		k.outside = append(k.outside, req)
	}
}

func (k *kcp) requestsOutsideRole() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.outside)
}

func (k *kcp) exists(t *testing.T, name string) bool {
	t.Helper()
	k.mu.Lock()
	k.asTest = true
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		k.asTest = false
		k.mu.Unlock()
	}()
	err := k.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &imv1.Runtime{})
	return err == nil
}

// runtimeAt is a Runtime created at created, labelled as a probe's.
func runtimeAt(name string, created time.Time) *imv1.Runtime {
	return &imv1.Runtime{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(created),
		Labels: map[string]string{LabelProbe: "true"}}, Spec: imv1.RuntimeSpec{Shoot: imv1.RuntimeShoot{Name: "p-old"}}}
}

// runtimeAPI is the runtime's API server as the issued kubeconfig reaches it.
func runtimeAPI([]byte) (kubernetes.Interface, error) {
	cs := kubefake.NewClientset()
	cs.PrependReactor("create", "selfsubjectreviews", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, &authenticationv1.SelfSubjectReview{Status: authenticationv1.SelfSubjectReviewStatus{
			UserInfo: authenticationv1.UserInfo{Username: "admin"}}}, nil
	})
	return cs, nil
}

func prober(k *kcp, ids []string, now time.Time) *Prober {
	return &Prober{KCP: k, Now: func() time.Time { return now }, Options: Options{Namespace: ns, RuntimeIDs: ids,
		Template:     &imv1.Runtime{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{imv1.LabelBrokerPlanName: "trial"}}},
		ReadyTimeout: 5 * time.Second, DeleteTimeout: 5 * time.Second, PollInterval: time.Millisecond, RuntimeClient: runtimeAPI}}
}

// TestRunTouchesOnlyItsRuntimeIDs: the probe deletes the Runtime an earlier run left under one of its IDs, leaves a
// customer's Runtime alone although it carries the probe's label, provisions under its other ID (not the one just
// cleaned up, whose cluster may still be being deleted), and sends no request its Role and admission policy refuse:
// no list, no other Runtime, no other Secret, no create under another name.
func TestRunTouchesOnlyItsRuntimeIDs(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 17, 0, 0, time.UTC)
	ids := []string{idA, idB}
	k := newKCP(t, ids, runtimeAt(idA, now.Add(-time.Hour)), runtimeAt(customer, now.Add(-time.Hour)))
	res := prober(k, ids, now).Run(context.Background())
	if !res.Success {
		t.Fatalf("the probe failed: %+v", res)
	}
	if res.RuntimeID != idB {
		t.Errorf("the probe provisioned under %q, want %s (its free ID, not the one it just cleaned up)", res.RuntimeID, idB)
	}
	if res.OrphansCleaned != 1 || k.exists(t, idA) {
		t.Errorf("orphans cleaned %d, earlier run's Runtime still there: %t; want it deleted", res.OrphansCleaned, k.exists(t, idA))
	}
	if !k.exists(t, customer) {
		t.Error("the probe deleted a customer's Runtime that carries the probe's label")
	}
	if out := k.requestsOutsideRole(); len(out) > 0 {
		t.Errorf("requests outside the probe's Role and admission policy: %s", strings.Join(out, "; "))
	}
	if res.User != "admin" {
		t.Errorf("user %q, want the runtime's answer", res.User)
	}
}

// TestCleanupPicksAFreeRuntimeID: which ID a run provisions under, and what it deletes first.
func TestCleanupPicksAFreeRuntimeID(t *testing.T) {
	started := time.Date(2026, 5, 1, 12, 17, 0, 0, time.UTC)
	earlier, later := started.Add(-time.Hour), started.Add(time.Minute)
	for _, tc := range []struct {
		name          string
		existing      map[string]time.Time
		want          string
		cleaned       int
		kept, deleted []string
		wantErr       bool
	}{
		{name: "nothing left", want: idA},
		{name: "the first one left", existing: map[string]time.Time{idA: earlier}, want: idB, cleaned: 1, deleted: []string{idA}},
		{name: "the second one left", existing: map[string]time.Time{idB: earlier}, want: idA, cleaned: 1, deleted: []string{idB}},
		{name: "both left", existing: map[string]time.Time{idA: earlier, idB: earlier}, want: idA, cleaned: 2, deleted: []string{idA, idB}},
		{name: "another run holds the first", existing: map[string]time.Time{idA: later}, want: idB, kept: []string{idA}},
		{name: "another run holds the first, the second left", existing: map[string]time.Time{idA: later, idB: earlier}, want: idB,
			cleaned: 1, kept: []string{idA}, deleted: []string{idB}},
		{name: "other runs hold both", existing: map[string]time.Time{idA: later, idB: later}, wantErr: true, kept: []string{idA, idB}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var objs []client.Object
			for id, at := range tc.existing {
				objs = append(objs, runtimeAt(id, at))
			}
			ids := []string{idA, idB}
			k := newKCP(t, ids, objs...)
			got, n, err := prober(k, ids, started).cleanup(context.Background(), started)
			if (err != nil) != tc.wantErr || got != tc.want || n != tc.cleaned {
				t.Errorf("cleanup = %q, %d, %v; want %q, %d, error %t", got, n, err, tc.want, tc.cleaned, tc.wantErr)
			}
			for _, id := range tc.kept {
				if !k.exists(t, id) {
					t.Errorf("Runtime %s of a run that started later was deleted", id)
				}
			}
			for _, id := range tc.deleted {
				if k.exists(t, id) {
					t.Errorf("Runtime %s an earlier run left is still there", id)
				}
			}
			if out := k.requestsOutsideRole(); len(out) > 0 {
				t.Errorf("requests outside the probe's Role: %s", strings.Join(out, "; "))
			}
		})
	}
}

// TestRunWithoutRuntimeIDs is `kim probe` by hand: a fresh random runtime ID, and nothing else is touched, also not
// Runtimes labelled as the probe's.
func TestRunWithoutRuntimeIDs(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 17, 0, 0, time.UTC)
	k := newKCP(t, nil, runtimeAt(customer, now.Add(-time.Hour)))
	res := prober(k, nil, now).Run(context.Background())
	if !res.Success || res.OrphansCleaned != 0 || !runtimeID.MatchString(res.RuntimeID) {
		t.Fatalf("a probe without runtime IDs: %+v; want success under a fresh UUID, nothing cleaned", res)
	}
	if !k.exists(t, customer) {
		t.Error("the probe deleted a Runtime it did not create")
	}
	// The Role of a person running the probe is theirs; the probe still asks about nothing but its own Runtime and
	// Secret.
	for _, req := range k.requestsOutsideRole() {
		if !strings.Contains(req, res.RuntimeID) {
			t.Errorf("request about something but its own Runtime: %s", req)
		}
	}
}

// TestRunRecordsWhenItFinished: the result's Finished is the clock at the end of the run (the metrics' last-run
// timestamp and total time are computed from it).
func TestRunRecordsWhenItFinished(t *testing.T) {
	start := time.Date(2026, 5, 1, 12, 17, 0, 0, time.UTC)
	clock := start
	p := prober(newKCP(t, nil), nil, start)
	p.Now = func() time.Time { clock = clock.Add(time.Second); return clock }
	res := p.Run(context.Background())
	if !res.Success {
		t.Fatalf("the probe failed: %+v", res)
	}
	if !res.Finished.After(res.Started) || !res.Finished.Equal(clock) {
		t.Errorf("started %s, finished %s; want finished at the last reading of the clock %s", res.Started, res.Finished, clock)
	}
}

// TestInterruptedRunIsNoVerdict: a run whose context is cancelled (Ctrl-C) is reported as interrupted, with the
// phase it stopped in, and tells its progress as it goes.
func TestInterruptedRunIsNoVerdict(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 17, 0, 0, time.UTC)
	ctx, cancel := context.WithCancel(context.Background())
	p := prober(newKCP(t, nil), nil, now)
	p.ReadyTimeout = time.Minute
	var lines []string
	p.Progress = func(format string, args ...any) {
		lines = append(lines, fmt.Sprintf(format, args...))
		if strings.HasPrefix(lines[len(lines)-1], "phase ready") {
			cancel()
		}
	}
	res := p.Run(ctx)
	if res.Success || !res.Interrupted || res.Failed != PhaseReady {
		t.Errorf("result %+v; want interrupted in phase %s", res, PhaseReady)
	}
	if len(lines) < 4 || lines[0] != "phase cleanup ..." || !strings.HasPrefix(lines[len(lines)-1], "phase ready failed") {
		t.Errorf("progress lines %q; want every phase's start and end up to the failed ready", lines)
	}
	// A failure that is not an interruption stays a verdict.
	if res := prober(newKCP(t, nil), []string{"not-a-uuid"}, now).Run(context.Background()); res.Interrupted {
		t.Errorf("a failed run reported as interrupted: %+v", res)
	}
}

// TestRunRefusesInvalidRuntimeIDs: IDs that are no Runtime names of KEB's form, or one given twice, stop the run
// before any request.
func TestRunRefusesInvalidRuntimeIDs(t *testing.T) {
	for _, ids := range [][]string{{"DC444D82-D848-42A4-99E9-3F0DB746E15E"}, {"probe"}, {""}, {idA, idA}, {idA, "kubeconfig-" + idB}} {
		k := newKCP(t, ids)
		res := prober(k, ids, time.Now()).Run(context.Background())
		if res.Success || res.Failed != PhaseCleanup || len(res.Phases) != 0 {
			t.Errorf("runtime IDs %q: %+v; want a failure before any phase", ids, res)
		}
	}
}

func TestParseRuntimeIDs(t *testing.T) {
	for in, want := range map[string][]string{"": nil, idA: {idA}, idA + "," + idB: {idA, idB}, " " + idA + " , " + idB + ",": {idA, idB}} {
		got, err := ParseRuntimeIDs(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseRuntimeIDs(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"x", idA + "," + idA, strings.ToUpper(idA)} {
		if _, err := ParseRuntimeIDs(in); err == nil || !strings.Contains(err.Error(), "--runtime-ids") {
			t.Errorf("ParseRuntimeIDs(%q): %v; want an error naming the flag", in, err)
		}
	}
}
