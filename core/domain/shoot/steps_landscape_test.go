package shoot

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestStepACLRule(t *testing.T) {
	operator := []string{"203.0.113.0/29", "198.51.100.7/32"}
	cases := []struct {
		reason   string
		provider Provider
		acl      []string
		settings ACLSettings
		want     []string // nil: no acl extension
		err      Reason
	}{
		{"feature off: nothing, whatever the runtime asks", AWS, []string{"192.168.1.0/24"}, ACLSettings{ControlPlaneCIDRs: operator}, nil, ""},
		{"no CIDRs: no restriction", AWS, nil, ACLSettings{Enabled: true, ControlPlaneCIDRs: operator}, nil, ""},
		{"customer CIDRs plus the control plane's, deduplicated, masked", AWS, []string{"192.168.1.7/24", "203.0.113.0/29"},
			ACLSettings{Enabled: true, ControlPlaneCIDRs: operator}, []string{"192.168.1.0/24", "203.0.113.0/29", "198.51.100.7/32"}, ""},
		{"azure is a default acl provider", Azure, []string{"192.168.1.0/24"}, ACLSettings{Enabled: true, ControlPlaneCIDRs: operator},
			[]string{"192.168.1.0/24", "203.0.113.0/29", "198.51.100.7/32"}, ""},
		{"gcp: the extension does not run there", GCP, []string{"192.168.1.0/24"}, ACLSettings{Enabled: true, ControlPlaneCIDRs: operator}, nil, ""},
		{"configured providers replace the default", GCP, []string{"192.168.1.0/24"},
			ACLSettings{Enabled: true, Providers: []Provider{GCP}, ControlPlaneCIDRs: operator}, []string{"192.168.1.0/24", "203.0.113.0/29", "198.51.100.7/32"}, ""},
		{"no control plane addresses: refused, not applied", AWS, []string{"192.168.1.0/24"}, ACLSettings{Enabled: true}, nil, ReasonACLOperatorAddressesMissing},
		{"a bad customer CIDR", AWS, []string{"not-a-cidr"}, ACLSettings{Enabled: true, ControlPlaneCIDRs: operator}, nil, ReasonInvalidACL},
		{"a bad control plane CIDR", AWS, []string{"192.168.1.0/24"}, ACLSettings{Enabled: true, ControlPlaneCIDRs: []string{"x"}}, nil, ReasonInvalidConfig},
		{"an unreadable source: refused with its problem", AWS, []string{"192.168.1.0/24"},
			ACLSettings{Enabled: true, ControlPlaneCIDRs: operator, ControlPlaneCIDRsProblem: "key acl-list.json is not JSON"}, nil, ReasonACLOperatorAddressesMissing},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			rt := testRuntime(tc.provider)
			rt.ACL = tc.acl
			cfg := testConfig()
			cfg.ACL = tc.settings
			s, err := runStep(t, stepACL, input{rt: rt, cfg: cfg})
			if reasonOf(err) != tc.err {
				t.Fatalf("want %q, got %v", tc.err, err)
			}
			var want []Extension
			if tc.want != nil {
				want = []Extension{{Type: ExtensionACL, Config: ACLConfig{AllowedCIDRs: tc.want}}}
			}
			if diff := cmp.Diff(want, s.Extensions); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func testCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "issuer-ca"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<31, 0), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func TestStepOIDCSemantics(t *testing.T) {
	ca := testCA(t)
	operator := OIDC{IssuerURL: "https://kcp.example.com", ClientID: "kim", UsernamePrefix: ptr("-")}
	def := OIDC{IssuerURL: "https://default.example.com", ClientID: "d", UsernamePrefix: ptr("-")}
	customer := OIDC{IssuerURL: "https://customer.example.com", ClientID: "c", UsernamePrefix: ptr("-"), CABundle: ca}
	issuers := func(a *Authentication) []string {
		if a == nil {
			return nil
		}
		var out []string
		for _, j := range a.JWT {
			out = append(out, j.Issuer)
		}
		return out
	}
	jwks := []byte(`{"keys":[{"kty":"RSA","kid":"k1","n":"sXch","e":"AQAB"}]}`)
	cases := []struct {
		reason  string
		oidc    []OIDC
		given   bool
		want    []string // issuers in the shoot's structured authentication: only the operator's
		ext     bool     // shoot-oidc-service enabled
		err     Reason
		errPath string
	}{
		{"absent: the default customer issuer is served in the runtime, the operator's is in the shoot", nil, false, []string{operator.IssuerURL}, true, "", ""},
		{"present and empty: no customer issuer, the operator's stays", []OIDC{}, true, []string{operator.IssuerURL}, false, "", ""},
		{"present: the listed issuers instead of the default", []OIDC{customer}, true, []string{operator.IssuerURL}, true, "", ""},
		{"jwks is carried (by the OpenIDConnect resource)", []OIDC{{IssuerURL: "https://j.example.com", ClientID: "j", JWKS: jwks}}, true,
			[]string{operator.IssuerURL}, true, "", ""},
		{"jwks that is no key set", []OIDC{{IssuerURL: "https://j.example.com", ClientID: "j", JWKS: []byte(`{"keys":[]}`)}}, true,
			nil, false, ReasonInvalidOIDC, "spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig[0].jwks"},
		{"jwks that is no JSON", []OIDC{customer, {IssuerURL: "https://j.example.com", ClientID: "j", JWKS: []byte("keys")}}, true,
			nil, false, ReasonInvalidOIDC, "spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig[1].jwks"},
		{"a signing algorithm OpenIDConnect does not accept", []OIDC{{IssuerURL: "https://j.example.com", ClientID: "j", SigningAlgs: []string{"RS256", "HS256"}}}, true,
			nil, false, ReasonInvalidOIDC, "spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig[0].signingAlgs[1]"},
		{"a CA bundle that is no certificate", []OIDC{{IssuerURL: "https://j.example.com", ClientID: "j", CABundle: "not pem"}}, true,
			nil, false, ReasonInvalidOIDC, "spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig[0].caBundle"},
		{"a customer issuer without https", []OIDC{{IssuerURL: "http://j.example.com", ClientID: "j"}}, true,
			nil, false, ReasonInvalidOIDC, "spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig[0].issuerURL"},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			rt := testRuntime(AWS)
			rt.OIDC, rt.OIDCGiven = tc.oidc, tc.given
			cfg := testConfig()
			cfg.DefaultOIDC, cfg.OperatorOIDC = &def, []OIDC{operator}
			s, err := runStep(t, stepOIDC, input{rt: rt, cfg: cfg})
			if reasonOf(err) != tc.err {
				t.Fatalf("want %q, got %v", tc.err, err)
			}
			if ve := AsValidationError(err); ve != nil && ve.Field != tc.errPath {
				t.Errorf("error field %q, want %q", ve.Field, tc.errPath)
			}
			if diff := cmp.Diff(tc.want, issuers(s.Authentication)); diff != "" {
				t.Errorf("issuers (-want +got):\n%s", diff)
			}
			if err != nil {
				return
			}
			ext, _ := runStep(t, stepOIDCExtension, input{rt: rt, cfg: cfg})
			if got := len(ext.Extensions) == 1 && ext.Extensions[0].Type == ExtensionOIDC; got != tc.ext {
				t.Errorf("shoot-oidc-service enabled = %v, want %v", got, tc.ext)
			}
		})
	}
	t.Run("customer issuers, CA bundle and jwks are listed in order for the runtime", func(t *testing.T) {
		rt := testRuntime(AWS)
		rt.LegacyOIDC = &def
		rt.OIDC, rt.OIDCGiven = []OIDC{customer, {IssuerURL: "https://j.example.com", ClientID: "j", JWKS: jwks}}, true
		got := CustomerIssuers(rt, testConfig())
		want := []CustomerIssuer{{def, "spec.shoot.kubernetes.kubeAPIServer.oidcConfig"},
			{customer, "spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig[0]"},
			{OIDC{IssuerURL: "https://j.example.com", ClientID: "j", JWKS: jwks}, "spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig[1]"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("without operator issuers the shoot has no structured authentication", func(t *testing.T) {
		rt := testRuntime(AWS)
		rt.OIDC, rt.OIDCGiven = []OIDC{customer}, true
		s, err := runStep(t, stepOIDC, input{rt: rt, cfg: testConfig()})
		if err != nil || s.Authentication != nil {
			t.Errorf("authentication %+v, error %v; want none", s.Authentication, err)
		}
	})
	t.Run("the operator's CA bundle is carried to the authenticator", func(t *testing.T) {
		cfg := testConfig()
		op := operator
		op.CABundle = ca
		cfg.OperatorOIDC = []OIDC{op}
		s, err := runStep(t, stepOIDC, input{rt: testRuntime(AWS), cfg: cfg})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Authentication.JWT[0].CertificateAuthority; got != ca {
			t.Errorf("certificate authority %q, want the caBundle", got)
		}
	})
}

func TestAuthenticationConfigMapNameIsAdopted(t *testing.T) {
	rt := testRuntime(AWS)
	cfg := testConfig()
	cfg.OperatorOIDC = []OIDC{{IssuerURL: "https://c.example.com", ClientID: "c"}}
	for _, tc := range []struct{ reason, current, want string }{
		{"new cluster: ours", "", "structured-auth-c-91f0e7a"},
		{"the previous system's name is kept", "structured-auth-config-c-91f0e7a", "structured-auth-config-c-91f0e7a"},
		{"ours is kept", "structured-auth-c-91f0e7a", "structured-auth-c-91f0e7a"},
		{"a foreign name is replaced by ours", "someone-elses", "structured-auth-c-91f0e7a"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			in := input{rt: rt, cfg: cfg}
			if tc.current != "" {
				in.current = &Current{AuthenticationConfigMap: tc.current}
			}
			s, err := runStep(t, stepOIDC, in)
			if err != nil {
				t.Fatal(err)
			}
			if s.Authentication.ConfigMapName != tc.want {
				t.Errorf("ConfigMap %q, want %q", s.Authentication.ConfigMapName, tc.want)
			}
		})
	}
}

func TestOIDCExtensionStaysOnceEnabled(t *testing.T) {
	rt := testRuntime(AWS)
	rt.OIDCGiven = true // the customer removed the last issuer
	s, err := runStep(t, stepOIDCExtension, input{rt: rt, cfg: testConfig(), current: &Current{ExtensionTypes: []string{ExtensionOIDC}}})
	if err != nil || len(s.Extensions) != 1 {
		t.Errorf("an enabled shoot-oidc-service must stay (left out, it would be removed): %v %v", s.Extensions, err)
	}
}

func TestOIDCExtensionModes(t *testing.T) {
	rt := testRuntime(AWS)
	rt.OIDCGiven = true // no customer issuer
	for _, tc := range []struct {
		mode string
		want bool
		err  Reason
	}{{"", false, ""}, {OIDCExtensionCustomerIssuers, false, ""}, {OIDCExtensionAlways, true, ""}, {OIDCExtensionNever, false, ""}, {"sometimes", false, ReasonInvalidConfig}} {
		cfg := testConfig()
		cfg.OIDCExtension = tc.mode
		s, err := runStep(t, stepOIDCExtension, input{rt: rt, cfg: cfg})
		if reasonOf(err) != tc.err || (len(s.Extensions) == 1) != tc.want {
			t.Errorf("mode %q: extensions %v, err %v; want enabled=%v err=%q", tc.mode, s.Extensions, err, tc.want, tc.err)
		}
	}
	t.Run("never with customer issuers is refused: they could not be served", func(t *testing.T) {
		rt := testRuntime(AWS)
		rt.OIDC, rt.OIDCGiven = []OIDC{{IssuerURL: "https://c.example.com", ClientID: "c"}}, true
		cfg := testConfig()
		cfg.OIDCExtension = OIDCExtensionNever
		_, err := runStep(t, stepOIDCExtension, input{rt: rt, cfg: cfg})
		ve := AsValidationError(err)
		if ve == nil || ve.Reason != ReasonOIDCExtensionDisabled || ve.Field != "spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig[0]" {
			t.Errorf("got %v, want %s at additionalOidcConfig[0]", err, ReasonOIDCExtensionDisabled)
		}
	})
}

func TestNodeStability(t *testing.T) {
	cfg := testConfig()
	cfg.Workers = WorkerDefaults{MachineDrainTimeout: "15m", MaxEvictRetries: ptr[int32](30)}
	cases := []struct {
		reason string
		pods   string
		w      Worker
		want   Worker
	}{
		{"gvisor gets net-raw, other runtimes nothing", "10.96.0.0/13",
			Worker{ContainerRuntimes: []ContainerRuntime{{Type: "gvisor"}, {Type: "kata"}}},
			Worker{ContainerRuntimes: []ContainerRuntime{{Type: "gvisor", ConfigFlags: map[string]string{"net-raw": "true"}}, {Type: "kata"}},
				MachineDrainTimeout: "15m", MaxEvictRetries: ptr[int32](30)}},
		{"the runtime's net-raw wins", "10.96.0.0/13",
			Worker{ContainerRuntimes: []ContainerRuntime{{Type: "gvisor", ConfigFlags: map[string]string{"net-raw": "false", "debug": "true"}}}},
			Worker{ContainerRuntimes: []ContainerRuntime{{Type: "gvisor", ConfigFlags: map[string]string{"net-raw": "false", "debug": "true"}}},
				MachineDrainTimeout: "15m", MaxEvictRetries: ptr[int32](30)}},
		{"maxPods above a /24 per node is clamped to 254", "10.96.0.0/13", Worker{MaxPods: ptr[int32](500)},
			Worker{MaxPods: ptr[int32](254), MachineDrainTimeout: "15m", MaxEvictRetries: ptr[int32](30)}},
		{"a pods CIDR smaller than /24 bounds maxPods", "10.96.0.0/26", Worker{MaxPods: ptr[int32](110)},
			Worker{MaxPods: ptr[int32](62), MachineDrainTimeout: "15m", MaxEvictRetries: ptr[int32](30)}},
		{"maxPods within bounds is kept; pool settings beat defaults", "10.96.0.0/13",
			Worker{MaxPods: ptr[int32](110), MachineDrainTimeout: "1h", MaxEvictRetries: ptr[int32](0)},
			Worker{MaxPods: ptr[int32](110), MachineDrainTimeout: "1h", MaxEvictRetries: ptr[int32](0)}},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			rt := testRuntime(AWS)
			rt.Networking.Pods = tc.pods
			w := tc.w
			if err := nodeStability(input{rt: rt, cfg: cfg}, &w, nil); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, w); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("the existing pool's settings beat the defaults", func(t *testing.T) {
		w := Worker{}
		cur := &CurrentWorker{MachineDrainTimeout: "2h", MaxEvictRetries: ptr[int32](7)}
		if err := nodeStability(input{rt: testRuntime(AWS), cfg: cfg}, &w, cur); err != nil {
			t.Fatal(err)
		}
		if w.MachineDrainTimeout != "2h" || *w.MaxEvictRetries != 7 {
			t.Errorf("got %+v", w)
		}
	})
	t.Run("without configured defaults nothing is set", func(t *testing.T) {
		w := Worker{}
		if err := nodeStability(input{rt: testRuntime(AWS), cfg: testConfig()}, &w, nil); err != nil {
			t.Fatal(err)
		}
		if w.MachineDrainTimeout != "" || w.MaxEvictRetries != nil {
			t.Errorf("got %+v", w)
		}
	})
}

func TestKubernetesSettings(t *testing.T) {
	cases := []struct {
		reason string
		cfg    func(*Config)
		want   KubeAPIServerSpec
		err    Reason
	}{
		{"token lifetime defaults to 30 days", func(*Config) {}, KubeAPIServerSpec{MaxTokenExpiration: 720 * time.Hour}, ""},
		{"too long is clamped to 90 days", func(c *Config) { c.KubeAPIServer.MaxTokenExpiration = 200 * 24 * time.Hour }, KubeAPIServerSpec{MaxTokenExpiration: 2160 * time.Hour}, ""},
		{"too short is raised to 30 days", func(c *Config) { c.KubeAPIServer.MaxTokenExpiration = time.Hour }, KubeAPIServerSpec{MaxTokenExpiration: 720 * time.Hour}, ""},
		{"within bounds is kept; gates and runtime config copied", func(c *Config) {
			c.KubeAPIServer = KubeAPIServerConfig{MaxTokenExpiration: 1000 * time.Hour,
				FeatureGates: map[string]bool{"StructuredAuthorizationConfiguration": true}, RuntimeConfig: map[string]bool{"resource.k8s.io/v1beta1": true}}
		}, KubeAPIServerSpec{MaxTokenExpiration: 1000 * time.Hour, FeatureGates: map[string]bool{"StructuredAuthorizationConfiguration": true},
			RuntimeConfig: map[string]bool{"resource.k8s.io/v1beta1": true}}, ""},
		{"a bad feature gate name", func(c *Config) { c.Kubelet.FeatureGates = map[string]bool{"not a gate": true} }, KubeAPIServerSpec{}, ReasonInvalidConfig},
		{"a bad runtime config key", func(c *Config) { c.KubeAPIServer.RuntimeConfig = map[string]bool{"Bad Key": true} }, KubeAPIServerSpec{}, ReasonInvalidConfig},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			cfg := testConfig()
			tc.cfg(&cfg)
			s, err := runStep(t, stepKubernetesSettings, input{rt: testRuntime(AWS), cfg: cfg})
			if reasonOf(err) != tc.err {
				t.Fatalf("want %q, got %v", tc.err, err)
			}
			if diff := cmp.Diff(tc.want, s.KubeAPIServer); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCleanupGracePeriods(t *testing.T) {
	cfg := testConfig()
	cfg.CleanupGracePeriods = CleanupGracePeriods{ExtendedAPIs: ptr[int64](120), Webhooks: ptr[int64](60)}
	s, err := runStep(t, stepCleanupGracePeriods, input{rt: testRuntime(AWS), cfg: cfg}, stepIdentity)
	if err != nil {
		t.Fatal(err)
	}
	if s.Annotations[AnnotationCleanupExtendedAPIs] != "120" || s.Annotations[AnnotationCleanupWebhooks] != "60" {
		t.Errorf("annotations %v", s.Annotations)
	}
	if _, set := s.Annotations[AnnotationCleanupKubernetesResources]; set {
		t.Error("an unconfigured grace period must be left to Gardener")
	}
	cfg.CleanupGracePeriods.Webhooks = ptr[int64](-1)
	if _, err := runStep(t, stepCleanupGracePeriods, input{rt: testRuntime(AWS), cfg: cfg}, stepIdentity); reasonOf(err) != ReasonInvalidConfig {
		t.Errorf("want InvalidConfig, got %v", err)
	}
}

func TestEUAccessAndTolerationsFromConfig(t *testing.T) {
	for _, tc := range []struct {
		reason   string
		regions  []string
		platform string
		want     bool
	}{
		{"default list includes cf-eu01", nil, "cf-eu01", true},
		{"default list includes cf-eu31", nil, "cf-eu31", true},
		{"not in the default list", nil, "cf-eu10", false},
		{"configured list replaces the default", []string{"cf-eu10"}, "cf-eu10", true},
		{"configured list without cf-eu11", []string{"cf-eu10"}, "cf-eu11", false},
		{"an empty configured list turns it off", []string{}, "cf-eu11", false},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			rt := testRuntime(AWS)
			rt.PlatformRegion = tc.platform
			cfg := testConfig()
			cfg.EUAccessPlatformRegions = tc.regions
			s, _ := runStep(t, stepEUAccess, input{rt: rt, cfg: cfg})
			if got := len(s.AccessRestrictions) == 1; got != tc.want {
				t.Errorf("eu-access-only = %v, want %v", got, tc.want)
			}
		})
	}
	rt := testRuntime(GCP)
	rt.Region = "me-central2"
	s, _ := runStep(t, stepTolerations, input{rt: rt, cfg: testConfig()})
	if diff := cmp.Diff([]Toleration{{Key: KSAToleration}}, s.Tolerations); diff != "" {
		t.Errorf("default KSA toleration (-want +got):\n%s", diff)
	}
	cfg := testConfig()
	cfg.RegionTolerations = map[string][]Toleration{"me-central2": {{Key: "a"}, {Key: "b", Value: "v"}}}
	s, _ = runStep(t, stepTolerations, input{rt: rt, cfg: cfg})
	if diff := cmp.Diff([]Toleration{{Key: "a"}, {Key: "b", Value: "v"}}, s.Tolerations); diff != "" {
		t.Errorf("configured tolerations (-want +got):\n%s", diff)
	}
}

func TestDNSModes(t *testing.T) {
	ext := func(s Spec) []string {
		var out []string
		for _, e := range s.Extensions {
			out = append(out, e.Type)
		}
		return out
	}
	cases := []struct {
		reason  string
		dns     DNSConfig
		domain  string
		exts    []string
		err     Reason
		errPath string
	}{
		{"no configuration: no DNS", DNSConfig{}, "", nil, "", ""},
		{"external: domain, provider and both services", DNSConfig{DomainPrefix: "kyma.example.com", SecretName: "s", ProviderType: "aws-route53"},
			"c-91f0e7a.kyma.example.com", []string{ExtensionDNS, ExtensionCert}, "", ""},
		{"internal: Gardener's domain, still both services", DNSConfig{Mode: DNSModeInternal}, "", []string{ExtensionDNS, ExtensionCert}, "", ""},
		{"off wins over a prefix", DNSConfig{Mode: DNSModeOff, DomainPrefix: "kyma.example.com"}, "", nil, "", ""},
		{"external without a provider", DNSConfig{Mode: DNSModeExternal, DomainPrefix: "kyma.example.com"}, "", nil, ReasonInvalidConfig, "shoot.dns"},
		{"unknown mode", DNSConfig{Mode: "magic"}, "", nil, ReasonInvalidConfig, "shoot.dns.mode"},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			cfg := testConfig()
			cfg.DNS = tc.dns
			s, err := runStep(t, stepDNS, input{rt: testRuntime(AWS), cfg: cfg})
			if reasonOf(err) != tc.err {
				t.Fatalf("want %q, got %v", tc.err, err)
			}
			if ve := AsValidationError(err); ve != nil && ve.Field != tc.errPath {
				t.Errorf("error field %q, want %q", ve.Field, tc.errPath)
			}
			domain := ""
			if s.DNS != nil {
				domain = s.DNS.Domain
			}
			if domain != tc.domain {
				t.Errorf("domain %q, want %q", domain, tc.domain)
			}
			if diff := cmp.Diff(tc.exts, ext(s)); diff != "" {
				t.Errorf("extensions (-want +got):\n%s", diff)
			}
			for _, e := range s.Extensions {
				if c, ok := e.Config.(DNSServiceConfig); ok && !c.ProviderReplication {
					t.Error("DNSProvider replication must be on")
				}
			}
		})
	}
}

