package shoot

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// runStep applies one step to an empty spec (plus whatever earlier steps it depends on).
func runStep(t *testing.T, fn func(input, *Spec) error, in input, pre ...func(input, *Spec) error) (Spec, error) {
	t.Helper()
	var s Spec
	for _, p := range pre {
		if err := p(in, &s); err != nil {
			t.Fatalf("prerequisite step: %v", err)
		}
	}
	err := fn(in, &s)
	return s, err
}

func TestStepIdentity(t *testing.T) {
	rt := testRuntime(AWS)
	rt.LicenceType = "TRIAL"
	s, err := runStep(t, stepIdentity, input{rt: rt, cfg: testConfig()})
	if err != nil {
		t.Fatal(err)
	}
	want := Spec{
		Name: "c-91f0e7a", Namespace: "garden-kyma-dev", Region: "eu-west-1", Purpose: "evaluation",
		Labels: map[string]string{"account": "ga-1", "subaccount": "sa-1"},
		Annotations: map[string]string{
			AnnotationRuntimeID: rt.ID, AnnotationRuntimeGeneration: "3", AnnotationLicenceType: "TRIAL",
		},
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestStepProviderAndCloudProfile(t *testing.T) {
	cases := []struct {
		reason  string
		p       Provider
		profile string
		err     Reason
	}{
		{"configured profile wins", AWS, "aws-kyma", ""},
		{"azure falls back to the default profile", Azure, "az", ""},
		{"openstack default profile", OpenStack, "converged-cloud-kyma", ""},
		{"gdch uses its default profile", GDCH, "gdch", ""},
		{"unknown provider", "vsphere", "", ReasonUnsupportedProvider},
		{"missing provider", "", "", ReasonMissingField},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			rt := testRuntime(AWS)
			rt.Provider = tc.p
			in := input{rt: rt, cfg: testConfig()}
			var s Spec
			err := stepProvider(in, &s)
			if err == nil {
				err = stepCloudProfile(in, &s)
			}
			if reasonOf(err) != tc.err {
				t.Fatalf("want %q, got %v", tc.err, err)
			}
			if s.CloudProfile != tc.profile {
				t.Errorf("want profile %q, got %q", tc.profile, s.CloudProfile)
			}
		})
	}
}

func TestStepKubernetesVersion(t *testing.T) {
	cases := []struct {
		reason  string
		runtime string
		current *Current
		want    string
		err     Reason
	}{
		{"runtime version is used", "1.33", nil, "1.33", ""},
		{"empty falls back to the default", "", nil, "1.33", ""},
		{"upgrade on update", "1.34", &Current{KubernetesVersion: "1.33.5"}, "1.34", ""},
		{"never downgrade", "1.32", &Current{KubernetesVersion: "1.33.5"}, "1.33.5", ""},
		{"same minor keeps the precise current patch", "1.33", &Current{KubernetesVersion: "1.33.5"}, "1.33.5", ""},
		{"garbage version", "latest", nil, "", ReasonInvalidKubernetesVersion},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			rt := testRuntime(AWS)
			rt.KubernetesVersion = tc.runtime
			s, err := runStep(t, stepKubernetesVersion, input{rt: rt, cfg: testConfig(), current: tc.current})
			if reasonOf(err) != tc.err || s.KubernetesVersion != tc.want {
				t.Errorf("want %q/%q, got %q/%v", tc.want, tc.err, s.KubernetesVersion, err)
			}
		})
	}
}

