package serviceaccountkubeconfig_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/usecase"
	"github.com/kyma-project/kim/internal/testenv"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/serviceaccountkubeconfig"
	"github.com/kyma-project/kim/operator/sandbox/runtimeapi"
)

const (
	runtimeID       = "5a1f7c3e-0d4b-4e8a-9c2f-6b7d8e9f0a1b"
	runtimeIDOfTest = runtimeID
	shootName       = "c-5a1f7c3"
	lmName          = "lifecycle-manager-" + runtimeID
	lmSecret        = "lifecycle-manager-kubeconfig-" + runtimeID
	kebName         = "kyma-environment-broker-" + runtimeID
	kebSecret       = "kyma-environment-broker-kubeconfig-" + runtimeID
	lmUser          = "system:serviceaccount:kyma-system:lifecycle-manager"
	// cleanupTimeout bounds a deletion against a runtime that does not answer (production: 5 minutes).
	cleanupTimeout = 20 * time.Second
)

func request(name, secret, saNamespace, saName string, validity time.Duration, rules ...imv1.AccessRule) *imv1.ServiceAccountKubeconfig {
	return &imv1.ServiceAccountKubeconfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: kcpNamespace},
		Spec: imv1.ServiceAccountKubeconfigSpec{RuntimeID: runtimeID, SecretName: secret, Rules: rules,
			ServiceAccount: imv1.ServiceAccountReference{Namespace: saNamespace, Name: saName},
			Validity:       &metav1.Duration{Duration: validity}},
	}
}

func podsIn(ns ...string) imv1.AccessRule {
	return imv1.AccessRule{Namespaces: ns, APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}
}

