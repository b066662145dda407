package shoot

import (
	"reflect"
	"strings"
	"testing"
)

// TestMaxPodsFitThePodsCIDRAcrossPools: the previous infrastructure manager caps each pool at a /24's 254 pods and
// then lowers pools, from the last backwards and never below 1, until the sum fits the pods CIDR's usable
// addresses; a sum it cannot fit is an error. Adopted shoots carry values capped that way.
func TestMaxPodsFitThePodsCIDRAcrossPools(t *testing.T) {
	pool := func(name string, maxPods *int32) Worker {
		w := testRuntime(AWS).Workers[0]
		w.Name, w.MaxPods = name, maxPods
		return w
	}
	for _, tc := range []struct {
		name  string
		pods  string
		pools []*int32
		want  []*int32
		field string // the refused field, or "" for accepted
	}{
		{"a sum that fits is kept", "10.96.0.0/22", []*int32{ptr[int32](200), ptr[int32](200)}, []*int32{ptr[int32](200), ptr[int32](200)}, ""},
		{"the last pool is lowered first", "10.96.0.0/24", []*int32{ptr[int32](200), ptr[int32](100)}, []*int32{ptr[int32](200), ptr[int32](54)}, ""},
		{"then the one before it", "10.96.0.0/24", []*int32{ptr[int32](200), ptr[int32](100), ptr[int32](100)},
			[]*int32{ptr[int32](200), ptr[int32](53), ptr[int32](1)}, ""},
		{"pools without maxPods are not counted or changed", "10.96.0.0/24", []*int32{ptr[int32](200), nil, ptr[int32](100)},
			[]*int32{ptr[int32](200), nil, ptr[int32](54)}, ""},
		{"the per-node cap applies first", "10.96.0.0/13", []*int32{ptr[int32](500), ptr[int32](110)}, []*int32{ptr[int32](254), ptr[int32](110)}, ""},
		{"a /31 has two usable addresses", "10.96.0.0/31", []*int32{ptr[int32](1), ptr[int32](1)}, []*int32{ptr[int32](1), ptr[int32](1)}, ""},
		{"more pools than addresses is refused", "10.96.0.0/31", []*int32{ptr[int32](1), ptr[int32](1), ptr[int32](1)}, nil, "spec.shoot.networking.pods"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := testRuntime(AWS)
			rt.Networking.Pods = tc.pods
			rt.Workers = nil
			for i, mp := range tc.pools {
				rt.Workers = append(rt.Workers, pool("pool-"+string(rune('a'+i)), mp))
			}
			spec, err := Generate(rt, testConfig())
			if tc.field != "" {
				if ve := AsValidationError(err); ve == nil || ve.Field != tc.field || ve.Reason != ReasonInvalidWorker {
					t.Fatalf("error %v, want %s refused for %s", err, tc.field, ReasonInvalidWorker)
				}
				return
			}
			if err != nil {
				t.Fatalf("generate: %v", err)
			}
			for i, w := range spec.Workers {
				got, want := w.MaxPods, tc.want[i]
				if (got == nil) != (want == nil) || (got != nil && *got != *want) {
					t.Errorf("pool %s maxPods %v, want %v", w.Name, deref(got), deref(want))
				}
			}
		})
	}
}

// TestPodsCIDRTheNodesCannotShareIsRefused: an IPv6 pods CIDR or one of /0 or /1 is refused with the field named,
// as the previous infrastructure manager refuses it, with or without maxPods.
func TestPodsCIDRTheNodesCannotShareIsRefused(t *testing.T) {
	for _, tc := range []struct {
		pods    string
		refused bool
	}{
		{"fd00:10:96::/48", true},
		{"0.0.0.0/0", true},
		{"0.0.0.0/1", true},
		{"64.0.0.0/2", false},
		{"100.64.0.0/12", false},
	} {
		t.Run(tc.pods, func(t *testing.T) {
			rt := testRuntime(GCP)
			rt.Networking.Pods = tc.pods
			rt.Networking.Nodes, rt.Networking.Services = "10.250.0.0/16", "10.104.0.0/13"
			if tc.pods == "64.0.0.0/2" {
				rt.Networking.Nodes, rt.Networking.Services = "10.250.0.0/16", "172.16.0.0/13"
			}
			_, err := Generate(rt, testConfig())
			ve := AsValidationError(err)
			switch {
			case tc.refused && (ve == nil || ve.Field != "spec.shoot.networking.pods" || ve.Reason != ReasonInvalidCIDR):
				t.Errorf("error %v, want spec.shoot.networking.pods refused (%s)", err, ReasonInvalidCIDR)
			case !tc.refused && err != nil:
				t.Errorf("refused: %v", err)
			}
		})
	}
}

