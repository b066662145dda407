package testenv

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kyma-project/kim/internal/scheme"
)

// KCP is a kube-apiserver with etcd and the operator's CRDs, for tests that need no garden.
type KCP struct {
	Config *rest.Config
	// Client is uncached: assertions see the API server, not a cache.
	Client client.Client
}

// StartKCP starts a KCP for the test and stops it when the test ends.
func StartKCP(t testing.TB) *KCP {
	t.Helper()
	RequireAssets(t)
	env := &envtest.Environment{CRDDirectoryPaths: []string{CRDDirectory()}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return &KCP{Config: cfg, Client: c}
}

// Namespace creates a namespace named prefix-<random> for one test (isolation without a new API server).
func Namespace(t testing.TB, c client.Client, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := c.Create(t.Context(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return ns.Name
}
