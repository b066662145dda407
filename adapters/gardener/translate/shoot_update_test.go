package translate

import (
	"encoding/json"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/google/go-cmp/cmp"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim/core/domain/shoot"
)

func adapterConfig() shoot.Config {
	return shoot.Config{
		Project: "kyma-dev", DefaultKubernetesVersion: "1.33",
		DefaultMachineImage: shoot.MachineImage{Name: "gardenlinux", Version: "1592.1.0"},
	}
}

func adapterRuntime() shoot.Runtime {
	return shoot.Runtime{
		ID: "rt-1", Name: "c-1234567", Purpose: "production", Region: "eu-west-1", CredentialsBinding: "b",
		KubernetesVersion: "1.33", Provider: shoot.AWS,
		Workers:    []shoot.Worker{{Name: "cpu-worker-0", MachineType: "m6i.large", Minimum: 1, Maximum: 3, Zones: []string{"eu-west-1a", "eu-west-1b"}}},
		Networking: shoot.Networking{Type: "calico", Nodes: "10.250.0.0/16", Pods: "10.96.0.0/13", Services: "10.104.0.0/13"},
	}
}

// existingShoot is a shoot as Gardener returns it: defaulted, with fields operators set.
func existingShoot(t *testing.T) *gardencorev1beta1.Shoot {
	t.Helper()
	infra := `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","enableECRAccess":true,
	 "networks":{"vpc":{"cidr":"10.250.0.0/16","gatewayEndpoints":["s3"]},"zones":[
	  {"name":"eu-west-1b","workers":"10.250.0.0/19","public":"10.250.32.0/20","internal":"10.250.48.0/20","elasticIPAllocationID":"eipalloc-1"},
	  {"name":"eu-west-1a","workers":"10.250.64.0/19","public":"10.250.96.0/20","internal":"10.250.112.0/20"}]}}`
	return &gardencorev1beta1.Shoot{
		ObjectMeta: metav1.ObjectMeta{Name: "c-1234567", Namespace: "garden-kyma-dev",
			Annotations: map[string]string{"gardener.cloud/created-by": "someone"}},
		Spec: gardencorev1beta1.ShootSpec{
			Kubernetes: gardencorev1beta1.Kubernetes{Version: "1.33.5",
				KubeAPIServer: &gardencorev1beta1.KubeAPIServerConfig{EnableAnonymousAuthentication: ptr.To(false)}}, //nolint:staticcheck // any field we do not own will do; this one is set by operators on old shoots
			Networking: &gardencorev1beta1.Networking{Type: ptr.To("calico"), Nodes: ptr.To("10.250.0.0/16")},
			Provider: gardencorev1beta1.Provider{
				Type:                 "aws",
				InfrastructureConfig: &runtime.RawExtension{Raw: []byte(infra)},
				Workers: []gardencorev1beta1.Worker{
					{Name: "cpu-worker-0", Machine: gardencorev1beta1.Machine{Type: "m6i.large",
						Image: &gardencorev1beta1.ShootMachineImage{Name: "gardenlinux", Version: ptr.To("1592.4.0")}},
						Zones: []string{"eu-west-1b", "eu-west-1a"}, Maximum: 3, Minimum: 1,
						MachineControllerManagerSettings: &gardencorev1beta1.MachineControllerManagerSettings{MaxEvictRetries: ptr.To[int32](7)}},
					{Name: "removed", Machine: gardencorev1beta1.Machine{Type: "m6i.large"}, Zones: []string{"eu-west-1a"}},
				},
			},
			Extensions:  []gardencorev1beta1.Extension{{Type: "shoot-oidc-service"}, {Type: "registry-cache"}},
			Maintenance: &gardencorev1beta1.Maintenance{TimeWindow: &gardencorev1beta1.MaintenanceTimeWindow{Begin: "010000+0000", End: "020000+0000"}},
			Region:      "eu-west-1",
		},
	}
}