func TestDualStack(t *testing.T) {
	cases := []struct {
		reason   string
		provider Provider
		enabled  []Provider
		current  *Current
		want     bool
		err      Reason
	}{
		{"aws, enabled by the landscape", AWS, []Provider{AWS}, nil, true, ""},
		{"gcp, enabled by the landscape", GCP, []Provider{AWS, GCP}, nil, true, ""},
		// Ignored, not failed, as the previous manager did: KEB's idea of where dual-stack is offered need not match ours.
		{"aws, not enabled by the landscape: ignored", AWS, []Provider{GCP}, nil, false, ""},
		{"azure cannot, whatever the landscape says: ignored", Azure, []Provider{Azure}, nil, false, ""},
		{"an existing single-stack cluster is not switched", AWS, []Provider{AWS}, &Current{HasInfrastructureConfig: true}, false, ""},
		{"an existing dual-stack cluster stays", AWS, []Provider{AWS}, &Current{HasInfrastructureConfig: true, DualStack: true}, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			rt := testRuntime(tc.provider)
			rt.Networking.DualStack = true
			cfg := testConfig()
			cfg.DualStack = tc.enabled
			s, err := runStep(t, stepDualStack, input{rt: rt, cfg: cfg, current: tc.current}, stepWorkers, stepInfrastructure, stepNetworking)
			if reasonOf(err) != tc.err {
				t.Fatalf("want %q, got %v", tc.err, err)
			}
			if got := len(s.Networking.IPFamilies) == 2; got != tc.want {
				t.Errorf("dual stack %v, want %v", got, tc.want)
			}
			if tc.want && tc.provider == AWS && (!s.Provider.Infrastructure.AWS.DualStack || !s.Provider.ControlPlane.AWSLoadBalancerController) {
				t.Error("aws dual stack needs the VPC's IPv6 and the load balancer controller")
			}
		})
	}
	t.Run("a dual-stack cluster stays dual-stack when the Runtime stops asking", func(t *testing.T) {
		s, err := runStep(t, stepDualStack, input{rt: testRuntime(AWS), cfg: testConfig(), current: &Current{HasInfrastructureConfig: true, DualStack: true}},
			stepWorkers, stepInfrastructure, stepNetworking)
		if err != nil || len(s.Networking.IPFamilies) != 2 {
			t.Errorf("IP families %v (err %v), want the cluster's IPv4 and IPv6 kept", s.Networking.IPFamilies, err)
		}
	})
}