func deref(p *int32) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestExperimentalAuditPolicy: the Runtime's experimental-audit-policy annotation switches the cluster's audit
// policy ConfigMap to the experimental one, for the landscape's tenant and a dedicated one alike.
func TestExperimentalAuditPolicy(t *testing.T) {
	cfg := testConfig()
	cfg.AuditLog = AuditLogConfig{
		Enabled: true, PolicyConfigMapName: "audit-policy", SecretName: "auditlog-secret",
		Tenants: map[Provider]map[string]AuditLogTenant{AWS: {"eu-west-1": {TenantID: "t1", ServiceURL: "https://audit.example.com"}}},
	}
	for _, tc := range []struct {
		name         string
		experimental bool
		dedicated    bool
		want         string
	}{
		{"configured policy", false, false, "audit-policy"},
		{"experimental policy", true, false, ExperimentalAuditPolicyConfigMap},
		{"experimental policy with a dedicated tenant", true, true, ExperimentalAuditPolicyConfigMap},
		{"configured policy with a dedicated tenant", false, true, "audit-policy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := testRuntime(AWS)
			rt.ExperimentalAuditPolicy = tc.experimental
			if tc.dedicated {
				rt.DedicatedAuditLog = &DedicatedAuditLog{Name: "tenant-a", TenantID: "t2", ServiceURL: "https://audit-2.example.com", SecretName: "a-write"}
			}
			s, err := runStep(t, stepAuditLog, input{rt: rt, cfg: cfg})
			if err != nil {
				t.Fatal(err)
			}
			if s.AuditPolicyConfigMap != tc.want {
				t.Errorf("audit policy ConfigMap %q, want %q", s.AuditPolicyConfigMap, tc.want)
			}
		})
	}
}

// TestUpdateKeepsTheAuditLogWithoutATenant: an existing cluster's audit log stays when the landscape lists no
// tenant for its region and a missing tenant is no error, as with the previous infrastructure manager; when a
// missing tenant is an error, that error stands.
func TestUpdateKeepsTheAuditLogWithoutATenant(t *testing.T) {
	cfg := testConfig()
	cfg.AuditLog = AuditLogConfig{Enabled: true, PolicyConfigMapName: "audit-policy", SecretName: "auditlog-secret",
		Tenants: map[Provider]map[string]AuditLogTenant{}}
	cur := &Current{AuditLog: &CurrentAuditLog{TenantID: "t-old", ServiceURL: "https://auditlog.example.com", SecretName: "old-secret",
		PolicyConfigMap: "old-policy"}}
	s, err := runStep(t, stepAuditLog, input{rt: testRuntime(AWS), cfg: cfg, current: cur})
	if err != nil {
		t.Fatal(err)
	}
	wantExt := []Extension{{Type: ExtensionAuditLog, Config: AuditLogExtensionConfig{TenantID: "t-old", ServiceURL: "https://auditlog.example.com",
		SecretReferenceName: AuditLogResourceName}}}
	if len(s.Extensions) != 1 || s.Extensions[0].Type != wantExt[0].Type || s.Extensions[0].Config != wantExt[0].Config {
		t.Errorf("extensions %+v, want the cluster's audit log kept: %+v", s.Extensions, wantExt)
	}
	if s.AuditPolicyConfigMap != "old-policy" || len(s.Resources) != 1 || s.Resources[0].TargetName != "old-secret" {
		t.Errorf("policy %q, resources %+v: want the cluster's policy and credentials kept", s.AuditPolicyConfigMap, s.Resources)
	}
	// Kept, and said so (the Runtime's condition AuditLogKept), naming the region and the configuration key to fix.
	for _, want := range []string{"aws", "eu-west-1", "t-old", "shoot.auditLog.tenants"} {
		if !strings.Contains(s.AuditLogKept, want) {
			t.Errorf("AuditLogKept %q does not name %q", s.AuditLogKept, want)
		}
	}
	if s.Hash() != (Spec{Extensions: s.Extensions, Resources: s.Resources, AuditPolicyConfigMap: s.AuditPolicyConfigMap}).Hash() {
		t.Error("AuditLogKept changes the spec's hash: every shoot would look changed")
	}
	if s, err := runStep(t, stepAuditLog, input{rt: testRuntime(AWS), cfg: cfg}); err != nil || len(s.Extensions) != 0 || s.AuditLogKept != "" {
		t.Errorf("a new cluster without a tenant: %+v, %v, kept %q; want no audit log and nothing kept", s.Extensions, err, s.AuditLogKept)
	}
	cfg.AuditLog.MissingTenantIsError = true
	if _, err := runStep(t, stepAuditLog, input{rt: testRuntime(AWS), cfg: cfg, current: cur}); reasonOf(err) != ReasonAuditLogTenantMissing {
		t.Errorf("missing tenant when it is an error: %v, want %s", err, ReasonAuditLogTenantMissing)
	}
}

