package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/internal/mapping"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/migrate"
	"github.com/kyma-project/kim/test/testenv"
	"github.com/kyma-project/kim/test/testenv/previous"
)

// The previous landscape: 20 runtimes whose shoots the previous infrastructure manager and the provisioner before it
// created, each with KEB's Kyma resource and kubeconfig Secret, half of them with KEB's GardenerCluster; plus bad
// input that must be skipped and one shoot whose adoption would change it.
var previousRuntimes = []struct {
	golden string
	// provisioner: created by the provisioner (its annotations only); secretBinding: still on a SecretBinding.
	provisioner, secretBinding bool
}{
	{golden: "aws"}, {golden: "azure", provisioner: true}, {golden: "gcp", provisioner: true}, {golden: "openstack", provisioner: true},
	{golden: "alicloud"}, {golden: "gdch"}, {golden: "trial", provisioner: true}, {golden: "free", provisioner: true},
	{golden: "azure-lite"}, {golden: "aws-eu-access"}, {golden: "aws-eu02-access"}, {golden: "gcp-ksa"},
	{golden: "aws-registry-cache"}, {golden: "aws-gvisor"}, {golden: "aws-additional-workers-ha"}, {golden: "aws-acl-multi-oidc"},
	{golden: "aws-worker-passthrough"}, {golden: "aws-gpu-openshell"}, {golden: "aws-dual-stack"},
	{golden: "aws", provisioner: true, secretBinding: true},
}

const (
	// legacyBinding is the SecretBinding of the shoot still on one, and the CredentialsBinding of the same name
	// (same Secret) the operator switches it to.
	legacyBinding = "aws-kyma-1-legacy"
	// diffShoot would change on adoption (the previous manager ran without the kubelet feature gates).
	diffShoot = "c-migdiff"
	// noIDShoot carries no runtime ID; ambiguousShoot is named by two Kyma resources.
	noIDShoot      = "c-mignoid"
	ambiguousShoot = "c-migamb"
)

var fixtureAdmins = []string{"admin@example.com", "ops@example.com"}

// prevRuntime is one runtime of the previous landscape as KEB sees it.
type prevRuntime struct {
	id, shoot   string
	provisioner bool
	binding     bool
	kebGC       bool
	keb         *imv1.Runtime
}

type previousLandscape struct {
	good []prevRuntime
	// diff is the runtime whose adoption would change its shoot; noID, ambiguous, ambiguous2, unlabelled are bad input.
	diff                                   prevRuntime
	noID, ambiguous, ambiguous2, unlabeled string
	project                                string
}

func fixtureID(i int) string { return fmt.Sprintf("6d1f0c3a-7b2e-4c5d-8e9f-%012d", i) }

// buildPreviousLandscape creates the landscape and waits until every shoot is created.
func buildPreviousLandscape(t *testing.T, env *testEnv) *previousLandscape {
	t.Helper()
	ctx := context.Background()
	ns := env.Catalogue.ProjectNamespace()
	pl := &previousLandscape{project: ns}
	cfg := env.config.ShootConfig()
	cfg.ACL.ControlPlaneCIDRs = createACLConfigMap(t, env)
	createLegacyBindings(t, env, ns)
	for i, p := range previousRuntimes {
		r := prevRuntime{id: fixtureID(i + 1), shoot: fmt.Sprintf("c-mig%02d", i+1), provisioner: p.provisioner, binding: p.secretBinding, kebGC: i%2 == 0}
		r.keb = kebRuntime(t, p.golden, r.id, r.shoot)
		createPreviousShoot(t, env, cfg, r, nil)
		pl.good = append(pl.good, r)
	}
	pl.diff = prevRuntime{id: fixtureID(90), shoot: diffShoot}
	pl.diff.keb = kebRuntime(t, "aws", pl.diff.id, pl.diff.shoot)
	createPreviousShoot(t, env, cfg, pl.diff, func(s *gardencorev1beta1.Shoot) { s.Spec.Kubernetes.Kubelet = nil })
	// A shoot without any runtime ID, named by a Kyma resource; a shoot named by two.
	pl.noID, pl.ambiguous, pl.ambiguous2, pl.unlabeled = fixtureID(91), fixtureID(92), fixtureID(93), fixtureID(94)
	createPreviousShoot(t, env, cfg, prevRuntime{id: pl.noID, shoot: noIDShoot, keb: kebRuntime(t, "aws", pl.noID, noIDShoot)},
		func(s *gardencorev1beta1.Shoot) { s.Annotations = nil })
	createPreviousShoot(t, env, cfg, prevRuntime{id: pl.ambiguous, shoot: ambiguousShoot, keb: kebRuntime(t, "aws", pl.ambiguous, ambiguousShoot)}, nil)
	waitShootsCreated(t, env, ns)
	createAdminBindings(t, env, ns, pl.good[0].shoot)

	for _, r := range append(append([]prevRuntime{}, pl.good...), pl.diff) {
		createKyma(t, env, r.id, r.keb.Labels)
		createKEBSecret(t, env, ns, r)
		if r.kebGC {
			createKEBGardenerCluster(t, env, r)
		}
	}
	createKyma(t, env, pl.noID, kebRuntime(t, "aws", pl.noID, noIDShoot).Labels)
	createKyma(t, env, pl.ambiguous, kebRuntime(t, "aws", pl.ambiguous, ambiguousShoot).Labels)
	createKyma(t, env, pl.ambiguous2, kebRuntime(t, "aws", pl.ambiguous2, ambiguousShoot).Labels)
	createKyma(t, env, pl.unlabeled, nil)
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	return pl
}