// TestIntegrationServiceAccountKubeconfigs runs the operator on garden-in-a-box: a shoot backed by a real runtime
// API server (with TokenRequest, the RBAC authorizer and an audit log), its admin kubeconfig issued by the real
// gardener-apiserver, and ServiceAccountKubeconfigs as lifecycle-manager and KEB would create them (issue 16).
func TestIntegrationServiceAccountKubeconfigs(t *testing.T) {
	w := newWorld(t)
	op := w.startOperator(t, cleanupTimeout)
	t.Cleanup(func() {
		if err := op.Stop(); err != nil {
			t.Error(err)
		}
	})
	w.addRuntime(t, runtimeID, shootName)
	ctx := context.Background()
	var tokens []string // every token seen, to prove none leaks into logs or events

	t.Run("least privilege on the real authorizer, audited as the ServiceAccount", func(t *testing.T) {
		created := time.Now()
		if err := w.kcp.Create(ctx, request(lmName, lmSecret, "kyma-system", "lifecycle-manager", 10*time.Minute, podsIn("kyma-system"))); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, time.Minute, lmName+" Ready", func() (bool, string) { return ready(w.get(t, lmName)) })
		t.Logf("MEASURE time to Ready (runtime reachable): %s", time.Since(created).Round(time.Millisecond))
		s := w.get(t, lmName)
		if s.Status.SecretName != lmSecret || len(s.Status.RuntimeObjects) != 3 || s.Status.ExpiresAt == nil ||
			readyReason(s) != usecase.ReasonKubeconfigIssued || s.Status.State != imv1.ServiceAccountKubeconfigStateReady {
			t.Errorf("status %+v", s.Status)
		}
		if left := time.Until(s.Status.ExpiresAt.Time); left < 9*time.Minute || left > 10*time.Minute {
			t.Errorf("expires in %s, want the requested 10m", left)
		}
		kc := w.secret(t, lmSecret).Data["config"]
		tokens = append(tokens, tokenOf(t, kc))
		c, err := consumer(kc)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.CoreV1().Pods("kyma-system").List(ctx, metav1.ListOptions{}); err != nil {
			t.Errorf("list pods in kyma-system: %v, want 200", err)
		}
		if _, err := c.CoreV1().Secrets("kyma-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("list Secrets in kyma-system: %v, want 403", err)
		}
		if _, err := c.CoreV1().Secrets("kyma-system").Get(ctx, "any", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("get a Secret in kyma-system: %v, want 403", err)
		}
		if _, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("list pods in default: %v, want 403", err)
		}
		if _, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("list pods in all namespaces: %v, want 403", err)
		}
		review, err := c.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil || review.Status.UserInfo.Username != lmUser {
			t.Errorf("SelfSubjectReview: %v %v, want %s", review, err, lmUser)
		}
		path, err := w.env.Runtimes.AuditLogPath(w.shootKey(shootName))
		if err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 10*time.Second, "the audit log records the requests as "+lmUser, func() (bool, string) {
			events, err := runtimeapi.ReadAuditLog(path)
			if err != nil {
				return false, err.Error()
			}
			allowed, refused := 0, 0
			for _, e := range events {
				if e.User.Username != lmUser || e.ObjectRef.Resource == "" {
					continue
				}
				switch {
				case e.ObjectRef.Resource == "pods" && e.ObjectRef.Namespace == "kyma-system" && e.ResponseStatus.Code == 200:
					allowed++
				case e.ResponseStatus.Code == 403:
					refused++
				}
			}
			return allowed >= 1 && refused >= 4, fmt.Sprintf("allowed %d, refused %d", allowed, refused)
		})
	})
	if t.Failed() {
		return
	}

	t.Run("a KEB identity with a cluster-wide rule sits next to it", func(t *testing.T) {
		keb := request(kebName, kebSecret, "kcp-system", "kyma-environment-broker", time.Hour,
			imv1.AccessRule{APIGroups: []string{""}, Resources: []string{"namespaces", "nodes"}, Verbs: []string{"get", "list"}})
		if err := w.kcp.Create(ctx, keb); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, time.Minute, kebName+" Ready", func() (bool, string) { return ready(w.get(t, kebName)) })
		c, err := consumer(w.secret(t, kebSecret).Data["config"])
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, tokenOf(t, w.secret(t, kebSecret).Data["config"]))
		if _, err := c.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
			t.Errorf("KEB lists namespaces: %v, want 200", err)
		}
		if _, err := c.CoreV1().Pods("kyma-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("KEB lists pods: %v, want 403", err)
		}
	})

	t.Run("rules change in place; the kubeconfig stays valid", func(t *testing.T) {
		before := w.secret(t, lmSecret)
		s := w.get(t, lmName)
		s.Spec.Rules = append(s.Spec.Rules, imv1.AccessRule{Namespaces: []string{"kyma-system"}, APIGroups: []string{""},
			Resources: []string{"configmaps"}, Verbs: []string{"list"}})
		if err := w.kcp.Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, time.Minute, "rules applied", func() (bool, string) {
			s := w.get(t, lmName)
			ok, desc := ready(s)
			return ok && readyReason(s) == usecase.ReasonRulesApplied, desc
		})
		after := w.secret(t, lmSecret)
		if after.ResourceVersion != before.ResourceVersion {
			t.Error("a rule change rewrote the kubeconfig Secret")
		}
		c, _ := consumer(after.Data["config"])
		testenv.Eventually(t, 10*time.Second, "the old kubeconfig lists configmaps", func() (bool, string) {
			_, err := c.CoreV1().ConfigMaps("kyma-system").List(ctx, metav1.ListOptions{})
			return err == nil, errString(err)
		})
	})

	t.Run("rotation before expiry without a gap, and forced rotation", func(t *testing.T) {
		reader := startReader(t, w, lmSecret)
		first := w.secret(t, lmSecret)
		// The operator's clock passes the rotation point of the 10-minute token (60% to 65% of it); the token itself
		// is still valid in real time. A touch of the object makes the operator look now instead of in six minutes.
		w.clock.Step(7 * time.Minute)
		touch(t, w, lmName)
		testenv.Eventually(t, time.Minute, "rotated", func() (bool, string) {
			s := w.get(t, lmName)
			return issuedAt(w.secret(t, lmSecret)) != issuedAt(first) && readyReason(s) == usecase.ReasonKubeconfigRotated, readyReason(s)
		})
		rotated := w.secret(t, lmSecret)
		tokens = append(tokens, tokenOf(t, rotated.Data["config"]))
		if tokenOf(t, rotated.Data["config"]) == tokenOf(t, first.Data["config"]) {
			t.Error("rotation kept the token")
		}
		s := w.get(t, lmName)
		s.Annotations = map[string]string{imv1.AnnotationForceKubeconfigRotation: "true"}
		if err := w.kcp.Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, time.Minute, "forced rotation", func() (bool, string) {
			s := w.get(t, lmName)
			_, still := s.Annotations[imv1.AnnotationForceKubeconfigRotation]
			return tokenOf(t, w.secret(t, lmSecret).Data["config"]) != tokenOf(t, rotated.Data["config"]) && !still, readyReason(s)
		})
		tokens = append(tokens, tokenOf(t, w.secret(t, lmSecret).Data["config"]))
		// The reader goes on with the new kubeconfig.
		after := reader.reads.Load()
		testenv.Eventually(t, 30*time.Second, "20 more reads with the forced kubeconfig", func() (bool, string) {
			n := reader.reads.Load()
			return n >= after+20, fmt.Sprintf("%d reads", n-after)
		})
		reads, failed := reader.stop()
		t.Logf("MEASURE concurrent reader during 2 rotations: %d reads, %d failed", reads, failed)
		if failed != 0 || reads < 20 {
			t.Errorf("%d of %d reads failed (want 0 of at least 20)", failed, reads)
		}
	})

	t.Run("a restart makes no TokenRequest for tokens not due", func(t *testing.T) {
		if err := op.Stop(); err != nil {
			t.Fatal(err)
		}
		tokensBefore, resourcesBefore := w.tokenRequests(t, shootName)
		reconciles, err := testenv.Reconciles(serviceaccountkubeconfig.Name)
		if err != nil {
			t.Fatal(err)
		}
		op = w.startOperator(t, cleanupTimeout)
		// The restarted operator looks at both objects once its caches are synced; then its queue runs dry.
		testenv.WaitReconciled(t, serviceaccountkubeconfig.Name, reconciles+2, time.Minute)
		op.WaitIdle(t, serviceaccountkubeconfig.Name, time.Minute)
		for _, name := range []string{lmName, kebName} {
			if ok, desc := ready(w.get(t, name)); !ok {
				t.Errorf("%s after the restart: %s", name, desc)
			}
		}
		tokensAfter, resourcesAfter := w.tokenRequests(t, shootName)
		t.Logf("MEASURE restart: %d TokenRequests, %d other requests to the runtime API server by anyone (the test's metric reads excluded)",
			tokensAfter-tokensBefore, resourcesAfter-resourcesBefore-(tokensAfter-tokensBefore))
		if tokensAfter != tokensBefore {
			t.Errorf("%d TokenRequests on restart, want 0", tokensAfter-tokensBefore)
		}
		if resourcesAfter != resourcesBefore {
			t.Errorf("%d requests to the runtime on restart, want 0", resourcesAfter-resourcesBefore)
		}
	})

	t.Run("an escalating request is refused, naming the rule", func(t *testing.T) {
		escalate := request("escalate-"+runtimeID, "escalate-kubeconfig", "kyma-system", "escalator", time.Hour, podsIn("kyma-system"),
			imv1.AccessRule{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"}, Verbs: []string{"escalate"}})
		err := w.kcp.Create(ctx, escalate)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.rules[1]") || !strings.Contains(err.Error(), `verb "escalate" is refused`) {
			t.Errorf("create: %v, want a rejection naming spec.rules[1]", err)
		}
		secrets := request("secrets-"+runtimeID, "secrets-kubeconfig", "kyma-system", "secret-reader", time.Hour,
			imv1.AccessRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}})
		if err := w.kcp.Create(ctx, secrets); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, time.Minute, "refused", func() (bool, string) {
			s := w.get(t, secrets.Name)
			_, desc := ready(s)
			return readyReason(s) == usecase.ReasonEscalationRefused && s.Status.ObservedGeneration == s.Generation, desc
		})
		s := w.get(t, secrets.Name)
		if msg := readyMessage(s); !strings.HasPrefix(msg, "spec.rules[0]: Secrets and ServiceAccount tokens cluster-wide") {
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
	})

	t.Run("deletion removes the ServiceAccount, roles, bindings and Secret", func(t *testing.T) {
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
	})

	t.Run("a runtime that is gone or hangs does not hold a deletion", func(t *testing.T) {
		// Deletions are timed from the API server's deletion timestamp: the operator's clock goes back to real time.
		w.clock.Step(-7 * time.Minute)
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
			return readyReason(h) == usecase.ReasonRuntimeUnreachable && readyReason(g) == usecase.ReasonWaitingForRuntime, readyReason(h) + " " + readyReason(g)
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
		if !w.hasEvent(t, "hanging", usecase.EventRuntimeObjectsLeftBehind) {
			t.Error("a deletion that may have left objects behind did not say so")
		}
		if w.hasEvent(t, "gone", usecase.EventRuntimeObjectsLeftBehind) {
			t.Error("a request that never reached its runtime warned of objects left behind")
		}
	})

	t.Run("no token in logs or events", func(t *testing.T) {
		var list eventsv1.EventList
		if err := w.kcp.List(ctx, &list, client.InNamespace(kcpNamespace)); err != nil {
			t.Fatal(err)
		}
		for _, tok := range tokens {
			if tok == "" || w.logs.Count(tok) > 0 {
				t.Errorf("a token is in the operator's log (or was empty)")
			}
			for _, e := range list.Items {
				if strings.Contains(e.Note, tok) {
					t.Errorf("event %s carries a token", e.Reason)
				}
			}
		}
		if len(tokens) < 4 {
			t.Errorf("only %d tokens seen", len(tokens))
		}
	})
}

