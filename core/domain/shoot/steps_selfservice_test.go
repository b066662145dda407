package shoot

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheckRegistryCacheNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		cache RegistryCache
		field string
	}{
		{RegistryCache{Upstream: "docker.io"}, ""},
		{RegistryCache{Upstream: "docker.io", RemoteURL: "https://registry-1.docker.io"}, ""},
		{RegistryCache{Upstream: "registry.example.com:443", VolumeSize: "1.5T", GarbageCollectionTTL: "0s"}, ""},
		{RegistryCache{Upstream: "https://docker.io"}, CacheFieldUpstream},
		{RegistryCache{Upstream: "docker.io:99999"}, CacheFieldUpstream},
		{RegistryCache{Upstream: "docker.io", RemoteURL: "registry-1.docker.io"}, CacheFieldRemoteURL},
		{RegistryCache{Upstream: "docker.io", VolumeSize: "0Gi"}, CacheFieldVolumeSize},
		{RegistryCache{Upstream: "docker.io", GarbageCollectionTTL: "-1h"}, CacheFieldGCTTL},
		{RegistryCache{Upstream: "docker.io", CredentialsSecret: "x"}, CacheFieldSecretRefName},
		{RegistryCache{Upstream: "docker.io", HTTPProxy: "proxy:3128"}, CacheFieldHTTPProxy},
		{RegistryCache{Upstream: "docker.io", HTTPSProxy: "socks5://proxy"}, CacheFieldHTTPSProxy},
	} {
		got := ""
		if p := CheckRegistryCache(tc.cache); p != nil {
			got = p.Field
			if p.Message == "" {
				t.Errorf("%+v: problem without message", tc.cache)
			}
		}
		if got != tc.field {
			t.Errorf("%+v: field %q, want %q", tc.cache, got, tc.field)
		}
	}
}

func TestStepAuditLogDedicatedTenant(t *testing.T) {
	cfg := testConfig()
	cfg.AuditLog = AuditLogConfig{Enabled: true, PolicyConfigMapName: "audit-policy", SecretName: "shared-secret", MissingTenantIsError: true,
		Tenants: map[Provider]map[string]AuditLogTenant{AWS: {"eu-west-1": {TenantID: "shared", ServiceURL: "https://audit.example.com"}}}}
	rt := testRuntime(AWS)
	rt.DedicatedAuditLog = &DedicatedAuditLog{Name: "kcp-system/t1", TenantID: "own", ServiceURL: "https://own.example.com"}
	if _, err := runStep(t, stepAuditLog, input{rt: rt, cfg: cfg}); reasonOf(err) != ReasonAuditLogTenantMissing {
		t.Errorf("a tenant without its own write Secret: %v, want %s (the shared Secret is another tenant's)", err, ReasonAuditLogTenantMissing)
	}
	rt.DedicatedAuditLog.SecretName = "own-secret"
	s, err := runStep(t, stepAuditLog, input{rt: rt, cfg: cfg})
	if err != nil {
		t.Fatal(err)
	}
	want := []Extension{{Type: ExtensionAuditLog, Config: AuditLogExtensionConfig{TenantID: "own", ServiceURL: "https://own.example.com", SecretReferenceName: AuditLogResourceName}}}
	if diff := cmp.Diff(want, s.Extensions); diff != "" {
		t.Errorf("extensions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]ResourceRef{{Name: AuditLogResourceName, APIVersion: "v1", Kind: "Secret", TargetName: "own-secret"}}, s.Resources); diff != "" {
		t.Errorf("resources (-want +got), want the tenant's own Secret:\n%s", diff)
	}
	// A dedicated tenant does not depend on the shared tenants being switched on, and a broken one is refused.
	cfg.AuditLog.Enabled = false
	if s, err := runStep(t, stepAuditLog, input{rt: rt, cfg: cfg}); err != nil || len(s.Extensions) != 1 {
		t.Errorf("dedicated tenant with shared audit logs off: %v, %+v", err, s.Extensions)
	}
	rt.DedicatedAuditLog.TenantID = ""
	if _, err := runStep(t, stepAuditLog, input{rt: rt, cfg: cfg}); reasonOf(err) != ReasonAuditLogTenantMissing {
		t.Errorf("tenant without ID: %v, want %s", err, ReasonAuditLogTenantMissing)
	}
}

// TestStepAuditLogDedicatedKeepsThePreviousResourceName: a cluster the previous infrastructure manager switched to
// its dedicated tenant references the write credentials as dedicated-auditlog-credentials; adopting it keeps that
// name as long as it points at the same tenant and Secret, and a changed tenant gets the operator's own name.
func TestStepAuditLogDedicatedKeepsThePreviousResourceName(t *testing.T) {
	cfg := testConfig()
	rt := testRuntime(AWS)
	rt.DedicatedAuditLog = &DedicatedAuditLog{Name: "kcp-system/t1", TenantID: "sub-1", ServiceURL: "https://own.example.com", SecretName: "t1-write"}
	prev := &CurrentAuditLog{TenantID: "sub-1", ServiceURL: "https://own.example.com", SecretName: "t1-write", ResourceName: PreviousDedicatedAuditLogResourceName}
	for _, tc := range []struct {
		reason string
		cur    *Current
		want   string
	}{
		{"a new cluster", nil, AuditLogResourceName},
		{"the previous manager's dedicated reference to this tenant", &Current{AuditLog: prev}, PreviousDedicatedAuditLogResourceName},
		{"the previous manager's reference to another Secret", &Current{AuditLog: &CurrentAuditLog{TenantID: "sub-1", ServiceURL: "https://own.example.com",
			SecretName: "shared", ResourceName: PreviousDedicatedAuditLogResourceName}}, AuditLogResourceName},
		{"the shared tenant's reference", &Current{AuditLog: &CurrentAuditLog{TenantID: "shared", ServiceURL: "https://a.example.com",
			SecretName: "shared", ResourceName: AuditLogResourceName}}, AuditLogResourceName},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			s, err := runStep(t, stepAuditLog, input{rt: rt, cfg: cfg, current: tc.cur})
			if err != nil {
				t.Fatal(err)
			}
			want := []ResourceRef{{Name: tc.want, APIVersion: "v1", Kind: "Secret", TargetName: "t1-write"}}
			if diff := cmp.Diff(want, s.Resources); diff != "" {
				t.Errorf("resources (-want +got):\n%s", diff)
			}
			if c, ok := s.Extensions[0].Config.(AuditLogExtensionConfig); !ok || c.SecretReferenceName != tc.want || c.TenantID != "sub-1" {
				t.Errorf("extension %+v, want secretReferenceName %s", s.Extensions[0], tc.want)
			}
		})
	}
}
