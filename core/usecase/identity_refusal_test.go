package usecase_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

func TestIdentityRefusesEscalationUnlessTheLandscapeAllowsSecrets(t *testing.T) {
	// Secrets in a namespace that is neither the ServiceAccount's own nor a system namespace.
	secrets := sakubeconfig.Rule{Namespaces: []string{"istio-system"}, APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}}
	w := newIdentityWorld(t, time.Hour, secrets)
	res := w.reconcile()
	wantReason(t, res, sakubeconfig.ReasonEscalationRefused)
	if !strings.HasPrefix(res.Message, "spec.rules[0]: ") || !res.Observed || res.Ready || len(res.Events) != 1 || !res.Events[0].Warning {
		t.Errorf("refusal %+v", res)
	}
	if w.ids.Requests() != 0 || w.store.Secrets.Exists("kcp-system", w.req.SecretName) {
		t.Error("a refused request reached the runtime or got a Secret")
	}
	w.uc.Access = sakubeconfig.AccessPolicy{ClusterWideSecretsNamespaces: []string{"kcp-system"}}
	wantReason(t, w.reconcile(), sakubeconfig.ReasonKubeconfigIssued)

	// The landscape withdraws the allowance: the request loses what it holds.
	token := w.token()
	w.uc.Access = sakubeconfig.AccessPolicy{}
	res = w.reconcile()
	wantReason(t, res, sakubeconfig.ReasonEscalationRefused)
	if !res.ObjectsChanged || len(res.Objects) != 0 || len(w.ids.Objects(w.rt, w.req.Owner)) != 0 || w.store.Secrets.Exists("kcp-system", w.req.SecretName) {
		t.Errorf("refused after being granted: objects %v, Secret exists %v", w.ids.Objects(w.rt, w.req.Owner), w.store.Secrets.Exists("kcp-system", w.req.SecretName))
	}
	if _, err := w.ids.WhoAmI(w.rt, token); err == nil {
		t.Error("the token of a refused request still authenticates")
	}
	if res.Events[len(res.Events)-1].Reason != sakubeconfig.EventAccessRevoked {
		t.Errorf("events %+v, want AccessRevoked last", res.Events)
	}
	requests := w.ids.Requests()
	wantReason(t, w.reconcile(), sakubeconfig.ReasonEscalationRefused)
	if w.ids.Requests() != requests {
		t.Error("a refused request that holds nothing called the runtime again")
	}
}

func TestIdentityChecksTheBoundClusterRole(t *testing.T) {
	w := newIdentityWorld(t, time.Hour)
	w.req.ClusterRole = &sakubeconfig.ClusterRoleRef{Name: "edit"}
	wantReason(t, w.reconcile(), sakubeconfig.ReasonClusterRoleNotFound)
	w.ids.Put(w.rt, sakubeconfig.ObjectRef{Kind: sakubeconfig.KindClusterRole, Name: "edit"}, nil, nil, []sakubeconfig.Rule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "create"}}})
	res := w.reconcile()
	wantReason(t, res, sakubeconfig.ReasonEscalationRefused)
	if !strings.Contains(res.Message, "spec.clusterRole: ClusterRole edit rule 1") || res.RequeueAfter == 0 {
		t.Errorf("refusal %q requeue %s; want the role's rule named and a later recheck", res.Message, res.RequeueAfter)
	}
	// Bound in kyma-system, the ServiceAccount's own namespace: a system namespace, refused as well.
	w.req.Generation, w.req.ClusterRole.Namespaces = 2, []string{"kyma-system"}
	if res := w.reconcile(); res.Reason != sakubeconfig.ReasonEscalationRefused || !strings.Contains(res.Message, `system namespace "kyma-system"`) {
		t.Fatalf("bound in kyma-system: %s %q", res.Reason, res.Message)
	}
	// The role loses its Secrets rule.
	w.ids.Put(w.rt, sakubeconfig.ObjectRef{Kind: sakubeconfig.KindClusterRole, Name: "edit"}, nil, nil, []sakubeconfig.Rule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}})
	w.req.Generation = 3
	wantReason(t, w.reconcile(), sakubeconfig.ReasonKubeconfigIssued)
}

