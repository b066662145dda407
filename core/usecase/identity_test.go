package usecase_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

var identityStart = time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)

// identityWorld is one KCP namespace with a reachable runtime and a ServiceAccountKubeconfig whose status the
// world keeps the way the controller does (observedGeneration, Ready, runtime objects).
type identityWorld struct {
	t     *testing.T
	clock *fake.Clock
	ids   *fake.RuntimeIdentities
	store *fake.IdentityKubeconfigStore
	uc    *usecase.IdentityKubeconfigs
	rt    ports.RuntimeRef
	req   sakubeconfig.Request
	// The status, as the controller records it.
	observed int64
	ready    bool
	held     bool
}

func newIdentityWorld(t *testing.T, validity time.Duration, rules ...sakubeconfig.Rule) *identityWorld {
	t.Helper()
	clock := fake.NewClock(identityStart)
	w := &identityWorld{t: t, clock: clock, ids: fake.NewRuntimeIdentities(clock.Now), store: fake.NewIdentityKubeconfigStore(),
		rt: ports.RuntimeRef{Namespace: "kcp-system", RuntimeID: "rid"}}
	w.ids.AddRuntime(w.rt, sakubeconfig.Endpoint{Server: "https://api.rid.example", CAData: []byte("ca-1")})
	w.uc = &usecase.IdentityKubeconfigs{Runtimes: w.ids, Secrets: w.store, RotationFraction: 0.6, CleanupTimeout: 5 * time.Minute}
	if len(rules) == 0 {
		rules = []sakubeconfig.Rule{{Namespaces: []string{"kyma-system"}, APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}}
	}
	w.req = sakubeconfig.Request{Owner: sakubeconfig.Owner{Namespace: "kcp-system", Name: "lifecycle-manager-rid"}, Generation: 1,
		RuntimeID: "rid", ServiceAccount: sakubeconfig.ServiceAccount{Namespace: "kyma-system", Name: "lifecycle-manager"},
		Rules: rules, Validity: validity, SecretName: "lifecycle-manager-kubeconfig"}
	return w
}

func (w *identityWorld) state() usecase.IdentityState {
	return usecase.IdentityState{Applied: w.observed == w.req.Generation && w.ready, Held: w.held}
}

// reconcile runs the use case with the request as cache and API server see it alike.
func (w *identityWorld) reconcile() usecase.IdentityResult {
	w.t.Helper()
	return w.reconcileSeeing(w.req)
}

// reconcileSeeing runs the use case on cached, a possibly stale view; the live view is w.req.
func (w *identityWorld) reconcileSeeing(cached sakubeconfig.Request) usecase.IdentityResult {
	w.t.Helper()
	live := func(context.Context) (sakubeconfig.Request, usecase.IdentityState, bool, error) {
		return w.req, w.state(), true, nil
	}
	res, err := w.uc.Reconcile(context.Background(), cached, w.state(), w.clock.Now(), live)
	if err != nil {
		w.t.Fatalf("reconcile: %v", err)
	}
	w.note(res)
	return res
}

// note records a result in the status, as the controller does.
func (w *identityWorld) note(res usecase.IdentityResult) {
	if res.Reason != "" {
		w.ready = res.Ready
	}
	if res.Observed {
		w.observed = w.req.Generation
	}
	if res.ObjectsChanged {
		w.held = len(res.Objects) > 0
	}
	if res.ClearForce {
		w.req.Force = false
	}
}

func (w *identityWorld) secretRef() ports.SecretRef {
	return ports.SecretRef{Namespace: "kcp-system", Name: w.req.SecretName, Key: sakubeconfig.SecretKey}
}

// token reads the token of the kubeconfig in the Secret ("" when there is none).
func (w *identityWorld) token() string {
	w.t.Helper()
	data, err := w.store.Secrets.Kubeconfig(w.secretRef())
	if err != nil {
		return ""
	}
	_, rest, ok := strings.Cut(string(data), "token: ")
	if !ok {
		w.t.Fatalf("kubeconfig without token:\n%s", data)
	}
	var tok string
	if err := json.Unmarshal([]byte(strings.SplitN(rest, "\n", 2)[0]), &tok); err != nil {
		w.t.Fatal(err)
	}
	return tok
}

// whoami authenticates the Secret's token at the runtime, as a consumer using the kubeconfig would.
func (w *identityWorld) whoami() (string, error) {
	return w.ids.WhoAmI(w.rt, w.token())
}

func wantReason(t *testing.T, res usecase.IdentityResult, reason string) {
	t.Helper()
	if res.Reason != reason {
		t.Fatalf("reason %s (%s), want %s", res.Reason, res.Message, reason)
	}
}

func TestIdentityIssuesOnceAndCallsNothingUntilDue(t *testing.T) {
	w := newIdentityWorld(t, 10*time.Minute)
	res := w.reconcile()
	wantReason(t, res, sakubeconfig.ReasonKubeconfigIssued)
	if !res.Ready || !res.Observed || len(res.Objects) != 3 || !res.ExpiresAt.Equal(identityStart.Add(10*time.Minute)) {
		t.Errorf("result %+v", res)
	}
	if user, err := w.whoami(); err != nil || user != "system:serviceaccount:kyma-system:lifecycle-manager" {
		t.Fatalf("the kubeconfig authenticates as %q (%v)", user, err)
	}
	if res.RequeueAfter < 6*time.Minute || res.RequeueAfter >= 10*time.Minute {
		t.Errorf("next look after %s, want at the rotation point within [6m, 10m)", res.RequeueAfter)
	}
	for _, e := range res.Events {
		if strings.Contains(e.Message, w.token()) {
			t.Errorf("event %s carries the token", e.Reason)
		}
	}
	requests := w.ids.Requests()
	for range 5 {
		w.clock.Step(time.Minute)
		wantReason(t, w.reconcile(), sakubeconfig.ReasonKubeconfigValid)
	}
	if n := w.ids.Requests() - requests; n != 0 {
		t.Errorf("%d requests to the runtime while the token was not due, want 0", n)
	}
}

