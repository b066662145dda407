package serviceaccountkubeconfig_test

import (
	"context"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/testenv"
)

// escalationRefused creates requests the no-escalation policy refuses.
func (sc *scenario) escalationRefused(t *testing.T) {
	w := sc.w
	ctx := context.Background()
	escalate := request("escalate-"+runtimeID, "escalate-kubeconfig", "kyma-system", "escalator", time.Hour, podsIn("kyma-system"),
		imv1.AccessRule{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"}, Verbs: []string{"escalate"}})
	err := w.kcp.Create(ctx, escalate)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.rules[1]") || !strings.Contains(err.Error(), `verb "escalate" is refused`) {
		t.Errorf("create: %v, want a rejection naming spec.rules[1]", err)
	}
	secrets := request("secrets-"+runtimeID, "secrets-kubeconfig", "kyma-system", "secret-reader", time.Hour,
		imv1.AccessRule{Namespaces: []string{"istio-system"}, APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}})
	if err := w.kcp.Create(ctx, secrets); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "refused", func() (bool, string) {
		s := w.get(t, secrets.Name)
		_, desc := ready(s)
		return readyReason(s) == sakubeconfig.ReasonEscalationRefused && s.Status.ObservedGeneration == s.Generation, desc
	})
	s := w.get(t, secrets.Name)
	if msg := readyMessage(s); !strings.HasPrefix(msg, "spec.rules[0]: Secrets and ServiceAccount tokens") || !strings.Contains(msg, `namespace "istio-system", outside`) {
		t.Errorf("message %q does not name the rule", msg)
	}
	if _, err := w.runtimeAdmin(t, shootName).CoreV1().ServiceAccounts("kyma-system").Get(ctx, "secret-reader", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused request's ServiceAccount: %v, want NotFound", err)
	}
	if w.secret(t, secrets.Spec.SecretName) != nil {
		t.Error("the refused request got a Secret")
	}
	if err := w.kcp.Delete(ctx, secrets); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "the refused request gone", func() (bool, string) { return w.get(t, secrets.Name) == nil, "" })
}

// deletion deletes lifecycle-manager's request and checks the runtime and the KCP.
func (sc *scenario) deletion(t *testing.T) {
	w := sc.w
	ctx := context.Background()
	s := w.get(t, lmName)
	kc := w.secret(t, lmSecret).Data["config"]
	if err := w.kcp.Delete(ctx, s); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, lmName+" gone", func() (bool, string) { return w.get(t, lmName) == nil, "" })
	if w.secret(t, lmSecret) != nil {
		t.Error("the Secret is left")
	}
	admin := w.runtimeAdmin(t, shootName)
	for _, o := range s.Status.RuntimeObjects {
		var err error
		switch o.Kind {
		case "ServiceAccount":
			_, err = admin.CoreV1().ServiceAccounts(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
		case "Role":
			_, err = admin.RbacV1().Roles(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
		case "RoleBinding":
			_, err = admin.RbacV1().RoleBindings(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
		default:
			t.Errorf("unexpected runtime object %+v", o)
		}
		if !apierrors.IsNotFound(err) {
			t.Errorf("%s %s/%s after deletion: %v, want NotFound", o.Kind, o.Namespace, o.Name, err)
		}
	}
	c, _ := consumer(kc)
	testenv.Eventually(t, 30*time.Second, "the deleted identity's token refused", func() (bool, string) {
		_, err := c.CoreV1().Pods("kyma-system").List(ctx, metav1.ListOptions{})
		return apierrors.IsUnauthorized(err), errString(err)
	})
	if ok, desc := ready(w.get(t, kebName)); !ok {
		t.Errorf("the other identity of the runtime: %s", desc)
	}
}

// goneOrHanging deletes requests for a runtime without admin kubeconfig and for one that hangs.
func (sc *scenario) goneOrHanging(t *testing.T) {
	w := sc.w
	ctx := context.Background()
	// Deletions are timed from the API server's deletion timestamp: the operator's clock goes back to real time (the
	// steps before this one moved it ahead by the sum of theirs).
	w.clock.Reset()
	w.putAdminKubeconfig(t, "hanging-runtime", hangingServer(t))
	hanging := request("hanging", "hanging-kubeconfig", "kyma-system", "x", time.Hour, podsIn("kyma-system"))
	hanging.Spec.RuntimeID = "hanging-runtime"
	gone := request("gone", "gone-kubeconfig", "kyma-system", "x", time.Hour, podsIn("kyma-system"))
	gone.Spec.RuntimeID = "gone-runtime"
	for _, s := range []*imv1.ServiceAccountKubeconfig{hanging, gone} {
		if err := w.kcp.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, time.Minute, "waiting and unreachable", func() (bool, string) {
		h, g := w.get(t, "hanging"), w.get(t, "gone")
		return readyReason(h) == sakubeconfig.ReasonRuntimeUnreachable && readyReason(g) == sakubeconfig.ReasonWaitingForRuntime, readyReason(h) + " " + readyReason(g)
	})
	started := time.Now()
	for _, s := range []*imv1.ServiceAccountKubeconfig{hanging, gone} {
		if err := w.kcp.Delete(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, 15*time.Second, "the deletion without a runtime released at once", func() (bool, string) { return w.get(t, "gone") == nil, "" })
	testenv.Eventually(t, cleanupTimeout+45*time.Second, "the deletion against a hanging runtime released", func() (bool, string) {
		return w.get(t, "hanging") == nil, readyMessage(w.get(t, "hanging"))
	})
	took := time.Since(started)
	t.Logf("MEASURE deletion against a hanging runtime released after %s (cleanup timeout %s)", took.Round(time.Second), cleanupTimeout)
	if took < cleanupTimeout-time.Second {
		t.Errorf("released after %s, before the cleanup timeout %s: the hanging runtime was not tried", took, cleanupTimeout)
	}
	if !w.hasEvent(t, "hanging", sakubeconfig.EventRuntimeObjectsLeftBehind) {
		t.Error("a deletion that may have left objects behind did not say so")
	}
	if w.hasEvent(t, "gone", sakubeconfig.EventRuntimeObjectsLeftBehind) {
		t.Error("a request that never reached its runtime warned of objects left behind")
	}
}

// noTokenLeaks searches the operator's logs and events for every token the test saw.
func (sc *scenario) noTokenLeaks(t *testing.T) {
	w := sc.w
	ctx := context.Background()
	var list eventsv1.EventList
	if err := w.kcp.List(ctx, &list, client.InNamespace(kcpNamespace)); err != nil {
		t.Fatal(err)
	}
	for _, tok := range sc.tokens {
		if tok == "" || w.logs.Count(tok) > 0 {
			t.Errorf("a token is in the operator's log (or was empty)")
		}
		for _, e := range list.Items {
			if strings.Contains(e.Note, tok) {
				t.Errorf("event %s carries a token", e.Reason)
			}
		}
	}
	if len(sc.tokens) < 4 {
		t.Errorf("only %d tokens seen", len(sc.tokens))
	}
}