// A bound ClusterRole is read again on a timer of its own, not only when a token is due: one that grew into
// escalation (or became aggregated) revokes the request within the interval, and no new token is issued.
func TestIdentityRechecksTheBoundClusterRoleOnATimer(t *testing.T) {
	reader := sakubeconfig.ObjectRef{Kind: sakubeconfig.KindClusterRole, Name: "reader"}
	pods := []sakubeconfig.Rule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}
	for _, tc := range []struct {
		name string
		grow func(w *identityWorld)
		want string
	}{
		{"the role grew into Secrets", func(w *identityWorld) {
			w.ids.Put(w.rt, reader, nil, nil, append(pods, sakubeconfig.Rule{APIGroups: []string{""}, Resources: []string{"*/token"}, Verbs: []string{"create"}}))
		}, "*/token"},
		{"the role became aggregated", func(w *identityWorld) { w.ids.SetAggregated(w.rt, "reader", true) }, "aggregated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newIdentityWorld(t, 24*time.Hour)
			w.ids.Put(w.rt, reader, nil, nil, pods)
			w.req.ClusterRole = &sakubeconfig.ClusterRoleRef{Name: "reader"}
			res := w.reconcile()
			wantReason(t, res, sakubeconfig.ReasonKubeconfigIssued)
			if res.RequeueAfter > 10*time.Minute {
				t.Fatalf("next look after %s: a 24h token rotates after ~14h, the bound role must be read again within 10m", res.RequeueAfter)
			}
			token, tokens := w.token(), w.ids.TokenRequests()

			// Nothing changed: the timer reads the role, changes nothing, and sets the next timer.
			w.clock.Step(res.RequeueAfter)
			requests := w.ids.Requests()
			res = w.reconcile()
			wantReason(t, res, sakubeconfig.ReasonKubeconfigValid)
			if w.ids.Requests() != requests+1 || res.RequeueAfter > 10*time.Minute || w.ids.TokenRequests() != tokens {
				t.Fatalf("an unchanged role: %d requests (want 1: the role), next after %s, %d new tokens", w.ids.Requests()-requests, res.RequeueAfter, w.ids.TokenRequests()-tokens)
			}

			tc.grow(w)
			w.clock.Step(res.RequeueAfter)
			res = w.reconcile()
			wantReason(t, res, sakubeconfig.ReasonEscalationRefused)
			if !strings.Contains(res.Message, tc.want) || res.Ready || res.Events[len(res.Events)-1].Reason != sakubeconfig.EventAccessRevoked {
				t.Errorf("refusal %+v", res)
			}
			if len(w.ids.Objects(w.rt, w.req.Owner)) != 0 || w.store.Secrets.Exists("kcp-system", w.req.SecretName) {
				t.Errorf("the refused request still holds objects %v or its Secret", w.ids.Objects(w.rt, w.req.Owner))
			}
			if _, err := w.ids.WhoAmI(w.rt, token); err == nil {
				t.Error("the token of the revoked request still authenticates")
			}
			// Until the role is fixed: refused again, no token.
			w.clock.Step(res.RequeueAfter)
			wantReason(t, w.reconcile(), sakubeconfig.ReasonEscalationRefused)
			if w.ids.TokenRequests() != tokens {
				t.Errorf("%d tokens issued for a refused request", w.ids.TokenRequests()-tokens)
			}
		})
	}
}

// A restart (a new use case, the same status) reads no bound ClusterRole at once: the first checks are spread over
// the interval.
func TestIdentityRoleRecheckAfterARestartIsSpread(t *testing.T) {
	w := newIdentityWorld(t, 24*time.Hour)
	w.ids.Put(w.rt, sakubeconfig.ObjectRef{Kind: sakubeconfig.KindClusterRole, Name: "reader"}, nil, nil,
		[]sakubeconfig.Rule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}})
	w.req.ClusterRole = &sakubeconfig.ClusterRoleRef{Name: "reader"}
	wantReason(t, w.reconcile(), sakubeconfig.ReasonKubeconfigIssued)
	w.uc = &usecase.IdentityKubeconfigs{Runtimes: w.ids, Secrets: w.store, RotationFraction: 0.6}
	requests := w.ids.Requests()
	res := w.reconcile()
	wantReason(t, res, sakubeconfig.ReasonKubeconfigValid)
	if w.ids.Requests() != requests || res.RequeueAfter > 10*time.Minute {
		t.Errorf("after a restart: %d requests, next after %s", w.ids.Requests()-requests, res.RequeueAfter)
	}
}