func gdchConfig() Config {
	cfg := testConfig()
	cfg.GDCH = GDCHConfig{EnableEgress: true, ParentReference: GDCHParentReference{Name: "kyma-network", Namespace: "platform"}}
	return cfg
}

func TestGDCHInfrastructure(t *testing.T) {
	cases := []struct {
		reason string
		nodes  string
		zones  int
		want   []GDCHZone
		err    Reason
	}{
		{"one zone takes the whole CIDR", "10.72.0.0/19", 1, []GDCHZone{{"eu-west-1a", "10.72.0.0/19"}}, ""},
		{"two zones take halves", "10.72.0.0/19", 2, []GDCHZone{{"eu-west-1a", "10.72.0.0/20"}, {"eu-west-1b", "10.72.16.0/20"}}, ""},
		{"three zones take quarters", "10.72.0.0/24", 3,
			[]GDCHZone{{"eu-west-1a", "10.72.0.0/26"}, {"eu-west-1b", "10.72.0.64/26"}, {"eu-west-1c", "10.72.0.128/26"}}, ""},
		{"four zones are too many", "10.72.0.0/16", 4, nil, ReasonTooManyZones},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			rt := testRuntime(GDCH)
			rt.Networking.Nodes = tc.nodes
			rt.Workers[0].Zones = zonesFor(GDCH, tc.zones)
			rt.Workers[0].Maximum = 4
			s, err := runStep(t, stepInfrastructure, input{rt: rt, cfg: gdchConfig()}, stepWorkers)
			if reasonOf(err) != tc.err {
				t.Fatalf("want %q, got %v", tc.err, err)
			}
			if err != nil {
				return
			}
			want := &GDCHInfrastructure{EnableEgress: true, NodeCIDR: tc.nodes, Zones: tc.want,
				ParentReference: GDCHParentReference{Name: "kyma-network", Namespace: "platform"}}
			if diff := cmp.Diff(want, s.Provider.Infrastructure.GDCH); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("a zone added to a one-zone cluster finds no free subnet", func(t *testing.T) {
		rt := testRuntime(GDCH)
		rt.Networking.Nodes = "10.72.0.0/19"
		rt.Workers[0].Zones = zonesFor(GDCH, 2)
		cur := Current{HasInfrastructureConfig: true, InfrastructureZones: []CurrentZone{{Name: "eu-west-1a", CIDRs: []string{"10.72.0.0/19"}}},
			Workers: []CurrentWorker{{Name: "cpu-worker-0", ImageName: "gardenlinux", Zones: []string{"eu-west-1a"}}}}
		if _, err := GenerateUpdate(rt, gdchConfig(), cur); reasonOf(err) != ReasonNoFreeZoneCIDR {
			t.Errorf("want NoFreeZoneCIDR, got %v", err)
		}
	})
	t.Run("calico tunnels pod traffic with VXLAN", func(t *testing.T) {
		s, err := Generate(testRuntime(GDCH), gdchConfig())
		if err != nil {
			t.Fatal(err)
		}
		if !s.Networking.CalicoVXLAN {
			t.Error("gdch needs calico's VXLAN overlay")
		}
		if aws, _ := Generate(testRuntime(AWS), testConfig()); aws.Networking.CalicoVXLAN {
			t.Error("aws must keep calico's default")
		}
	})
}

func TestNvidiaOpenShell(t *testing.T) {
	rt := testRuntime(AWS)
	if s, _ := runStep(t, stepNvidiaOpenShell, input{rt: rt, cfg: testConfig()}); len(s.Extensions) != 0 {
		t.Errorf("off: %v", s.Extensions)
	}
	rt.NvidiaOpenShell = true
	s, _ := runStep(t, stepNvidiaOpenShell, input{rt: rt, cfg: testConfig()})
	if diff := cmp.Diff([]Extension{{Type: ExtensionNvidiaOpenShell}}, s.Extensions); diff != "" {
		t.Errorf("on (-want +got):\n%s", diff)
	}
}

func TestQuantities(t *testing.T) {
	for v, want := range map[string]bool{
		"10Gi": true, "500M": true, "1.5T": true, "2e9": true, "1000": true, "0.5Gi": true,
		"0": false, "0Gi": false, "10GB": false, "-1Gi": false, "": false, "Gi": false, "1e": false,
	} {
		if got := positiveQuantity(v); got != want {
			t.Errorf("positiveQuantity(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestCredentialsBindingMigration(t *testing.T) {
	spec := Spec{CredentialsBinding: "aws-kyma-1"}
	if b, ok := CredentialsBindingMigration(Current{SecretBindingName: "aws-old"}, spec); !ok || b != "aws-kyma-1" {
		t.Errorf("a shoot with a SecretBinding is migrated: got %q %v", b, ok)
	}
	if _, ok := CredentialsBindingMigration(Current{}, spec); ok {
		t.Error("a shoot without a SecretBinding needs nothing (the migration happens once)")
	}
}