func TestCurrentFromShoot(t *testing.T) {
	existing := existingShoot(t)
	got, err := CurrentFromShoot(existing)
	if err != nil {
		t.Fatal(err)
	}
	want := shoot.Current{
		KubernetesVersion: "1.33.5",
		Workers: []shoot.CurrentWorker{
			{Name: "cpu-worker-0", ImageName: "gardenlinux", ImageVersion: "1592.4.0", Zones: []string{"eu-west-1b", "eu-west-1a"},
				MaxEvictRetries: ptr.To[int32](7)},
			{Name: "removed", Zones: []string{"eu-west-1a"}},
		},
		HasInfrastructureConfig: true,
		InfrastructureZones: []shoot.CurrentZone{
			{Name: "eu-west-1b", CIDRs: []string{"10.250.0.0/19", "10.250.32.0/20", "10.250.48.0/20"}},
			{Name: "eu-west-1a", CIDRs: []string{"10.250.64.0/19", "10.250.96.0/20", "10.250.112.0/20"}},
		},
		ExtensionTypes: []string{"shoot-oidc-service", "registry-cache"},
		// Verbatim, for the provisioning info inside the runtime.
		InfrastructureConfig: existing.Spec.Provider.InfrastructureConfig.Raw,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestApplySpecKeepsWhatWeDoNotOwn(t *testing.T) {
	current := existingShoot(t)
	rt := adapterRuntime()
	rt.Workers[0].Zones = []string{"eu-west-1a", "eu-west-1c"} // adds a zone
	cur, err := CurrentFromShoot(current)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := shoot.GenerateUpdate(rt, adapterConfig(), cur)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ApplySpec(current, spec)
	if err != nil {
		t.Fatal(err)
	}

	if got.Annotations["gardener.cloud/created-by"] != "someone" || got.Annotations[shoot.AnnotationRuntimeID] != "rt-1" {
		t.Errorf("annotations not merged: %v", got.Annotations)
	}
	if got.Spec.Kubernetes.KubeAPIServer.EnableAnonymousAuthentication == nil { //nolint:staticcheck // see above
		t.Error("unowned kube-apiserver field lost")
	}
	if got.Spec.Kubernetes.Version != "1.33.5" {
		t.Errorf("kubernetes version downgraded to %s", got.Spec.Kubernetes.Version)
	}
	if len(got.Spec.Provider.Workers) != 1 || got.Spec.Provider.Workers[0].Name != "cpu-worker-0" {
		t.Fatalf("removed pool must be gone: %+v", got.Spec.Provider.Workers)
	}
	w := got.Spec.Provider.Workers[0]
	if ptr.Deref(w.Machine.Image.Version, "") != "1592.4.0" {
		t.Errorf("image downgraded to %v", w.Machine.Image.Version)
	}
	if diff := cmp.Diff([]string{"eu-west-1b", "eu-west-1a", "eu-west-1c"}, w.Zones); diff != "" {
		t.Errorf("zones (-want +got):\n%s", diff)
	}
	if w.MachineControllerManagerSettings == nil || *w.MachineControllerManagerSettings.MaxEvictRetries != 7 {
		t.Error("unowned worker field lost")
	}
	var infra map[string]any
	if err := json.Unmarshal(got.Spec.Provider.InfrastructureConfig.Raw, &infra); err != nil {
		t.Fatal(err)
	}
	networks := infra["networks"].(map[string]any)
	zones := networks["zones"].([]any)
	var names []string
	for _, z := range zones {
		names = append(names, z.(map[string]any)["name"].(string))
	}
	if diff := cmp.Diff([]string{"eu-west-1b", "eu-west-1a", "eu-west-1c"}, names); diff != "" {
		t.Errorf("infrastructure zones (-want +got):\n%s", diff)
	}
	if zones[0].(map[string]any)["elasticIPAllocationID"] != "eipalloc-1" || infra["enableECRAccess"] != true ||
		networks["vpc"].(map[string]any)["gatewayEndpoints"] == nil {
		t.Errorf("operator-set infrastructure fields lost: %s", got.Spec.Provider.InfrastructureConfig.Raw)
	}
	if c := zones[2].(map[string]any); c["workers"] != "10.250.128.0/19" {
		t.Errorf("new zone should get the first free slot, got %v", c)
	}
	var types []string
	for _, e := range got.Spec.Extensions {
		types = append(types, e.Type)
	}
	// The generated networking filter the shoot lacked goes to its generated place, before the OIDC extension.
	if diff := cmp.Diff([]string{"shoot-networking-filter", "shoot-oidc-service"}, types); diff != "" {
		t.Errorf("extensions: unowned kept, disabled registry cache removed, the new one at its generated place (-want +got):\n%s", diff)
	}
	if got.Spec.Maintenance.TimeWindow.Begin != "010000+0000" {
		t.Error("maintenance window set by Gardener must be kept when config has none")
	}
}

func TestApplySpecWithoutNewZonesLeavesInfrastructureUntouched(t *testing.T) {
	current := existingShoot(t)
	before := string(current.Spec.Provider.InfrastructureConfig.Raw)
	cur, _ := CurrentFromShoot(current)
	spec, err := shoot.GenerateUpdate(adapterRuntime(), adapterConfig(), cur)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ApplySpec(current, spec)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Spec.Provider.InfrastructureConfig.Raw) != before {
		t.Errorf("infrastructure changed:\n%s", got.Spec.Provider.InfrastructureConfig.Raw)
	}
}

func TestApplySpecKeepsLegacyAzureInfrastructure(t *testing.T) {
	legacy := `{"apiVersion":"azure.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vnet":{"cidr":"10.250.0.0/16"},"workers":"10.250.0.0/16"},"zoned":false}`
	current := &gardencorev1beta1.Shoot{Spec: gardencorev1beta1.ShootSpec{
		Kubernetes: gardencorev1beta1.Kubernetes{Version: "1.33.5"},
		Provider: gardencorev1beta1.Provider{Type: "azure", InfrastructureConfig: &runtime.RawExtension{Raw: []byte(legacy)},
			Workers: []gardencorev1beta1.Worker{{Name: "cpu-worker-0", Machine: gardencorev1beta1.Machine{Type: "Standard_D4"}}}},
	}}
	cur, err := CurrentFromShoot(current)
	if err != nil {
		t.Fatal(err)
	}
	rt := adapterRuntime()
	rt.Provider, rt.Region = shoot.Azure, "westeurope"
	rt.Workers[0].Zones = []string{"1", "2", "3"}
	spec, err := shoot.GenerateUpdate(rt, adapterConfig(), cur)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ApplySpec(current, spec)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Spec.Provider.InfrastructureConfig.Raw) != legacy || len(got.Spec.Provider.Workers[0].Zones) != 0 {
		t.Errorf("legacy azure changed: %s zones %v", got.Spec.Provider.InfrastructureConfig.Raw, got.Spec.Provider.Workers[0].Zones)
	}
}