// TestStepOIDC checks how the operator's issuers become the shoot's JWT authenticators.
func TestStepOIDC(t *testing.T) {
	issuer := "https://kymatest.accounts400.ondemand.com"
	cases := []struct {
		reason string
		oidc   []OIDC
		def    *OIDC
		want   *Authentication
		err    Reason
	}{
		{"none and no default: no authentication", nil, nil, nil, ""},
		{
			"KEB's '-' prefixes mean no prefix",
			[]OIDC{{IssuerURL: issuer, ClientID: "c1", UsernameClaim: "sub", UsernamePrefix: ptr("-"), GroupsClaim: "groups", GroupsPrefix: ptr("-"), SigningAlgs: []string{"RS256"}}},
			nil,
			&Authentication{ConfigMapName: "structured-auth-c-91f0e7a", JWT: []Authenticator{{
				Issuer: issuer, Audiences: []string{"c1"}, UsernameClaim: "sub", GroupsClaim: "groups", SigningAlgs: []string{"RS256"},
			}}},
			"",
		},
		{
			"unset username prefix defaults to issuer#",
			[]OIDC{{IssuerURL: issuer, ClientID: "c1"}},
			nil,
			&Authentication{ConfigMapName: "structured-auth-c-91f0e7a", JWT: []Authenticator{{
				Issuer: issuer, Audiences: []string{"c1"}, UsernameClaim: "sub", UsernamePrefix: issuer + "#",
			}}},
			"",
		},
		{
			"the default customer issuer is not part of the shoot (it is served inside the runtime)",
			nil,
			&OIDC{IssuerURL: "https://default.example.com", ClientID: "d", UsernameClaim: "email"},
			nil,
			"",
		},
		{"an invalid default customer issuer is refused", nil, &OIDC{IssuerURL: "https://default.example.com"}, nil, ReasonInvalidOIDC},
		{
			"two clients of one issuer become one authenticator with two audiences",
			[]OIDC{{IssuerURL: issuer, ClientID: "a", UsernamePrefix: ptr("-")}, {IssuerURL: issuer, ClientID: "b", UsernamePrefix: ptr("-")}, {IssuerURL: "https://other.example.com", ClientID: "o", UsernamePrefix: ptr("x:")}},
			nil,
			&Authentication{ConfigMapName: "structured-auth-c-91f0e7a", JWT: []Authenticator{
				{Issuer: issuer, Audiences: []string{"a", "b"}, UsernameClaim: "sub"},
				{Issuer: "https://other.example.com", Audiences: []string{"o"}, UsernameClaim: "sub", UsernamePrefix: "x:"},
			}},
			"",
		},
		{"same issuer, different mapping", []OIDC{{IssuerURL: issuer, ClientID: "a"}, {IssuerURL: issuer, ClientID: "b", UsernameClaim: "email"}}, nil, nil, ReasonInvalidOIDC},
		{"http issuer is rejected", []OIDC{{IssuerURL: "http://insecure.example.com", ClientID: "a"}}, nil, nil, ReasonInvalidOIDC},
		{"missing client ID", []OIDC{{IssuerURL: issuer}}, nil, nil, ReasonInvalidOIDC},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			// The authenticators of the shoot are the operator's issuers; customer issuers only get validated.
			rt := testRuntime(AWS)
			cfg := testConfig()
			cfg.DefaultOIDC, cfg.OperatorOIDC = tc.def, tc.oidc
			s, err := runStep(t, stepOIDC, input{rt: rt, cfg: cfg})
			if reasonOf(err) != tc.err {
				t.Fatalf("want %q, got %v", tc.err, err)
			}
			if diff := cmp.Diff(tc.want, s.Authentication); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestStepNetworkingFilter(t *testing.T) {
	cases := []struct {
		reason          string
		egress, ingress bool
		want            Extension
	}{
		{"both off: stated as disabled", false, false, Extension{Type: ExtensionNetworkingFilter, Disabled: true, Config: NetworkingFilterConfig{}}},
		{"egress only", true, false, Extension{Type: ExtensionNetworkingFilter, Config: NetworkingFilterConfig{}}},
		{"ingress filtering is blackholing", true, true, Extension{Type: ExtensionNetworkingFilter, Config: NetworkingFilterConfig{Blackholing: true}}},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			rt := testRuntime(AWS)
			rt.EgressFilter, rt.IngressFilter = tc.egress, tc.ingress
			s, _ := runStep(t, stepNetworkingFilter, input{rt: rt})
			if diff := cmp.Diff([]Extension{tc.want}, s.Extensions); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestStepRegistryCache(t *testing.T) {
	rt := testRuntime(AWS)
	rt.RegistryCaches = []RegistryCache{
		{Upstream: "docker.io", VolumeSize: "10Gi", GarbageCollectionTTL: "168h"},
		{Upstream: "registry.example.com:5000", SecretReferenceName: "ref", CredentialsSecret: "reg-cache-own"},
		{Upstream: "quay.io", HTTPProxy: "http://proxy.example.com:3128", HTTPSProxy: "https://proxy.example.com", TLS: new(bool)},
	}
	rt.RegistryCredentialCopies = []string{"reg-cache-own"}
	s, err := runStep(t, stepRegistryCache, input{rt: rt})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Extension{{Type: ExtensionRegistryCache, Config: RegistryCacheConfig{Caches: rt.RegistryCaches}}}, s.Extensions); diff != "" {
		t.Errorf("extensions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]ResourceRef{{Name: "ref", APIVersion: "v1", Kind: "Secret", TargetName: "reg-cache-own"}}, s.Resources); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	for _, bad := range []RegistryCache{{Upstream: "Not A Host"}, {Upstream: "docker.io", GarbageCollectionTTL: "a week"}, {Upstream: "docker.io", SecretReferenceName: "x"},
		{Upstream: "docker.io", HTTPProxy: "proxy.example.com:3128"}, {Upstream: "docker.io", HTTPSProxy: "ftp://proxy.example.com"}} {
		rt.RegistryCaches = []RegistryCache{bad}
		if _, err := runStep(t, stepRegistryCache, input{rt: rt}); reasonOf(err) != ReasonInvalidRegistryCache {
			t.Errorf("%+v: want InvalidRegistryCache, got %v", bad, err)
		}
	}
}

// TestStepRegistryCacheRefusesForeignCredentials: a cache may reference only a reg-cache-* copy confirmed to be made
// for this runtime; another runtime's copy (customer B naming customer A's) or any other project Secret (cloud
// credentials) is refused with a stable reason, whatever the Runtime says.
func TestStepRegistryCacheRefusesForeignCredentials(t *testing.T) {
	rt := testRuntime(AWS)
	rt.RegistryCredentialCopies = []string{"reg-cache-mine", "aws-credentials"}
	for _, name := range []string{"reg-cache-of-runtime-a", "aws-credentials", "kubeconfig-rt-a"} {
		rt.RegistryCaches = []RegistryCache{{Upstream: "quay.io"}, {Upstream: "docker.io", SecretReferenceName: name, CredentialsSecret: name}}
		_, err := runStep(t, stepRegistryCache, input{rt: rt})
		if reasonOf(err) != ReasonForeignRegistryCredentials {
			t.Errorf("cache referencing %q: got %v, want %s", name, err, ReasonForeignRegistryCredentials)
		}
		if ve := AsValidationError(err); ve == nil || ve.Field != "spec.imageRegistryCache[1].config.secretReferenceName" {
			t.Errorf("cache referencing %q: field of %v", name, err)
		}
	}
	rt.RegistryCaches = []RegistryCache{{Upstream: "docker.io", SecretReferenceName: "reg-cache-mine", CredentialsSecret: "reg-cache-mine"}}
	if _, err := runStep(t, stepRegistryCache, input{rt: rt}); err != nil {
		t.Errorf("the runtime's own copy: %v", err)
	}
}

// TestStepRegistryCacheKeepsThePreviousManagersCopyUntilItIsReplaced: on a runtime adopted from the previous
// manager, spec.imageRegistryCache names the Secret in the runtime (its registry cache controller wrote it so) and
// the shoot references the previous manager's copy reg-cache-<uuid> for that upstream. Until this operator's sync
// writes its own copy into the entry, the shoot keeps the reference it has; a name that is no copy and that the
// shoot does not back stays refused, and so does another upstream's copy.
func TestStepRegistryCacheKeepsThePreviousManagersCopyUntilItIsReplaced(t *testing.T) {
	rt := testRuntime(AWS)
	rt.RegistryCaches = []RegistryCache{{Upstream: "docker.io", SecretReferenceName: "creds-in-runtime", CredentialsSecret: "creds-in-runtime"}}
	cur := &Current{RegistryCacheCredentials: []CurrentRegistryCredentials{
		{Upstream: "docker.io", ResourceName: "reg-cache-6f1c", SecretName: "reg-cache-6f1c"},
		{Upstream: "quay.io", ResourceName: "reg-cache-9a2b", SecretName: "reg-cache-9a2b"},
	}}
	s, err := runStep(t, stepRegistryCache, input{rt: rt, current: cur})
	if err != nil {
		t.Fatalf("the previous manager's entry on its shoot: %v", err)
	}
	want := []Extension{{Type: ExtensionRegistryCache, Config: RegistryCacheConfig{Caches: []RegistryCache{
		{Upstream: "docker.io", SecretReferenceName: "reg-cache-6f1c", CredentialsSecret: "reg-cache-6f1c"}}}}}
	if diff := cmp.Diff(want, s.Extensions); diff != "" {
		t.Errorf("extensions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]ResourceRef{{Name: "reg-cache-6f1c", APIVersion: "v1", Kind: "Secret", TargetName: "reg-cache-6f1c"}}, s.Resources); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}

	for name, tc := range map[string]struct {
		caches []RegistryCache
		cur    *Current
	}{
		"create (no shoot yet)":             {rt.RegistryCaches, nil},
		"the shoot caches another upstream": {[]RegistryCache{{Upstream: "ghcr.io", SecretReferenceName: "creds-in-runtime", CredentialsSecret: "creds-in-runtime"}}, cur},
		"the shoot's reference is no copy": {rt.RegistryCaches, &Current{RegistryCacheCredentials: []CurrentRegistryCredentials{
			{Upstream: "docker.io", ResourceName: "creds", SecretName: "aws-credentials"}}}},
		"an unconfirmed copy is not replaced by the shoot's": {[]RegistryCache{{Upstream: "docker.io", SecretReferenceName: "reg-cache-other", CredentialsSecret: "reg-cache-other"}}, cur},
	} {
		r := testRuntime(AWS)
		r.RegistryCaches = tc.caches
		if _, err := runStep(t, stepRegistryCache, input{rt: r, current: tc.cur}); reasonOf(err) != ReasonForeignRegistryCredentials {
			t.Errorf("%s: got %v, want %s", name, err, ReasonForeignRegistryCredentials)
		}
	}
}

func TestStepAuditLog(t *testing.T) {
	cfg := testConfig()
	cfg.AuditLog = AuditLogConfig{
		Enabled: true, PolicyConfigMapName: "audit-policy", SecretName: "auditlog-secret", MissingTenantIsError: true,
		Tenants: map[Provider]map[string]AuditLogTenant{AWS: {"eu-west-1": {TenantID: "t1", ServiceURL: "https://audit.example.com"}}},
	}
	s, err := runStep(t, stepAuditLog, input{rt: testRuntime(AWS), cfg: cfg})
	if err != nil {
		t.Fatal(err)
	}
	wantExt := []Extension{{Type: ExtensionAuditLog, Config: AuditLogExtensionConfig{TenantID: "t1", ServiceURL: "https://audit.example.com", SecretReferenceName: AuditLogResourceName}}}
	if diff := cmp.Diff(wantExt, s.Extensions); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if s.AuditPolicyConfigMap != "audit-policy" || len(s.Resources) != 1 || s.Resources[0].TargetName != "auditlog-secret" {
		t.Errorf("policy/resources not wired: %+v", s)
	}
	if _, err := runStep(t, stepAuditLog, input{rt: testRuntime(Azure), cfg: cfg}); reasonOf(err) != ReasonAuditLogTenantMissing {
		t.Errorf("missing tenant must fail when configured so, got %v", err)
	}
	cfg.AuditLog.MissingTenantIsError = false
	if s, err := runStep(t, stepAuditLog, input{rt: testRuntime(Azure), cfg: cfg}); err != nil || len(s.Extensions) != 0 {
		t.Errorf("missing tenant tolerated: want no extension, got %+v, %v", s.Extensions, err)
	}
}

func TestStepDNS(t *testing.T) {
	cfg := testConfig()
	s, _ := runStep(t, stepDNS, input{rt: testRuntime(AWS), cfg: cfg})
	if s.DNS != nil || len(s.Extensions) != 0 {
		t.Errorf("no DNS without a configured domain, got %+v", s)
	}
	cfg.DNS = DNSConfig{DomainPrefix: "kyma.example.com", SecretName: "dns-secret", ProviderType: "aws-route53"}
	s, err := runStep(t, stepDNS, input{rt: testRuntime(AWS), cfg: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&DNS{Domain: "c-91f0e7a.kyma.example.com", ProviderType: "aws-route53", SecretName: "dns-secret"}, s.DNS); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(s.Extensions) != 2 || s.Extensions[0].Type != ExtensionDNS || s.Extensions[1].Type != ExtensionCert {
		t.Errorf("want dns and cert extensions, got %+v", s.Extensions)
	}
}

func TestPlacementSteps(t *testing.T) {
	cases := []struct {
		reason string
		mutate func(*Runtime)
		check  func(Spec) bool
	}{
		{"production gets the region's maintenance window", func(r *Runtime) { r.Purpose = "production" },
			func(s Spec) bool { return s.Maintenance.Window != nil && s.Maintenance.Window.Begin == "220000+0000" }},
		{"evaluation gets no window", func(r *Runtime) {}, func(s Spec) bool { return s.Maintenance.Window == nil && s.Maintenance.AutoUpdateKubernetesVersion }},
		{"cf-eu11 is EU access", func(r *Runtime) { r.PlatformRegion = "cf-eu11" },
			func(s Spec) bool {
				return len(s.AccessRestrictions) == 1 && s.AccessRestrictions[0].Name == EUAccessRestriction && s.AccessRestrictions[0].Options[EUAccessNodesOption] == "true"
			}},
		{"cf-eu10 is not EU access", func(r *Runtime) {}, func(s Spec) bool { return s.AccessRestrictions == nil }},
		{"enforced seed location selects the region", func(r *Runtime) { r.EnforceSeedLocation = true }, func(s Spec) bool { return s.SeedRegion == "eu-west-1" }},
		{"me-central2 tolerates KSA seeds", func(r *Runtime) { r.Region = "me-central2" },
			func(s Spec) bool { return len(s.Tolerations) == 1 && s.Tolerations[0].Key == KSAToleration }},
		{"openstack uses the internet exposure class", func(r *Runtime) { r.Provider = OpenStack }, func(s Spec) bool { return s.ExposureClass == OpenStackExposureClass }},
		{"aws has no exposure class", func(r *Runtime) {}, func(s Spec) bool { return s.ExposureClass == "" }},
		{"zone HA", func(r *Runtime) { r.HAFailureTolerance = "zone" }, func(s Spec) bool { return s.HAFailureTolerance == "zone" }},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			rt := testRuntime(AWS)
			tc.mutate(&rt)
			in := input{rt: rt, cfg: testConfig()}
			var s Spec
			for _, fn := range []func(input, *Spec) error{stepMaintenance, stepEUAccess, stepSeedSelector, stepTolerations, stepExposureClass, stepHighAvailability} {
				if err := fn(in, &s); err != nil {
					t.Fatal(err)
				}
			}
			if !tc.check(s) {
				t.Errorf("unexpected spec: %+v", s)
			}
		})
	}
}

func TestStepNetworking(t *testing.T) {
	cases := []struct {
		reason string
		n      Networking
		err    Reason
	}{
		{"KEB defaults are fine", Networking{Pods: "10.96.0.0/13", Nodes: "10.250.0.0/16", Services: "10.104.0.0/13"}, ""},
		{"pods overlapping nodes", Networking{Pods: "10.248.0.0/13", Nodes: "10.250.0.0/16"}, ReasonOverlappingCIDRs},
		{"pods with host bits", Networking{Pods: "10.96.0.1/13", Nodes: "10.250.0.0/16"}, ReasonInvalidCIDR},
		{"services overlapping pods", Networking{Pods: "10.96.0.0/13", Nodes: "10.250.0.0/16", Services: "10.100.0.0/16"}, ReasonOverlappingCIDRs},
		{"services overlapping nodes", Networking{Nodes: "10.250.0.0/16", Services: "10.250.128.0/17"}, ReasonOverlappingCIDRs},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			rt := testRuntime(AWS)
			rt.Networking = tc.n
			_, err := runStep(t, stepNetworking, input{rt: rt})
			if reasonOf(err) != tc.err {
				t.Errorf("want %q, got %v", tc.err, err)
			}
		})
	}
}
