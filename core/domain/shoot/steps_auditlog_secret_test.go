package shoot

import "testing"

// TestStepAuditLogTenantSecret: a shared tenant's cluster references the tenant's own credentials Secret, as the
// previous infrastructure manager's tenant file gives each provider/region (issue 39 item 2); the landscape's
// shoot.auditLog.secretName serves only the tenants that name none; a tenant without any is a configuration error,
// never another region's Secret.
func TestStepAuditLogTenantSecret(t *testing.T) {
	const url = "https://audit.example.com"
	tenants := func(west, central AuditLogTenant) map[Provider]map[string]AuditLogTenant {
		return map[Provider]map[string]AuditLogTenant{AWS: {"eu-west-1": west, "eu-central-1": central}}
	}
	cases := []struct {
		name       string
		defaultSec string
		west, cent AuditLogTenant
		region     string
		wantSecret string
		wantReason Reason
	}{
		{name: "each region its own Secret (west)", west: AuditLogTenant{TenantID: "tw", ServiceURL: url, SecretName: "al-west"},
			cent: AuditLogTenant{TenantID: "tc", ServiceURL: url, SecretName: "al-central"}, region: "eu-west-1", wantSecret: "al-west"},
		{name: "each region its own Secret (central)", west: AuditLogTenant{TenantID: "tw", ServiceURL: url, SecretName: "al-west"},
			cent: AuditLogTenant{TenantID: "tc", ServiceURL: url, SecretName: "al-central"}, region: "eu-central-1", wantSecret: "al-central"},
		{name: "own Secret wins over the default", defaultSec: "al-default",
			west: AuditLogTenant{TenantID: "tw", ServiceURL: url, SecretName: "al-west"}, region: "eu-west-1", wantSecret: "al-west"},
		{name: "tenant without one uses the default", defaultSec: "al-default",
			west: AuditLogTenant{TenantID: "tw", ServiceURL: url}, cent: AuditLogTenant{TenantID: "tc", ServiceURL: url, SecretName: "al-central"},
			region: "eu-west-1", wantSecret: "al-default"},
		{name: "neither: configuration error, not another region's Secret",
			west: AuditLogTenant{TenantID: "tw", ServiceURL: url}, cent: AuditLogTenant{TenantID: "tc", ServiceURL: url, SecretName: "al-central"},
			region: "eu-west-1", wantReason: ReasonInvalidConfig},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.AuditLog = AuditLogConfig{Enabled: true, PolicyConfigMapName: "audit-policy", SecretName: tc.defaultSec,
				MissingTenantIsError: true, Tenants: tenants(tc.west, tc.cent)}
			rt := testRuntime(AWS)
			rt.Region = tc.region
			s, err := runStep(t, stepAuditLog, input{rt: rt, cfg: cfg})
			if tc.wantReason != "" {
				if reasonOf(err) != tc.wantReason {
					t.Fatalf("got %v, want reason %s", err, tc.wantReason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Resources) != 1 || s.Resources[0].Name != AuditLogResourceName || s.Resources[0].TargetName != tc.wantSecret {
				t.Fatalf("resources %+v, want %s -> %s", s.Resources, AuditLogResourceName, tc.wantSecret)
			}
		})
	}
}
