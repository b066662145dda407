package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/testenv"
)

// Inside the runtimes (issue 14): the test configuration's drift period and timeout (writeConfig).
const (
	runtimeDriftPeriod = 8 * time.Second
	runtimeTimeout     = 5 * time.Second
	// runtimeMaxRetryDelay caps the backoff of failed Runtimes: without it, a runtime API server paused while the
	// bystander provisions (minutes on a busy machine) can wait longer than stepTimeout after it answers again.
	runtimeMaxRetryDelay = 10 * time.Second
	// driftWait bounds how long an object deleted by hand stays away: the drift period, its spread by runtime ID,
	// and a reconcile on a busy machine.
	driftWait = runtimeDriftPeriod + runtimeDriftPeriod/10 + 20*time.Second

	insideRuntimeID    = "5c1d9e2a-7b3f-4a6c-8d0e-2f4a6b8c0d1e"
	insideShoot        = "c-inside"
	pausedRuntimeID    = "8e2f4a6c-1b3d-4e5f-9a7b-c0d2e4f6a8b1"
	pausedShoot        = "c-paused"
	bystanderRuntimeID = "2a4c6e8f-0b1d-4f3a-8c5e-7d9f1b3d5e7a"
	bystanderShoot     = "c-bystdr"
)

// runtimeConfigScenarios cover what the operator keeps inside runtimes.
func (w *world) runtimeConfigScenarios(trial, aws *imv1.Runtime) []scenario {
	return []scenario{
		{"InsideTheRuntime", func(t *testing.T) { w.insideTheRuntime(t, insideRuntime(aws)) }},
		{"PausedRuntimeAPIServer", func(t *testing.T) {
			w.pausedRuntimeAPIServer(t, freshRuntime(trial, pausedRuntimeID, pausedShoot), freshRuntime(trial, bystanderRuntimeID, bystanderShoot))
		}},
	}
}

// insideRuntime is a KEB-shaped Runtime with two worker pools and two customer issuers: one with an inline key
// set, one with a private CA.
func insideRuntime(aws *imv1.Runtime) *imv1.Runtime {
	rt := freshRuntime(aws, insideRuntimeID, insideShoot)
	pool := *rt.Spec.Shoot.Provider.Workers[0].DeepCopy()
	pool.Name, pool.Minimum, pool.Maximum, pool.Zones = "custom-pool", 1, 2, pool.Zones[:1]
	rt.Spec.Shoot.Provider.AdditionalWorkers = &[]gardencorev1beta1.Worker{pool}
	str := func(s string) *string { return &s }
	rt.Spec.Shoot.Kubernetes.KubeAPIServer.AdditionalOidcConfig = &[]imv1.OIDCConfig{
		{IssuerURL: str("https://offline-idp.example.com"), ClientID: str("kyma-app"), UsernameClaim: str("email"), UsernamePrefix: str("-"),
			GroupsClaim: str("groups"), GroupsPrefix: str("-"), SigningAlgs: []string{"ES256"}, JWKS: contract.JWKS},
		{IssuerURL: str("https://login.acme.example.com/oauth2"), ClientID: str("customer-app"), UsernameClaim: str("sub"),
			UsernamePrefix: str("acme:"), CABundle: str(contract.CABundle), RequiredClaims: map[string]string{"tenant": "acme"}},
	}
	rt.Spec.Security.Administrators = []string{"first.admin@example.com", "second.admin@example.com"}
	return rt
}