func TestIdentityReissuesForARecreatedRuntime(t *testing.T) {
	w := newIdentityWorld(t, 24*time.Hour)
	w.reconcile()
	w.ids.SetEndpoint(w.rt, sakubeconfig.Endpoint{Server: "https://api.rid.example", CAData: []byte("ca-2")})
	w.clock.Step(time.Minute)
	res := w.reconcile()
	wantReason(t, res, sakubeconfig.ReasonKubeconfigRotated)
	if !strings.Contains(res.Message, string(sakubeconfig.TriggerRuntimeChanged)) {
		t.Errorf("message %q does not say why", res.Message)
	}
}

func TestIdentityRefusesWhatIsNotItsOwn(t *testing.T) {
	w := newIdentityWorld(t, time.Hour)
	w.store.Secrets.Put("kcp-system", w.req.SecretName, map[string][]byte{"config": []byte("admin")},
		map[string]string{wire.LabelManagedBy: wire.ManagedByValue}, map[string]string{kubeconfig.AnnotationOwner: "kcp-system/rid"})
	wantReason(t, w.reconcile(), sakubeconfig.ReasonSecretNotOwned)
	if data, _ := w.store.Secrets.Kubeconfig(w.secretRef()); string(data) != "admin" || w.ids.Requests() != 0 {
		t.Error("a Secret of someone else was changed, or the runtime called")
	}

	v := newIdentityWorld(t, time.Hour)
	v.ids.Put(v.rt, sakubeconfig.ObjectRef{Kind: sakubeconfig.KindServiceAccount, Namespace: "kyma-system", Name: "lifecycle-manager"},
		map[string]string{"app": "kyma"}, nil, nil)
	res := v.reconcile()
	wantReason(t, res, sakubeconfig.ReasonObjectNotOwned)
	if v.ids.TokenRequests() != 0 || len(v.ids.Objects(v.rt, v.req.Owner)) != 0 {
		t.Error("a customer's ServiceAccount got a token or roles")
	}
}

func TestIdentityWaitsForTheRuntime(t *testing.T) {
	w := newIdentityWorld(t, time.Hour)
	w.ids.DropKubeconfig(w.rt)
	res := w.reconcile()
	wantReason(t, res, sakubeconfig.ReasonWaitingForRuntime)
	if res.RequeueAfter == 0 || res.Observed {
		t.Errorf("waiting: %+v", res)
	}
	w.ids.AddRuntime(w.rt, sakubeconfig.Endpoint{Server: "https://api.rid.example", CAData: []byte("ca")})
	wantReason(t, w.reconcile(), sakubeconfig.ReasonKubeconfigIssued)
	w.ids.SetUnreachable(w.rt, true)
	w.clock.Step(time.Hour)
	wantReason(t, w.reconcile(), sakubeconfig.ReasonRuntimeUnreachable)
}

