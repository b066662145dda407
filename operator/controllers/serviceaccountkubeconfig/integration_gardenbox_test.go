package serviceaccountkubeconfig_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/sandbox/runtimeapi"
	"github.com/kyma-project/kim/test/testenv"
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
// gardener-apiserver, and ServiceAccountKubeconfigs as lifecycle-manager and KEB would create them (issue 16). The
// steps build on each other.
func TestIntegrationServiceAccountKubeconfigs(t *testing.T) {
	w := newWorld(t)
	sc := &scenario{w: w, op: w.startOperator(t, cleanupTimeout)}
	t.Cleanup(func() {
		if err := sc.op.Stop(); err != nil {
			t.Error(err)
		}
	})
	w.addRuntime(t, runtimeID, shootName)
	if !t.Run("least privilege on the real authorizer, audited as the ServiceAccount", sc.leastPrivilege) {
		return
	}
	t.Run("a KEB identity with a cluster-wide rule sits next to it", sc.kebIdentity)
	t.Run("rules change in place; the kubeconfig stays valid", sc.rulesInPlace)
	t.Run("rotation before expiry without a gap, and forced rotation", sc.rotation)
	t.Run("a restart makes no TokenRequest for tokens not due", sc.restart)
	t.Run("an escalating request is refused, naming the rule", sc.escalationRefused)
	t.Run("every refused shape is granted by the real authorizer and refused with a stable reason", sc.refusedShapesOnTheRealAuthorizer)
	t.Run("a bound ClusterRole that grows is revoked by the periodic check", sc.grownRoleIsRevoked)
	t.Run("deletion removes the ServiceAccount, roles, bindings and Secret", sc.deletion)
	t.Run("a runtime that is gone or hangs does not hold a deletion", sc.goneOrHanging)
	t.Run("no token in logs or events", sc.noTokenLeaks)
}

// scenario is what the steps of TestIntegrationServiceAccountKubeconfigs share.
type scenario struct {
	w  *world
	op *testenv.Operator
	// tokens are every token seen, to prove none leaks into logs or events.
	tokens []string
}

// leastPrivilege creates lifecycle-manager's request for get/list pods in kyma-system and checks its kubeconfig on the
// runtime's real authorizer and audit log.
func (sc *scenario) leastPrivilege(t *testing.T) {
	w := sc.w
	ctx := context.Background()
	created := time.Now()
	if err := w.kcp.Create(ctx, request(lmName, lmSecret, "kyma-system", "lifecycle-manager", 10*time.Minute, podsIn("kyma-system"))); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, lmName+" Ready", func() (bool, string) { return ready(w.get(t, lmName)) })
	t.Logf("MEASURE time to Ready (runtime reachable): %s", time.Since(created).Round(time.Millisecond))
	s := w.get(t, lmName)
	if s.Status.SecretName != lmSecret || len(s.Status.RuntimeObjects) != 3 || s.Status.ExpiresAt == nil ||
		readyReason(s) != sakubeconfig.ReasonKubeconfigIssued || s.Status.State != imv1.ServiceAccountKubeconfigStateReady {
		t.Errorf("status %+v", s.Status)
	}
	if left := time.Until(s.Status.ExpiresAt.Time); left < 9*time.Minute || left > 10*time.Minute {
		t.Errorf("expires in %s, want the requested 10m", left)
	}
	kc := w.secret(t, lmSecret).Data["config"]
	sc.tokens = append(sc.tokens, tokenOf(t, kc))
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
}

// kebIdentity adds a KEB request with a cluster-wide rule next to it.
func (sc *scenario) kebIdentity(t *testing.T) {
	w := sc.w
	ctx := context.Background()
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
	sc.tokens = append(sc.tokens, tokenOf(t, w.secret(t, kebSecret).Data["config"]))
	if _, err := c.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("KEB lists namespaces: %v, want 200", err)
	}
	if _, err := c.CoreV1().Pods("kyma-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("KEB lists pods: %v, want 403", err)
	}
}