// insideTheRuntime: at Ready the runtime holds kyma-system, the provisioning info with the values of the Runtime
// and the shoot, one OpenIDConnect resource per customer issuer and the admin bindings; a changed pool and a
// removed issuer follow; objects deleted by hand come back within the drift period.
func (w *world) insideTheRuntime(t *testing.T, rt *imv1.Runtime) {
	if err := w.kcp.Create(context.Background(), rt.DeepCopy()); err != nil {
		t.Fatalf("create runtime %s: %v", rt.Name, err)
	}
	got := w.waitReady(t, rt.Name, provisionTimeout)
	for typ, reason := range map[string]string{lifecycle.ConditionProvisioned: "ShootCreationCompleted", lifecycle.ConditionKubeconfigReady: "GardenerClusterCRReady",
		lifecycle.ConditionKymaSystemNSCreated: "KymaSystemNSReady", lifecycle.ConditionOidcAndConfigMapConfigured: "OidcAndConfigMapsConfigured",
		lifecycle.ConditionConfigured: "AdministratorsConfigured"} {
		if c := meta.FindStatusCondition(got.Status.Conditions, typ); c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason {
			t.Errorf("condition %s: %+v, want True/%s", typ, c, reason)
		}
	}
	s := w.shoot(t, insideShoot)
	c := w.runtimeAdmin(t, insideShoot)
	ns := &corev1.Namespace{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: runtimeconfig.Namespace}, ns); err != nil {
		t.Errorf("namespace kyma-system: %v", err)
	}
	reconciled := w.waitReconcileTime(t, c, insideShoot)
	info := w.provisioningInfo(t, insideShoot)
	want := runtimeconfig.ProvisioningInfo{
		WorkerPools: runtimeconfig.WorkerPools{Kyma: runtimeconfig.WorkerPool{Name: "cpu-worker-0", MachineType: "m6i.large", HAZones: true, AutoScalerMin: 3, AutoScalerMax: 3},
			Custom: []runtimeconfig.WorkerPool{{Name: "custom-pool", MachineType: "m6i.large", AutoScalerMin: 1, AutoScalerMax: 2}}},
		GlobalAccountID: rt.Labels[imv1.LabelGlobalAccountID], SubaccountID: rt.Labels[imv1.LabelSubaccountID],
		EnvironmentInstanceID: rt.Labels[imv1.LabelInstanceID], InstanceID: rt.Labels[imv1.LabelInstanceID],
		InstanceName: rt.Labels[imv1.LabelKymaName], RuntimeID: rt.Name,
		ShootName: insideShoot, Provider: "aws", Region: "eu-central-1", PlatformRegion: "cf-eu10", SeedRegion: w.seedRegion(t, s),
		Infrastructure:       runtimeconfig.Infrastructure{Nodes: "10.250.0.0/16", Pods: "10.96.0.0/13", Services: "10.104.0.0/13", Zones: info.Infrastructure.Zones},
		InfrastructureConfig: infrastructureConfigOf(t, s),
		LastReconcileTime:    reconciled,
	}
	if diff := diffInfo(want, info); diff != "" {
		t.Errorf("provisioning info: %s", diff)
	}
	if len(info.Infrastructure.Zones) != 3 || info.Infrastructure.Zones[0].Name != "eu-central-1a" || len(info.Infrastructure.Zones[0].CIDRs) != 3 {
		t.Errorf("infrastructure zones %+v, want the shoot's three zones with their subnets", info.Infrastructure.Zones)
	}
	oidc := w.openIDConnects(t, insideShoot)
	if len(oidc) != 2 || oidc[0].GetName() != "kyma-oidc-0" || oidc[1].GetName() != "kyma-oidc-1" {
		t.Fatalf("OpenIDConnect resources %v, want kyma-oidc-0 and kyma-oidc-1", names(oidc))
	}
	if keys := specBytes(oidc[0], "jwks", "keys"); string(keys) != string(contract.JWKS) {
		t.Errorf("kyma-oidc-0 jwks.keys = %q, want the Runtime's key set", keys)
	}
	if ca := specBytes(oidc[1], "caBundle"); string(ca) != contract.CABundle {
		t.Errorf("kyma-oidc-1 caBundle = %q, want the Runtime's CA bundle", ca)
	}
	w.checkOperatorIssuerOnly(t, s)
	w.checkAdminBindings(t, insideShoot, rt.Spec.Security.Administrators)

	// A changed pool and a removed issuer: the provisioning info follows and the stale resource goes while Gardener
	// reconciles the pool change (the configuration runs meanwhile).
	w.updateRuntime(t, rt.Name, func(r *imv1.Runtime) {
		(*r.Spec.Shoot.Provider.AdditionalWorkers)[0].Maximum = 4
		list := *r.Spec.Shoot.Kubernetes.KubeAPIServer.AdditionalOidcConfig
		r.Spec.Shoot.Kubernetes.KubeAPIServer.AdditionalOidcConfig = &[]imv1.OIDCConfig{list[1]}
	})
	dyn := w.runtimeDynamic(t, insideShoot)
	testenv.Eventually(t, stepTimeout, "provisioning info and OpenIDConnect resources to follow the change", func() (bool, string) {
		info, infoErr := readProvisioningInfo(c)
		oidc, oidcErr := listOpenIDConnects(dyn)
		ok := infoErr == nil && oidcErr == nil && len(info.WorkerPools.Custom) == 1 && info.WorkerPools.Custom[0].AutoScalerMax == 4 &&
			len(oidc) == 1 && oidc[0].GetName() == "kyma-oidc-0" && str(oidc[0], "issuerURL") == "https://login.acme.example.com/oauth2"
		return ok, fmt.Sprintf("custom pools %+v (%v), OpenIDConnect %v (%v)", info.WorkerPools.Custom, infoErr, names(oidc), oidcErr)
	})
	w.waitReady(t, rt.Name, stepTimeout)
	w.waitReconcileTime(t, c, insideShoot)

	// Deleted by hand: back within the drift period, nothing watches inside the runtime.
	ctx := context.Background()
	before := w.provisioningInfo(t, insideShoot)
	deleted := time.Now()
	if err := c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: runtimeconfig.Namespace, Name: runtimeconfig.ProvisioningInfoName}}); err != nil {
		t.Fatal(err)
	}
	if err := dyn.Resource(kube.OpenIDConnectResource).Delete(ctx, "kyma-oidc-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := runtimeconfig.AdminBindingName(rt.Spec.Security.Administrators[0])
	if err := c.Delete(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: binding}}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, driftWait, "objects deleted by hand to come back", func() (bool, string) {
		cm := &corev1.ConfigMap{}
		cmErr := c.Get(ctx, client.ObjectKey{Namespace: runtimeconfig.Namespace, Name: runtimeconfig.ProvisioningInfoName}, cm)
		crbErr := c.Get(ctx, client.ObjectKey{Name: binding}, &rbacv1.ClusterRoleBinding{})
		oidc, oidcErr := listOpenIDConnects(dyn)
		return cmErr == nil && crbErr == nil && oidcErr == nil && len(oidc) == 1,
			fmt.Sprintf("ConfigMap: %v, binding: %v, OpenIDConnect %v (%v)", cmErr, crbErr, names(oidc), oidcErr)
	})
	t.Logf("objects deleted by hand were back after %s (drift period %s)", time.Since(deleted).Round(time.Second), runtimeDriftPeriod)
	if after := w.provisioningInfo(t, insideShoot); diffInfo(before, after) != "" {
		t.Errorf("the restored provisioning info differs: %s", diffInfo(before, after))
	}
}