// reader reads a kubeconfig Secret from the KCP and lists pods with it, over and over, as a consumer would.
type reader struct {
	cancel        context.CancelFunc
	wg            sync.WaitGroup
	reads, failed atomic.Int64
}

// startReader starts a reader; it stops when stop is called or the test ends.
func startReader(t *testing.T, w *world, secret string) *reader {
	ctx, cancel := context.WithCancel(context.Background())
	r := &reader{cancel: cancel}
	r.wg.Go(func() {
		for ctx.Err() == nil {
			var s corev1.Secret
			err := w.kcp.Get(ctx, client.ObjectKey{Namespace: kcpNamespace, Name: secret}, &s)
			if err == nil {
				var cs kubernetes.Interface
				if cs, err = consumer(s.Data["config"]); err == nil {
					_, err = cs.CoreV1().Pods("kyma-system").List(ctx, metav1.ListOptions{})
				}
			}
			if ctx.Err() != nil {
				return
			}
			r.reads.Add(1)
			if err != nil {
				r.failed.Add(1)
				t.Logf("reader: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	t.Cleanup(func() { r.stop() })
	return r
}

func (r *reader) stop() (reads, failed int64) {
	r.cancel()
	r.wg.Wait()
	return r.reads.Load(), r.failed.Load()
}

// touch changes an annotation of the object: the operator looks at it at once.
func touch(t *testing.T, w *world, name string) {
	t.Helper()
	patch := []byte(`{"metadata":{"annotations":{"test.kim/touched":"` + time.Now().Format(time.RFC3339Nano) + `"}}}`)
	s := &imv1.ServiceAccountKubeconfig{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: name}}
	if err := w.kcp.Patch(context.Background(), s, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
}

func readyMessage(s *imv1.ServiceAccountKubeconfig) string {
	if s == nil {
		return "gone"
	}
	for _, c := range s.Status.Conditions {
		if c.Type == imv1.ConditionReady {
			return c.Message
		}
	}
	return ""
}

// tokenOf reads the bearer token of a kubeconfig.
func tokenOf(t *testing.T, kc []byte) string {
	t.Helper()
	cfg, err := clientcmd.Load(kc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil || cfg.AuthInfos[ctx.AuthInfo] == nil {
		t.Fatal("kubeconfig without current context or user")
	}
	return cfg.AuthInfos[ctx.AuthInfo].Token
}

// putAdminKubeconfig stores an admin kubeconfig Secret for runtimeID that names server, as the GardenerCluster
// controller would (with the CA of the real runtime: the client tries the TLS handshake, which never completes).
func (w *world) putAdminKubeconfig(t *testing.T, runtimeID, server string) {
	t.Helper()
	real, err := clientcmd.Load(w.secret(t, "kubeconfig-"+runtimeIDOfTest).Data["config"])
	if err != nil {
		t.Fatal(err)
	}
	var ca []byte
	for _, c := range real.Clusters {
		ca = c.CertificateAuthorityData
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "admin"}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "c"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: "kubeconfig-" + runtimeID,
		Labels: map[string]string{wire.LabelManagedBy: wire.ManagedByValue}}, Data: map[string][]byte{"config": data}}
	if err := w.kcp.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// hasEvent reports whether an event with reason was recorded for the ServiceAccountKubeconfig name.
func (w *world) hasEvent(t *testing.T, name, reason string) bool {
	t.Helper()
	var list eventsv1.EventList
	if err := w.kcp.List(context.Background(), &list, client.InNamespace(kcpNamespace)); err != nil {
		t.Fatal(err)
	}
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			return true
		}
	}
	return false
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}