func TestIdentityDeletion(t *testing.T) {
	ctx := context.Background()
	t.Run("removes the runtime objects and the Secret; the token stops working", func(t *testing.T) {
		w := newIdentityWorld(t, time.Hour)
		w.reconcile()
		token := w.token()
		d, err := w.uc.Delete(ctx, w.req, w.state(), w.clock.Now(), w.clock.Now())
		if err != nil || !d.Release || d.Events[0].Reason != sakubeconfig.EventRuntimeObjectsRemoved {
			t.Fatalf("delete: %+v, %v", d, err)
		}
		if len(w.ids.Objects(w.rt, w.req.Owner)) != 0 || w.store.Secrets.Exists("kcp-system", w.req.SecretName) {
			t.Error("objects or Secret left")
		}
		if _, err := w.ids.WhoAmI(w.rt, token); err == nil {
			t.Error("the token still authenticates")
		}
	})
	t.Run("a runtime that never had the identity lets go without a warning", func(t *testing.T) {
		w := newIdentityWorld(t, time.Hour)
		w.ids.DropKubeconfig(w.rt)
		wantReason(t, w.reconcile(), sakubeconfig.ReasonWaitingForRuntime)
		d, err := w.uc.Delete(ctx, w.req, w.state(), w.clock.Now(), w.clock.Now())
		if err != nil || !d.Release || d.Events[0].Warning {
			t.Fatalf("delete: %+v, %v", d, err)
		}
	})
	t.Run("a runtime without admin kubeconfig lets go at once and says so", func(t *testing.T) {
		w := newIdentityWorld(t, time.Hour)
		w.reconcile()
		w.ids.DropKubeconfig(w.rt)
		d, err := w.uc.Delete(ctx, w.req, w.state(), w.clock.Now(), w.clock.Now())
		if err != nil || !d.Release || !d.Events[0].Warning || d.Events[0].Reason != sakubeconfig.EventRuntimeObjectsLeftBehind {
			t.Fatalf("delete: %+v, %v", d, err)
		}
		if w.store.Secrets.Exists("kcp-system", w.req.SecretName) {
			t.Error("the Secret was left")
		}
	})
	t.Run("an unreachable runtime is retried until the cleanup timeout, then let go", func(t *testing.T) {
		w := newIdentityWorld(t, time.Hour)
		w.reconcile()
		w.ids.SetUnreachable(w.rt, true)
		started := w.clock.Now()
		d, err := w.uc.Delete(ctx, w.req, w.state(), started, w.clock.Now())
		if err != nil || d.Release || d.RequeueAfter <= 0 || !w.store.Secrets.Exists("kcp-system", w.req.SecretName) {
			t.Fatalf("within the timeout: %+v, %v", d, err)
		}
		w.clock.Step(5 * time.Minute)
		d, err = w.uc.Delete(ctx, w.req, w.state(), started, w.clock.Now())
		if err != nil || !d.Release || d.Events[0].Reason != sakubeconfig.EventRuntimeObjectsLeftBehind || w.store.Secrets.Exists("kcp-system", w.req.SecretName) {
			t.Fatalf("after the timeout: %+v, %v", d, err)
		}
	})
	t.Run("a runtime that hangs is let go at the cleanup deadline, not a request timeout later", func(t *testing.T) {
		w := newIdentityWorld(t, time.Hour)
		w.reconcile()
		w.uc.Runtimes = hangingRemoval{w.ids}
		// 50 ms of the timeout are left; the test's own bound (10 s) only stops a Delete that waits past the deadline.
		started := w.clock.Now().Add(-w.uc.CleanupTimeout + 50*time.Millisecond)
		bounded, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		d, err := w.uc.Delete(bounded, w.req, w.state(), started, w.clock.Now())
		if err != nil || !d.Release || d.Events[0].Reason != sakubeconfig.EventRuntimeObjectsLeftBehind || w.store.Secrets.Exists("kcp-system", w.req.SecretName) {
			t.Fatalf("an attempt that ran into the deadline: %+v, %v; want released, objects left behind, the Secret deleted", d, err)
		}
		if bounded.Err() != nil {
			t.Error("the attempt ran past the cleanup deadline")
		}
	})
	t.Run("a Secret of someone else is left alone", func(t *testing.T) {
		w := newIdentityWorld(t, time.Hour)
		w.store.Secrets.Put("kcp-system", w.req.SecretName, map[string][]byte{"config": []byte("x")}, nil, nil)
		d, err := w.uc.Delete(ctx, w.req, w.state(), w.clock.Now(), w.clock.Now())
		if err != nil || !d.Release || !w.store.Secrets.Exists("kcp-system", w.req.SecretName) {
			t.Fatalf("delete: %+v, %v", d, err)
		}
	})
	t.Run("a failing KCP is retried", func(t *testing.T) {
		w := newIdentityWorld(t, time.Hour)
		w.reconcile()
		w.store.Secrets.DeleteErr = errors.New("etcd is down")
		if d, err := w.uc.Delete(ctx, w.req, w.state(), w.clock.Now(), w.clock.Now()); err == nil || d.Release {
			t.Fatalf("delete with a failing Secret delete: %+v, %v", d, err)
		}
	})
}

// hangingRemoval is a runtime whose API server takes a removal and never answers.
type hangingRemoval struct{ ports.RuntimeIdentities }

func (hangingRemoval) Remove(ctx context.Context, _ ports.RuntimeRef, _ sakubeconfig.Owner) (bool, error) {
	<-ctx.Done()
	return false, ctx.Err()
}