// kebRuntime is the golden Runtime with another identity, as KEB would have it for another instance.
func kebRuntime(t *testing.T, golden, id, shootName string) *imv1.Runtime {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "adapters", "gardener", "testdata", "runtimes", golden+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rt := &imv1.Runtime{}
	if err := yaml.UnmarshalStrict(raw, rt); err != nil {
		t.Fatal(err)
	}
	rt.Name, rt.Namespace, rt.Generation = id, kcpNamespace, 3
	rt.Labels = maps.Clone(rt.Labels)
	rt.Labels[imv1.LabelRuntimeID], rt.Labels[imv1.LabelKymaName] = id, id
	rt.Labels[imv1.LabelShootName], rt.Labels[imv1.LabelInstanceID] = shootName, "instance-"+id
	rt.Spec.Shoot.Name = shootName
	rt.Spec.Security.Administrators = fixtureAdmins
	return rt
}

// createPreviousShoot creates the shoot the way the previous system did: generated for the Runtime as the previous
// infrastructure manager generated it (structured authentication in its ConfigMap structured-auth-config-<shoot>,
// its annotations, no managed-by mark) or as the provisioner left it (only its own annotations).
func createPreviousShoot(t *testing.T, env *testEnv, cfg shoot.Config, r prevRuntime, change func(*gardencorev1beta1.Shoot)) {
	t.Helper()
	ctx := context.Background()
	ns := env.Catalogue.ProjectNamespace()
	spec, err := shoot.Generate(mapping.Runtime(r.keb), cfg)
	if err != nil {
		t.Fatalf("generate the previous shoot %s: %v", r.shoot, err)
	}
	spec.Namespace = ns
	if spec.Authentication != nil {
		spec.Authentication.ConfigMapName = shoot.LegacyAuthenticationConfigMapPrefix + r.shoot
		data, err := translate.AuthenticationConfigMapData(spec.Authentication)
		if err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: spec.Authentication.ConfigMapName, Namespace: ns}, Data: data}
		if err := env.GardenClient.Create(ctx, cm); err != nil {
			t.Fatalf("create ConfigMap %s: %v", cm.Name, err)
		}
	}
	s, err := translate.ToShoot(spec)
	if err != nil {
		t.Fatal(err)
	}
	if r.provisioner {
		s.Annotations = map[string]string{translate.AnnotationProvisionerRuntimeID: r.id}
		if lt := ptr.Deref(r.keb.Spec.Shoot.LicenceType, ""); lt != "" {
			s.Annotations[translate.AnnotationProvisionerLicenceType] = lt
		}
	}
	if r.binding {
		s.Spec.CredentialsBindingName = nil
		s.Spec.SecretBindingName = ptr.To(legacyBinding) //nolint:staticcheck // the legacy field of the previous landscape
	}
	// In the previous manager's form: what it wrote says the same as this operator's rendering in other bytes.
	if err := previous.Render(s); err != nil {
		t.Fatal(err)
	}
	if change != nil {
		change(s)
	}
	if err := env.GardenClient.Create(ctx, s, client.FieldOwner("previous-infrastructure-manager")); err != nil {
		t.Fatalf("create the previous shoot %s: %v", r.shoot, err)
	}
}

// createACLConfigMap creates the KCP ConfigMap with the control plane's egress addresses the golden ACLs include.
func createACLConfigMap(t *testing.T, env *testEnv) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "adapters", "gardener", "testdata", "kcp", "acl-ip-list.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := yaml.UnmarshalStrict(raw, cm); err != nil {
		t.Fatal(err)
	}
	if err := env.KCPClient.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	cidrs, err := kube.ParseControlPlaneAddresses(cm.Data)
	if err != nil {
		t.Fatal(err)
	}
	return cidrs
}