func TestAuthenticationConfigMapData(t *testing.T) {
	data, err := AuthenticationConfigMapData(&shoot.Authentication{ConfigMapName: "x", JWT: []shoot.Authenticator{{
		Issuer: "https://issuer.example.com", Audiences: []string{"a", "b"}, UsernameClaim: "sub", GroupsClaim: "groups",
		RequiredClaims: map[string]string{"tenant": "t1"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: apiserver.config.k8s.io/v1beta1
jwt:
- claimMappings:
    groups:
      claim: groups
      prefix: ""
    username:
      claim: sub
      prefix: ""
  claimValidationRules:
  - claim: tenant
    requiredValue: t1
  issuer:
    audienceMatchPolicy: MatchAny
    audiences:
    - a
    - b
    url: https://issuer.example.com
kind: AuthenticationConfiguration
`
	if diff := cmp.Diff(want, data[AuthenticationConfigKey]); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestCurrentAuditLog: the auditlog extension of an existing shoot (as the previous infrastructure manager renders
// it) is read back with its credentials resource and audit policy; one that is disabled or misses a part is none.
func TestCurrentAuditLog(t *testing.T) {
	withAuditLog := func(mut func(s *gardencorev1beta1.Shoot)) *gardencorev1beta1.Shoot {
		s := existingShoot(t)
		s.Spec.Extensions = append(s.Spec.Extensions, gardencorev1beta1.Extension{Type: "shoot-auditlog-service",
			ProviderConfig: &runtime.RawExtension{Raw: []byte(`{"apiVersion":"service.auditlog.extensions.gardener.cloud/v1alpha1",` +
				`"kind":"AuditlogConfig","type":"standard","tenantID":"t-1","serviceURL":"https://auditlog.example.com:3001","secretReferenceName":"auditlog-credentials"}`)}})
		s.Spec.Resources = append(s.Spec.Resources, gardencorev1beta1.NamedResourceReference{Name: "auditlog-credentials",
			ResourceRef: autoscalingv1.CrossVersionObjectReference{Kind: "Secret", Name: "auditlog-secret-eu", APIVersion: "v1"}})
		if s.Spec.Kubernetes.KubeAPIServer == nil {
			s.Spec.Kubernetes.KubeAPIServer = &gardencorev1beta1.KubeAPIServerConfig{}
		}
		s.Spec.Kubernetes.KubeAPIServer.AuditConfig = &gardencorev1beta1.AuditConfig{
			AuditPolicy: &gardencorev1beta1.AuditPolicy{ConfigMapRef: &corev1.ObjectReference{Name: "audit-policy"}}}
		if mut != nil {
			mut(s)
		}
		return s
	}
	want := &shoot.CurrentAuditLog{TenantID: "t-1", ServiceURL: "https://auditlog.example.com:3001", SecretName: "auditlog-secret-eu", ResourceName: "auditlog-credentials",
		PolicyConfigMap: "audit-policy"}
	for _, tc := range []struct {
		name  string
		shoot *gardencorev1beta1.Shoot
		want  *shoot.CurrentAuditLog
	}{
		{"enabled", withAuditLog(nil), want},
		{"none", existingShoot(t), nil},
		{"disabled", withAuditLog(func(s *gardencorev1beta1.Shoot) { s.Spec.Extensions[len(s.Spec.Extensions)-1].Disabled = ptr.To(true) }), nil},
		{"credentials resource missing", withAuditLog(func(s *gardencorev1beta1.Shoot) { s.Spec.Resources = s.Spec.Resources[:len(s.Spec.Resources)-1] }), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CurrentFromShoot(tc.shoot)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.AuditLog); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestApplySpecKeepsThePoolOrderOfTheShoot: pools the shoot has stay in its order whatever order the Runtime lists
// them in (the previous manager kept it; a new order is a new generation); new pools follow in the Runtime's order.
func TestApplySpecKeepsThePoolOrderOfTheShoot(t *testing.T) {
	current := existingShoot(t)
	pool := func(name string) gardencorev1beta1.Worker {
		w := *current.Spec.Provider.Workers[0].DeepCopy()
		w.Name = name
		return w
	}
	current.Spec.Provider.Workers = []gardencorev1beta1.Worker{pool("cpu-worker-0"), pool("b"), pool("a")}
	rt := adapterRuntime()
	main := rt.Workers[0]
	named := func(name string) shoot.Worker {
		w := main
		w.Name = name
		return w
	}
	rt.Workers = []shoot.Worker{main, named("new-2"), named("a"), named("new-1"), named("b")}
	cur, err := CurrentFromShoot(current)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := shoot.GenerateUpdate(rt, adapterConfig(), cur)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ApplySpec(current, spec)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range got.Spec.Provider.Workers {
		names = append(names, w.Name)
	}
	if diff := cmp.Diff([]string{"cpu-worker-0", "b", "a", "new-2", "new-1"}, names); diff != "" {
		t.Errorf("pool order (-want +got):\n%s", diff)
	}
}