func TestIdentityRestartMakesNoRuntimeCalls(t *testing.T) {
	w := newIdentityWorld(t, 24*time.Hour)
	wantReason(t, w.reconcile(), sakubeconfig.ReasonKubeconfigIssued)
	tokens, requests := w.ids.TokenRequests(), w.ids.Requests()
	// A restarted operator: a new use case on the same runtime, Secrets and status, and a cache that starts empty
	// of nothing but our own writes.
	w.uc = &usecase.IdentityKubeconfigs{Runtimes: w.ids, Secrets: w.store, RotationFraction: 0.6}
	w.clock.Step(3 * time.Hour)
	for range 3 {
		wantReason(t, w.reconcile(), sakubeconfig.ReasonKubeconfigValid)
	}
	if dt, dr := w.ids.TokenRequests()-tokens, w.ids.Requests()-requests; dt != 0 || dr != 0 {
		t.Errorf("restart: %d TokenRequests and %d runtime requests for a token not due, want 0 and 0", dt, dr)
	}
}

// TestIdentityRotationHasNoGap drives the use case the way the controller does (at the requeue time it asks for)
// over six hours of 10-minute tokens, while a consumer authenticates with the Secret's kubeconfig every 10 s.
func TestIdentityRotationHasNoGap(t *testing.T) {
	w := newIdentityWorld(t, 10*time.Minute)
	next := identityStart
	end := identityStart.Add(6 * time.Hour)
	reads, failed, rotations := 0, 0, 0
	for now := identityStart; now.Before(end); now = now.Add(10 * time.Second) {
		w.clock.Set(now)
		if !now.Before(next) {
			res := w.reconcile()
			if res.Reason == sakubeconfig.ReasonKubeconfigRotated {
				rotations++
			}
			next = now.Add(res.RequeueAfter)
		}
		reads++
		if _, err := w.whoami(); err != nil {
			failed++
		}
	}
	if failed != 0 {
		t.Errorf("%d of %d reads failed", failed, reads)
	}
	// 6h of 10-minute tokens rotated at 60-65% of their life: about 6h / 6.2m.
	if rotations < 50 || rotations > 60 {
		t.Errorf("%d rotations in 6h, want about 56", rotations)
	}
	if w.ids.TokenRequests() != rotations+1 {
		t.Errorf("%d TokenRequests for %d rotations and the first issue", w.ids.TokenRequests(), rotations)
	}
}

func TestIdentityForcedRotation(t *testing.T) {
	w := newIdentityWorld(t, 24*time.Hour)
	w.reconcile()
	first := w.token()
	w.req.Force = true
	res := w.reconcile()
	wantReason(t, res, sakubeconfig.ReasonKubeconfigRotated)
	if !res.ClearForce || w.token() == first || w.ids.TokenRequests() != 2 {
		t.Errorf("forced rotation: clear %v, new token %v, %d TokenRequests", res.ClearForce, w.token() != first, w.ids.TokenRequests())
	}
	// The cache still shows the annotation the last reconcile removed: the live read stops a second rotation.
	stale := w.req
	stale.Force = true
	wantReason(t, w.reconcileSeeing(stale), sakubeconfig.ReasonKubeconfigValid)
	if w.ids.TokenRequests() != 2 {
		t.Errorf("a stale force annotation issued another token (%d TokenRequests)", w.ids.TokenRequests())
	}
}

func TestIdentityRuleChangesApplyInPlace(t *testing.T) {
	w := newIdentityWorld(t, 24*time.Hour)
	w.reconcile()
	token := w.token()
	w.req.Generation = 2
	w.req.Rules = append(w.req.Rules, sakubeconfig.Rule{Namespaces: []string{"istio-system"}, APIGroups: []string{""},
		Resources: []string{"configmaps"}, Verbs: []string{"get"}})
	res := w.reconcile()
	wantReason(t, res, sakubeconfig.ReasonRulesApplied)
	if w.token() != token || w.ids.TokenRequests() != 1 {
		t.Errorf("a rule change replaced the kubeconfig (%d TokenRequests)", w.ids.TokenRequests())
	}
	if _, err := w.whoami(); err != nil {
		t.Errorf("the kubeconfig stopped working after a rule change: %v", err)
	}
	want := sakubeconfig.Desired(w.req).Refs()
	if got := w.ids.Objects(w.rt, w.req.Owner); len(got) != len(want) || len(res.Objects) != len(want) {
		t.Errorf("runtime holds %v, result says %v, want %v", got, res.Objects, want)
	}
	requests := w.ids.Requests()
	wantReason(t, w.reconcile(), sakubeconfig.ReasonKubeconfigValid)
	if w.ids.Requests() != requests {
		t.Error("the applied generation was applied again")
	}
}
