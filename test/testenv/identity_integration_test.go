package testenv_test

import (
	"context"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/internal/scheme"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestIntegrationOperatorRunsUnderShippedRBAC proves the impersonation is in force wherever tests start the
// operator: its identities may do what the bundle's CSV and config/gardener grant and are refused by the API
// servers (not by the client guard, which this test bypasses) what they do not, in KCP and through the aggregated
// gardener-apiserver alike.
func TestIntegrationOperatorRunsUnderShippedRBAC(t *testing.T) {
	env := testenv.Garden(t, testenv.GardenOptions{})
	opts := testenv.Options(env.Catalogue.Project)
	op := testenv.RunOperator(t, env.KCP, env.Garden, opts)
	ctx := context.Background()
	kcp, garden := newClient(t, op.Identity.KCP), newClient(t, op.Identity.Garden)
	ns, project := opts.WatchNamespaces[0], env.Catalogue.ProjectNamespace()

	allowed := map[string]func() error{
		"list Runtimes in the watched namespace": func() error {
			return kcp.List(ctx, &imv1.RuntimeList{}, client.InNamespace(ns))
		},
		"list shoots in the project": func() error {
			return garden.List(ctx, &gardencorev1beta1.ShootList{}, client.InNamespace(project))
		},
	}
	for what, do := range allowed {
		if err := do(); err != nil {
			t.Errorf("%s: %v, want allowed", what, err)
		}
	}
	forbidden := map[string]func() error{
		"KCP: list Secrets in kube-system": func() error {
			return kcp.List(ctx, &corev1.SecretList{}, client.InNamespace("kube-system"))
		},
		"KCP: delete a Namespace (dry run)": func() error {
			return kcp.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}}, client.DryRunAll)
		},
		"KCP: list Runtimes in another namespace": func() error {
			return kcp.List(ctx, &imv1.RuntimeList{}, client.InNamespace("default"))
		},
		"garden: get a Secret outside the project": func() error {
			return garden.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "any"}, &corev1.Secret{})
		},
		"garden: delete a ConfigMap in the project (dry run)": func() error {
			return garden.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: project, Name: "any"}}, client.DryRunAll)
		},
		"garden: read the Project": func() error {
			return garden.Get(ctx, client.ObjectKey{Name: env.Catalogue.Project}, &gardencorev1beta1.Project{})
		},
		"garden: list CloudProfiles": func() error {
			return garden.List(ctx, &gardencorev1beta1.CloudProfileList{})
		},
		"garden: list shoots of all projects": func() error {
			return garden.List(ctx, &gardencorev1beta1.ShootList{})
		},
	}
	for what, do := range forbidden {
		if err := do(); !apierrors.IsForbidden(err) {
			t.Errorf("%s: %v, want Forbidden", what, err)
		}
	}
}

func newClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	scheme, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