// TestDNSAsThePreviousManagerRendersIt: an external domain names its primary provider in shoot-dns-service (its
// domain, type and the credentials resource "shoot-dns-service-<Secret>", which the spec references), as the
// previous manager rendered it and as the extension derives it from spec.dns; a cluster whose DNS extension names
// no provider keeps it as it is (created before custom domains); internal DNS names no provider.
func TestDNSAsThePreviousManagerRendersIt(t *testing.T) {
	external := testConfig()
	external.DNS = DNSConfig{DomainPrefix: "kyma.example.com", SecretName: "dns-secret", ProviderType: "aws-route53"}
	internal := testConfig()
	internal.DNS = DNSConfig{Mode: DNSModeInternal}
	provider := DNSServiceProvider{Domains: []string{"c-91f0e7a.kyma.example.com"}, Type: "aws-route53", Credentials: "shoot-dns-service-dns-secret"}
	for _, tc := range []struct {
		reason    string
		cfg       Config
		current   *Current
		want      Extension
		resources []ResourceRef
	}{
		{reason: "external: the primary provider", cfg: external,
			want: Extension{Type: ExtensionDNS, Config: DNSServiceConfig{SyncProvidersFromShootSpecDNS: true, ProviderReplication: true,
				Providers: []DNSServiceProvider{provider}}},
			resources: []ResourceRef{{Name: "shoot-dns-service-dns-secret", APIVersion: "v1", Kind: "Secret", TargetName: "dns-secret"}}},
		{reason: "external on update: the same", cfg: external, current: &Current{},
			want: Extension{Type: ExtensionDNS, Config: DNSServiceConfig{SyncProvidersFromShootSpecDNS: true, ProviderReplication: true,
				Providers: []DNSServiceProvider{provider}}},
			resources: []ResourceRef{{Name: "shoot-dns-service-dns-secret", APIVersion: "v1", Kind: "Secret", TargetName: "dns-secret"}}},
		{reason: "a cluster whose DNS extension names no provider keeps it", cfg: external, current: &Current{DNSExtensionWithoutProviders: true},
			want:      Extension{Type: ExtensionDNS, KeepCurrent: true},
			resources: []ResourceRef{{Name: "shoot-dns-service-dns-secret", APIVersion: "v1", Kind: "Secret", TargetName: "dns-secret"}}},
		{reason: "internal: no provider", cfg: internal,
			want: Extension{Type: ExtensionDNS, Config: DNSServiceConfig{SyncProvidersFromShootSpecDNS: true, ProviderReplication: true}}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			s, err := runStep(t, stepDNS, input{rt: testRuntime(AWS), cfg: tc.cfg, current: tc.current})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Extensions) != 2 || !reflect.DeepEqual(s.Extensions[0], tc.want) {
				t.Errorf("extensions %+v, want first %+v", s.Extensions, tc.want)
			}
			if !reflect.DeepEqual(s.Resources, tc.resources) {
				t.Errorf("resources %+v, want %+v", s.Resources, tc.resources)
			}
		})
	}
}

// TestNetworkingFilterSwitchedOffByTheLandscape: with the landscape's filter off (the previous manager's
// --network-restriction-enabled=false) a new shoot gets no shoot-networking-filter and an existing one keeps its
// own, whatever the Runtime asks.
func TestNetworkingFilterSwitchedOffByTheLandscape(t *testing.T) {
	cfg := testConfig()
	cfg.Features.DisableNetworkingFilter = true
	rt := testRuntime(AWS)
	rt.EgressFilter, rt.IngressFilter = true, true
	if s, _ := runStep(t, stepNetworkingFilter, input{rt: rt, cfg: cfg}); len(s.Extensions) != 0 {
		t.Errorf("create: %+v, want no networking filter", s.Extensions)
	}
	s, _ := runStep(t, stepNetworkingFilter, input{rt: rt, cfg: cfg, current: &Current{}})
	if want := []Extension{{Type: ExtensionNetworkingFilter, KeepCurrent: true}}; !reflect.DeepEqual(s.Extensions, want) {
		t.Errorf("update: %+v, want %+v", s.Extensions, want)
	}
	spec, err := Generate(rt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range spec.Extensions {
		if e.Type == ExtensionNetworkingFilter {
			t.Errorf("generated shoot has %+v", e)
		}
	}
}