// pausedRuntimeAPIServer: a runtime whose API server stops answering gets RuntimeAPIServerUnreachable within the
// timeout, another runtime becomes Ready meanwhile, and the first recovers once its server answers again.
func (w *world) pausedRuntimeAPIServer(t *testing.T, paused, bystander *imv1.Runtime) {
	ctx := context.Background()
	if err := w.kcp.Create(ctx, paused.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	w.waitReady(t, paused.Name, provisionTimeout)
	resume, err := w.env.Runtimes.Pause("garden-" + w.project + "/" + pausedShoot)
	if err != nil {
		t.Fatalf("pause the runtime API server: %v", err)
	}
	defer func() { _ = resume() }()
	admins := append(slices.Clone(paused.Spec.Security.Administrators), "late.admin@example.com")
	begin := time.Now()
	w.updateRuntime(t, paused.Name, func(r *imv1.Runtime) { r.Spec.Security.Administrators = admins })
	if err := w.kcp.Create(ctx, bystander.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	var unreachable string
	testenv.Eventually(t, runtimeTimeout+stepTimeout, "the paused runtime to report RuntimeAPIServerUnreachable", func() (bool, string) {
		rt := w.runtime(t, paused.Name)
		c := meta.FindStatusCondition(rt.Status.Conditions, lifecycle.ConditionConfigured)
		if c != nil {
			unreachable = c.Message
		}
		return rt.Status.State == imv1.RuntimeStatePending && readyCondition(rt).Reason == string(lifecycle.ReasonRuntimeAPIServerUnreachable) &&
			c != nil && c.Status == metav1.ConditionFalse && c.Reason == string(runtimeconfig.ReasonRuntimeAPIServerUnreachable), describe(rt)
	})
	t.Logf("RuntimeAPIServerUnreachable reported %s after the change (timeout %s)", time.Since(begin).Round(100*time.Millisecond), runtimeTimeout)
	// The attempt was ended by the operator's own timeout (runtime.timeout), not by a transport error or the
	// system's TCP timeouts: the API server accepts connections and never answers. Judged by the cause, not by the
	// time it took, which a busy machine stretches.
	if !strings.Contains(unreachable, context.DeadlineExceeded.Error()) {
		t.Errorf("the condition says %q; want the attempt ended by the configuration timeout (%v)", unreachable, context.DeadlineExceeded)
	}
	w.waitReady(t, bystander.Name, provisionTimeout)
	if rt := w.runtime(t, paused.Name); rt.Status.State == imv1.RuntimeStateReady {
		t.Fatalf("the paused runtime is Ready: %s", describe(rt))
	}
	if err := resume(); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	w.waitReady(t, paused.Name, stepTimeout)
	t.Logf("Ready %s after the runtime API server answered again (paused %s, backoff cap %s)",
		time.Since(resumed).Round(100*time.Millisecond), resumed.Sub(begin).Round(time.Second), runtimeMaxRetryDelay)
	w.checkAdminBindings(t, pausedShoot, admins)
}

// waitReconcileTime waits until the runtime's provisioning info carries the shoot's last reconcile time and returns
// it. The time alone makes no pass due: the drift pass (runtimeDriftPeriod) writes it.
func (w *world) waitReconcileTime(t *testing.T, c client.Reader, shootName string) string {
	t.Helper()
	s := w.shoot(t, shootName)
	reconciled := s.Status.LastOperation.LastUpdateTime.UTC().Format(time.RFC3339)
	testenv.Eventually(t, stepTimeout, "the provisioning info to carry the shoot's reconcile time", func() (bool, string) {
		info, err := readProvisioningInfo(c)
		return err == nil && info.LastReconcileTime == reconciled, fmt.Sprintf("lastReconcileTime %q (%v), want %q", info.LastReconcileTime, err, reconciled)
	})
	return reconciled
}

// provisioningInfo reads the details of the runtime's kyma-provisioning-info ConfigMap.
func (w *world) provisioningInfo(t testing.TB, shootName string) runtimeconfig.ProvisioningInfo {
	t.Helper()
	info, err := readProvisioningInfo(w.runtimeAdmin(t, shootName))
	if err != nil {
		t.Fatalf("runtime %s: %v", shootName, err)
	}
	return info
}

// readProvisioningInfo reads the details of the kyma-provisioning-info ConfigMap through c (safe in a poll).
func readProvisioningInfo(c client.Reader) (runtimeconfig.ProvisioningInfo, error) {
	var info runtimeconfig.ProvisioningInfo
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: runtimeconfig.Namespace, Name: runtimeconfig.ProvisioningInfoName}, cm); err != nil {
		return info, fmt.Errorf("ConfigMap kyma-system/kyma-provisioning-info: %w", err)
	}
	if cm.Labels[runtimeconfig.LabelManagedBy] != runtimeconfig.ManagedByValue {
		return info, fmt.Errorf("ConfigMap kyma-system/kyma-provisioning-info has labels %v, want the operator's", cm.Labels)
	}
	if err := yaml.Unmarshal([]byte(cm.Data[runtimeconfig.ProvisioningInfoKey]), &info); err != nil {
		return info, fmt.Errorf("details of kyma-provisioning-info are not YAML: %w", err)
	}
	return info, nil
}