// createLegacyBindings: a SecretBinding and a CredentialsBinding of the same name for the Secret of aws-kyma-1.
func createLegacyBindings(t *testing.T, env *testEnv, ns string) {
	t.Helper()
	ctx := context.Background()
	sb := &gardencorev1beta1.SecretBinding{ //nolint:staticcheck // the legacy object of the previous landscape
		ObjectMeta: metav1.ObjectMeta{Name: legacyBinding, Namespace: ns},
		SecretRef:  corev1.SecretReference{Name: "aws-kyma-1", Namespace: ns},
		Provider:   &gardencorev1beta1.SecretBindingProvider{Type: "aws"}, //nolint:staticcheck // see above
	}
	cb := &securityv1alpha1.CredentialsBinding{
		ObjectMeta:     metav1.ObjectMeta{Name: legacyBinding, Namespace: ns},
		Provider:       securityv1alpha1.CredentialsBindingProvider{Type: "aws"},
		CredentialsRef: corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Name: "aws-kyma-1", Namespace: ns},
	}
	for _, o := range []client.Object{sb, cb} {
		if err := env.GardenClient.Create(ctx, o); err != nil {
			t.Fatalf("create %T %s: %v", o, legacyBinding, err)
		}
	}
}

func waitShootsCreated(t *testing.T, env *testEnv, ns string) {
	t.Helper()
	testenv.Eventually(t, 3*time.Minute, "every previous shoot created", func() (bool, string) {
		var list gardencorev1beta1.ShootList
		if err := env.GardenClient.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		for _, s := range list.Items {
			op := s.Status.LastOperation
			if op == nil || op.State != gardencorev1beta1.LastOperationStateSucceeded || len(s.Status.AdvertisedAddresses) == 0 {
				return false, "shoot " + s.Name + " not created yet"
			}
		}
		return len(list.Items) > 0, fmt.Sprintf("%d shoots", len(list.Items))
	})
}

// createAdminBindings creates the administrators' ClusterRoleBindings in the (shared) runtime API server as the
// previous infrastructure manager and the reconciler before it left them.
func createAdminBindings(t *testing.T, env *testEnv, ns, anyShoot string) {
	t.Helper()
	c, err := env.RuntimeClient(ns, anyShoot)
	if err != nil {
		t.Fatal(err)
	}
	for i, manager := range []string{"infrastructure-manager", "reconciler"} {
		b := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("admin-previous-%d", i),
				Labels: map[string]string{"reconciler.kyma-project.io/managed-by": manager, "app": "kyma"}},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: fixtureAdmins[i]}},
		}
		if err := c.Create(context.Background(), b); err != nil {
			t.Fatalf("create admin binding: %v", err)
		}
	}
}

func createKyma(t *testing.T, env *testEnv, id string, labels map[string]string) {
	t.Helper()
	k := &unstructured.Unstructured{}
	k.SetGroupVersionKind(migrate.KymaGVK)
	k.SetName(id)
	k.SetNamespace(kcpNamespace)
	k.SetLabels(labels)
	k.Object["spec"] = map[string]any{"channel": "regular"}
	if err := env.KCPClient.Create(context.Background(), k); err != nil {
		t.Fatalf("create Kyma %s: %v", id, err)
	}
}

// createKEBSecret stores an admin kubeconfig from Gardener the way KEB (and the previous manager) left it:
// kubeconfig-<runtimeID>, key config, KEB's labels, no owner.
func createKEBSecret(t *testing.T, env *testEnv, ns string, r prevRuntime) {
	t.Helper()
	kc, err := env.AdminKubeconfig(context.Background(), ns, r.shoot, 7200)
	if err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + r.id, Namespace: kcpNamespace,
		Labels: map[string]string{imv1.LabelRuntimeID: r.id, imv1.LabelShootName: r.shoot,
			imv1.LabelGlobalAccountID: r.keb.Labels[imv1.LabelGlobalAccountID], imv1.LabelManagedBy: "lifecycle-manager"}},
		Data: map[string][]byte{"config": kc}}
	if err := env.KCPClient.Create(context.Background(), sec, client.FieldOwner("kyma-environment-broker")); err != nil {
		t.Fatal(err)
	}
}

func createKEBGardenerCluster(t *testing.T, env *testEnv, r prevRuntime) {
	t.Helper()
	labels := maps.Clone(r.keb.Labels)
	labels[imv1.LabelManagedBy] = "lifecycle-manager"
	gc := &imv1.GardenerCluster{
		ObjectMeta: metav1.ObjectMeta{Name: r.id, Namespace: kcpNamespace, Labels: labels},
		Spec: imv1.GardenerClusterSpec{Shoot: imv1.Shoot{Name: r.shoot},
			Kubeconfig: imv1.Kubeconfig{Secret: imv1.Secret{Name: "kubeconfig-" + r.id, Namespace: kcpNamespace, Key: "config"}}},
	}
	if err := env.KCPClient.Create(context.Background(), gc); err != nil {
		t.Fatal(err)
	}
}
