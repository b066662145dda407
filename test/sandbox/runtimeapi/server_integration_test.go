package runtimeapi_test

import (
	"context"
	"os"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim/test/sandbox/runtimeapi"
)

// TestIntegrationRuntimeAPIServerServesTokenRequest: a runtime API server issues ServiceAccount tokens with the
// TokenRequest API (signed by its own service-account key) and authenticates and authorizes them as
// system:serviceaccount:<namespace>:<name> with the real RBAC authorizer.
func TestIntegrationRuntimeAPIServerServesTokenRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs kube-apiserver and etcd (KUBEBUILDER_ASSETS)")
	}
	pool := runtimeapi.NewPool(runtimeapi.PoolOptions{Mode: runtimeapi.ModePerShoot, BinaryAssetsDirectory: os.Getenv("KUBEBUILDER_ASSETS")})
	t.Cleanup(func() { _ = pool.Stop() })
	ep, err := pool.Ensure(t.Context(), "garden-test/token", true)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := pool.AdminConfig("garden-test/token")
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(admin)
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kyma-system"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ServiceAccounts("kyma-system").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts("kyma-system").CreateToken(ctx, "probe", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest: %v", err)
	}
	if left := time.Until(tr.Status.ExpirationTimestamp.Time); left < 9*time.Minute || left > 11*time.Minute {
		t.Errorf("token expires in %s, want about 10m", left)
	}
	user := kubernetes.NewForConfigOrDie(&rest.Config{Host: ep.URL, BearerToken: tr.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: ep.CAs.Cluster.CertificatePEM}})
	review, err := user.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the token does not authenticate: %v", err)
	}
	if got := review.Status.UserInfo.Username; got != "system:serviceaccount:kyma-system:probe" {
		t.Errorf("token authenticates as %q", got)
	}
	if _, err := user.CoreV1().Pods("kyma-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing pods without a role: %v, want Forbidden from the RBAC authorizer", err)
	}
	path, err := pool.AuditLogPath("garden-test/token")
	if err != nil {
		t.Fatal(err)
	}
	events, err := runtimeapi.ReadAuditLog(path)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range events {
		if e.User.Username == "system:serviceaccount:kyma-system:probe" && e.Verb == "list" && e.ObjectRef.Resource == "pods" &&
			e.ObjectRef.Namespace == "kyma-system" && e.ResponseStatus.Code == 403 {
			found = true
		}
		if e.User.Username == "sandbox-admin" {
			t.Errorf("the admin's request %s %s was audited; the policy records only service accounts", e.Verb, e.ObjectRef.Resource)
		}
	}
	if !found {
		t.Errorf("the audit log has no refused list of pods by system:serviceaccount:kyma-system:probe: %+v", events)
	}
}