func diffInfo(want, got runtimeconfig.ProvisioningInfo) string {
	w, _ := yaml.Marshal(want)
	g, _ := yaml.Marshal(got)
	if string(w) == string(g) {
		return ""
	}
	return fmt.Sprintf("want\n%s\ngot\n%s", w, g)
}

// infrastructureConfigOf is the shoot's spec.provider.infrastructureConfig as a generic document, the form the
// provisioning info carries it in.
func infrastructureConfigOf(t testing.TB, s *gardencorev1beta1.Shoot) any {
	t.Helper()
	if s.Spec.Provider.InfrastructureConfig == nil || len(s.Spec.Provider.InfrastructureConfig.Raw) == 0 {
		t.Fatalf("shoot %s has no infrastructureConfig", s.Name)
	}
	var v map[string]any
	if err := json.Unmarshal(s.Spec.Provider.InfrastructureConfig.Raw, &v); err != nil {
		t.Fatalf("shoot %s infrastructureConfig: %v", s.Name, err)
	}
	return v
}

// seedRegion is the region of the seed Gardener scheduled the shoot to.
func (w *world) seedRegion(t testing.TB, s *gardencorev1beta1.Shoot) string {
	t.Helper()
	if s.Spec.SeedName == nil {
		t.Fatalf("shoot %s has no seed", s.Name)
	}
	seed := &gardencorev1beta1.Seed{}
	if err := w.garden.Get(context.Background(), client.ObjectKey{Name: *s.Spec.SeedName}, seed); err != nil {
		t.Fatal(err)
	}
	return seed.Spec.Provider.Region
}

// checkOperatorIssuerOnly: the shoot's structured authentication holds the operator's issuer, no customer issuer.
func (w *world) checkOperatorIssuerOnly(t *testing.T, s *gardencorev1beta1.Shoot) {
	t.Helper()
	sa := s.Spec.Kubernetes.KubeAPIServer.StructuredAuthentication
	if sa == nil {
		t.Fatal("the shoot has no structured authentication (the operator's issuer belongs there)")
	}
	cm := &corev1.ConfigMap{}
	if err := w.garden.Get(context.Background(), client.ObjectKey{Namespace: s.Namespace, Name: sa.ConfigMapName}, cm); err != nil {
		t.Fatal(err)
	}
	doc := cm.Data["config.yaml"]
	if !strings.Contains(doc, "https://kcp.kyma.example.com") || strings.Contains(doc, "example.com/oauth2") || strings.Contains(doc, "offline-idp") {
		t.Errorf("structured authentication of %s must hold only the operator's issuer:\n%s", s.Name, doc)
	}
}

func (w *world) runtimeDynamic(t testing.TB, shootName string) dynamic.Interface {
	t.Helper()
	cfg, err := w.env.Runtimes.AdminConfig("garden-" + w.project + "/" + shootName)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// openIDConnects lists the runtime's OpenIDConnect resources labelled as the operator's, sorted by name.
func (w *world) openIDConnects(t testing.TB, shootName string) []unstructured.Unstructured {
	t.Helper()
	list, err := listOpenIDConnects(w.runtimeDynamic(t, shootName))
	if err != nil {
		t.Fatalf("runtime %s: %v", shootName, err)
	}
	return list
}

// listOpenIDConnects lists the OpenIDConnect resources labelled as the operator's, sorted by name (safe in a poll).
func listOpenIDConnects(d dynamic.Interface) ([]unstructured.Unstructured, error) {
	list, err := d.Resource(kube.OpenIDConnectResource).List(context.Background(),
		metav1.ListOptions{LabelSelector: runtimeconfig.LabelOIDCManagedBy + "=" + runtimeconfig.ManagedByValue})
	if err != nil {
		return nil, fmt.Errorf("list OpenIDConnect: %w", err)
	}
	slices.SortFunc(list.Items, func(a, b unstructured.Unstructured) int { return strings.Compare(a.GetName(), b.GetName()) })
	return list.Items, nil
}

func names(list []unstructured.Unstructured) []string {
	var out []string
	for _, u := range list {
		out = append(out, u.GetName())
	}
	return out
}

func str(u unstructured.Unstructured, field string) string {
	v, _, _ := unstructured.NestedString(u.Object, "spec", field)
	return v
}

func specBytes(u unstructured.Unstructured, fields ...string) []byte {
	v, _, _ := unstructured.NestedString(u.Object, append([]string{"spec"}, fields...)...)
	b, _ := base64.StdEncoding.DecodeString(v)
	return b
}
