package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// previousFiles maps the paths the previous manager's Deployment mounted its files at to the test data.
var previousFiles = map[string]string{
	"/converter-config/converter_config.json": "testdata/previous/converter_config.json",
	"/gardener/tenant/config":                 "testdata/previous/audit-tenants.json",
	"/maintenance-window-config/config":       "testdata/previous/maintenance-windows.json",
}

func readPrevious(files map[string][]byte) func(string) ([]byte, error) {
	return func(path string) ([]byte, error) {
		if b, ok := files[path]; ok {
			return b, nil
		}
		if local, ok := previousFiles[path]; ok {
			return os.ReadFile(local)
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: os.ErrNotExist}
	}
}

// production is the converter configuration of the test data as a generic document, to be changed per case.
func production(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "previous", "converter_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// at returns the map at the keys of doc (which must exist).
func at(doc map[string]any, keys ...string) map[string]any {
	m := doc
	for _, k := range keys {
		m = m[k].(map[string]any)
	}
	return m
}

const converterPath = "/converter-config/converter_config.json"

// TestConverterConfigProduction: the previous manager's production converter configuration (test data) becomes the
// whole operator configuration, key for key.
func TestConverterConfigProduction(t *testing.T) {
	o, err := LoadConverterConfig(converterPath, readPrevious(nil))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseOverlaid(nil, o)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Shoot
	prefix := "-"
	opPrefix := "kcp-op:"
	checks := []struct {
		key       string
		got, want any
	}{
		{"gardener.project", cfg.Gardener.Project, "kyma-prod"},
		{"shoot.defaultKubernetesVersion", s.DefaultKubernetesVersion, "1.33"},
		{"shoot.defaultMachineImage", s.DefaultMachineImage, MachineImage{Name: "gardenlinux", Version: "1592.9.0"}},
		{"shoot.maintenance.autoUpdateKubernetesVersion", *s.Maintenance.AutoUpdateKubernetesVersion, true},
		{"shoot.maintenance.autoUpdateMachineImageVersion", *s.Maintenance.AutoUpdateMachineImageVersion, false},
		{"shoot.maintenance.windows", s.Maintenance.Windows, map[string]TimeWindow{
			"eu-central-1": {"010000+0000", "050000+0000"}, "us-east-1": {"060000+0000", "100000+0000"}, "westeurope": {"010000+0000", "050000+0000"}}},
		{"shoot.operatorOIDC", s.OperatorOIDC, []OIDCConfig{{IssuerURL: "https://kcp-operators.accounts.example.com", ClientID: "kcp-operators",
			UsernameClaim: "sub", UsernamePrefix: &opPrefix, GroupsClaim: "groups", SigningAlgs: []string{"RS256"}}}},
		{"shoot.authenticationStyle (the previous manager's rules, a default)", s.AuthenticationStyle, AuthenticationStylePrevious},
		{"shoot.oidc", *s.OIDC, OIDCConfig{IssuerURL: "https://kyma.accounts.example.com", ClientID: "6c1f0e3a-8d2b-4e7f-a951-3b0d7c2e9f14",
			UsernameClaim: "sub", UsernamePrefix: &prefix, GroupsClaim: "groups", SigningAlgs: []string{"RS256"}}},
		{"shoot.acl.configMap", *s.ACL.ConfigMap, ObjectRef{Namespace: "kcp-system", Name: "kcp-egress-ips"}},
		{"shoot.acl.enabled (a flag, not the file)", s.ACL.Enabled, false},
		{"shoot.kubeAPIServer.maxTokenExpiration", s.KubeAPIServer.MaxTokenExpiration.Duration, 720 * time.Hour},
		{"shoot.kubeAPIServer.runtimeConfig", s.KubeAPIServer.RuntimeConfig, map[string]bool{"admissionregistration.k8s.io/v1beta1": true}},
		{"shoot.kubeAPIServer.featureGates", s.KubeAPIServer.FeatureGates, map[string]bool{"MutatingAdmissionPolicy": true}},
		{"shoot.kubelet.featureGates", s.Kubelet.FeatureGates, map[string]bool{"UserNamespacesSupport": true}},
		{"shoot.dns", s.DNS, DNSConfig{DomainPrefix: "kyma-prod.example.com", SecretName: "route53-kyma-prod", ProviderType: "aws-route53"}},
		{"shoot.features.awsIMDSv2", s.Features.AWSIMDSv2, true},
		{"shoot.cloudProfiles.gdch", s.CloudProfiles["gdch"], "gdch-prod"},
		{"shoot.gdch.parentReference", s.GDCH.ParentReference, GDCHParentReference{Name: "kyma-subnet", Namespace: "platform", Type: "SingleSubnet"}},
		{"shoot.gdch.enableEgress (the previous manager gave every GDCH shoot egress)", s.GDCH.EnableEgress, true},
		{"shoot.workers.machineDrainTimeout", s.Workers.MachineDrainTimeout.Duration, 30 * time.Minute},
		{"shoot.workers.maxEvictRetries", *s.Workers.MaxEvictRetries, int32(3)},
		{"shoot.auditLog.enabled", s.AuditLog.Enabled, true},
		{"shoot.auditLog.policyConfigMapName", s.AuditLog.PolicyConfigMapName, "audit-policy"},
		{"shoot.auditLog.secretName (each tenant names its own)", s.AuditLog.SecretName, ""},
		{"shoot.auditLog.tenants.aws.us-east-1", s.AuditLog.Tenants["aws"]["us-east-1"],
			AuditLogTenant{TenantID: "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d", ServiceURL: "https://auditlog.us10.example.com:8081",
				SecretName: "auditlog-credentials-us10"}},
		{"shoot.auditLog.tenants.aws.eu-central-1.secretName", s.AuditLog.Tenants["aws"]["eu-central-1"].SecretName, "auditlog-credentials-eu10"},
		{"number of tenants", len(s.AuditLog.Tenants["aws"]) + len(s.AuditLog.Tenants["azure"]), 3},
		{"shoot.tolerations", s.Tolerations, map[string][]Toleration{"me-central2": {{Key: "ksa-assured-workload"}},
			"eu-central-1": {{Key: "dedicated-seed", Value: "eu10"}}}},
		{"shoot.dualStack.providers", s.DualStack.Providers, []string{"aws", "gcp"}},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.key, diff)
		}
	}
}

// TestConverterConfigMapping: every key the mapping cannot represent is an error naming it; the previous manager's
// meaning of an absent key is kept; keys match without regard to case as its decoder matched them.
func TestConverterConfigMapping(t *testing.T) {
	for _, tc := range []struct {
		reason  string
		change  func(doc map[string]any)
		files   map[string][]byte
		wantErr string // empty: maps
		check   func(t *testing.T, c *OperatorConfig)
	}{
		{reason: "an unknown key is named with its path", wantErr: "converter.dns.zone: unknown key",
			change: func(d map[string]any) { at(d, "converter", "dns")["zone"] = "x" }},
		{reason: "an unknown section is named", wantErr: "registryCache: unknown key",
			change: func(d map[string]any) { d["registryCache"] = map[string]any{} }},
		{reason: "an unknown key inside a map value", wantErr: "converter.tolerations.me-central2[0].effect: unknown key",
			change: func(d map[string]any) {
				at(d, "converter")["tolerations"] = map[string]any{"me-central2": []any{map[string]any{"key": "k", "effect": "NoSchedule"}}}
			}},
		{reason: "keys in another case, as the previous decoder accepted them", change: func(d map[string]any) {
			c := at(d, "cluster")
			c["DefaultSharedIASTenant"] = c["defaultSharedIASTenant"]
			delete(c, "defaultSharedIASTenant")
			at(d, "converter", "machineImage")["DefaultVersion"] = "1600.0.0"
			delete(at(d, "converter", "machineImage"), "defaultVersion")
		}, check: func(t *testing.T, c *OperatorConfig) {
			if c.Shoot.OIDC == nil || c.Shoot.DefaultMachineImage.Version != "1600.0.0" {
				t.Errorf("keys in another case lost: oidc %v, image %+v", c.Shoot.OIDC, c.Shoot.DefaultMachineImage)
			}
		}},
		{reason: "a value of the wrong type names the key", wantErr: "converter.kubernetes.defaultVersion: must be a string",
			change: func(d map[string]any) { at(d, "converter", "kubernetes")["defaultVersion"] = 1.33 }},
		{reason: "a drain timeout that is no duration", wantErr: "converter.provider.worker.defaultMachineDrainTimeout: \"15 minutes\"",
			change: func(d map[string]any) {
				at(d, "converter", "provider", "worker")["defaultMachineDrainTimeout"] = "15 minutes"
			}},
		{reason: "evict retries that are no number", wantErr: "converter.provider.worker.defaultMaxEvictRetries: \"two\"",
			change: func(d map[string]any) { at(d, "converter", "provider", "worker")["defaultMaxEvictRetries"] = "two" }},
		{reason: "a token expiration that is no duration", wantErr: "converter.kubernetes.kubeApiServer.maxTokenExpiration",
			change: func(d map[string]any) {
				at(d, "converter", "kubernetes", "kubeApiServer")["maxTokenExpiration"] = "30d"
			}},
		{reason: "a toleration with a value is mapped with its value",
			change: func(d map[string]any) {
				at(d, "converter")["tolerations"] = map[string]any{"me-central2": []any{map[string]any{"key": "k", "value": "v"}, map[string]any{"key": "j"}}}
			},
			check: func(t *testing.T, c *OperatorConfig) {
				if diff := cmp.Diff(map[string][]Toleration{"me-central2": {{Key: "k", Value: "v"}, {Key: "j"}}}, c.Shoot.Tolerations); diff != "" {
					t.Errorf("tolerations (-want +got):\n%s", diff)
				}
			}},
		{reason: "a toleration value Gardener refuses is named", wantErr: "shoot.tolerations.me-central2[0].value: \"not a label value!\"",
			change: func(d map[string]any) {
				at(d, "converter")["tolerations"] = map[string]any{"me-central2": []any{map[string]any{"key": "k", "value": "not a label value!"}}}
			}},
		{reason: "SecretBindings cannot be represented", wantErr: "converter.gardener.enableCredentialBinding",
			change: func(d map[string]any) { at(d, "converter", "gardener")["enableCredentialBinding"] = false }},
		{reason: "an absent enableCredentialBinding meant SecretBindings", wantErr: "converter.gardener.enableCredentialBinding",
			change: func(d map[string]any) { delete(at(d, "converter", "gardener"), "enableCredentialBinding") }},
		{reason: "shared tenants with different Secrets keep each its own",
			files: map[string][]byte{"/gardener/tenant/config": []byte(`{"aws": {
				"eu-central-1": {"tenantID": "a", "serviceURL": "https://a.example.com", "secretName": "auditlog-credentials"},
				"us-east-1": {"tenantID": "b", "serviceURL": "https://b.example.com", "secretName": "other"}}}`)},
			check: func(t *testing.T, c *OperatorConfig) {
				got := map[string]string{}
				for region, tenant := range c.Shoot.AuditLog.Tenants["aws"] {
					got[region] = tenant.SecretName
				}
				if diff := cmp.Diff(map[string]string{"eu-central-1": "auditlog-credentials", "us-east-1": "other"}, got); diff != "" {
					t.Errorf("secrets (-want +got):\n%s", diff)
				}
				if sc := c.ShootConfig(); sc.AuditLog.Tenants["aws"]["us-east-1"].Secret(sc.AuditLog) != "other" {
					t.Errorf("the domain configuration lost the tenant's Secret: %+v", sc.AuditLog)
				}
			}},
		{reason: "a tenant without a Secret is refused, as the previous manager refused it",
			wantErr: "aws.us-east-1.secretName: must not be empty",
			files: map[string][]byte{"/gardener/tenant/config": []byte(`{"aws": {
				"eu-central-1": {"tenantID": "a", "serviceURL": "https://a.example.com", "secretName": "auditlog-credentials"},
				"us-east-1": {"tenantID": "b", "serviceURL": "https://b.example.com", "secretName": ""}}}`)}},
		{reason: "a key given twice is named with its path", wantErr: "converter.dns.secretName: duplicate key",
			files: map[string][]byte{converterPath: []byte(`{"converter": {"dns": {"secretName": "a", "secretName": "b"}}}`)}},
		{reason: "a section given twice", wantErr: "cluster: duplicate key",
			files: map[string][]byte{converterPath: []byte(`{"cluster": {}, "converter": {}, "cluster": {}}`)}},
		{reason: "a key given twice in different case", wantErr: `cluster.defaultSharedIASTenant: duplicate key (given as ["DefaultSharedIASTenant" "defaultSharedIASTenant"]`,
			change: func(d map[string]any) {
				c := at(d, "cluster")
				c["DefaultSharedIASTenant"] = c["defaultSharedIASTenant"]
			}},
		{reason: "a tenant given twice", wantErr: "converter.auditLogging.tenantConfigPath: audit log tenants /gardener/tenant/config: aws.eu-central-1: duplicate key",
			files: map[string][]byte{"/gardener/tenant/config": []byte(`{"aws": {
				"eu-central-1": {"tenantID": "a", "serviceURL": "https://a.example.com", "secretName": "s"},
				"eu-central-1": {"tenantID": "b", "serviceURL": "https://b.example.com", "secretName": "s"}}}`)}},
		{reason: "a maintenance window given twice", wantErr: "maintenance windows /maintenance-window-config/config: eu-central-1.end: duplicate key",
			files: map[string][]byte{"/maintenance-window-config/config": []byte(`{"eu-central-1": {"begin": "010000+0000", "end": "050000+0000", "end": "060000+0000"}}`)}},
		{reason: "a missing tenant file", wantErr: "converter.auditLogging.tenantConfigPath: read the audit log tenants",
			change: func(d map[string]any) { at(d, "converter", "auditLogging")["tenantConfigPath"] = "/nowhere" }},
		{reason: "a maintenance window file that is not JSON", wantErr: "converter.maintenanceWindow.windowMapPath: maintenance windows",
			files: map[string][]byte{"/maintenance-window-config/config": []byte("eu-central-1: 01-05")}},
		{reason: "a window that does not validate names the key and where it came from",
			wantErr: "shoot.maintenance.windows.eu-central-1.begin: must look like 220000+0000, got \"1am\" (set by /maintenance-window-config/config: eu-central-1",
			files:   map[string][]byte{"/maintenance-window-config/config": []byte(`{"eu-central-1": {"begin": "1am", "end": "050000+0000"}}`)}},
		{reason: "a read credentials Secret of a shared tenant had no use and is accepted",
			files: map[string][]byte{"/gardener/tenant/config": []byte(`{"aws": {"eu-central-1": {"tenantID": "a",
				"serviceURL": "https://a.example.com", "secretName": "s", "readCredsSecretName": "r"}}}`)},
			check: func(t *testing.T, c *OperatorConfig) {
				if got := c.Shoot.AuditLog.Tenants["aws"]["eu-central-1"].SecretName; got != "s" {
					t.Errorf("secret %q", got)
				}
			}},
		{reason: "absent booleans and worker defaults mean what they meant to the previous manager", change: func(d map[string]any) {
			k := at(d, "converter", "kubernetes")
			delete(k, "enableKubernetesVersionAutoUpdate")
			delete(at(d, "converter", "networking"), "enableDualStackIP")
			delete(at(d, "converter", "provider"), "worker")
			delete(at(d, "converter"), "tolerations")
		}, check: func(t *testing.T, c *OperatorConfig) {
			s := c.Shoot
			if *s.Maintenance.AutoUpdateKubernetesVersion || len(s.DualStack.Providers) != 0 || s.Tolerations == nil || len(s.Tolerations) != 0 ||
				s.Workers.MachineDrainTimeout.Duration != 15*time.Minute || *s.Workers.MaxEvictRetries != 2 {
				t.Errorf("absent keys: auto-update %v, dual stack %v, tolerations %v, workers %+v", *s.Maintenance.AutoUpdateKubernetesVersion,
					s.DualStack.Providers, s.Tolerations, s.Workers)
			}
		}},
		{reason: "an empty GDCH cloud profile meant the previous manager's built-in one, not this operator's default",
			change: func(d map[string]any) { at(d, "converter", "provider", "gdch")["cloudProfileName"] = "" },
			check: func(t *testing.T, c *OperatorConfig) {
				if got := c.Shoot.CloudProfiles["gdch"]; got != "cat" {
					t.Errorf("gdch cloud profile %q, want cat", got)
				}
			}},
		{reason: "without a GDCH parent reference nothing of GDCH is set", change: func(d map[string]any) {
			g := at(d, "converter", "provider", "gdch")
			for _, k := range []string{"parentReferenceName", "parentReferenceNamespace", "parentReferenceType"} {
				delete(g, k)
			}
		}, check: func(t *testing.T, c *OperatorConfig) {
			if c.Shoot.GDCH.EnableEgress || c.Shoot.GDCH.ParentReference != (GDCHParentReference{}) {
				t.Errorf("gdch %+v", c.Shoot.GDCH)
			}
		}},
		{reason: "no DNS settings meant Gardener's internal domain", change: func(d map[string]any) { at(d, "converter")["dns"] = map[string]any{} },
			check: func(t *testing.T, c *OperatorConfig) {
				if c.Shoot.DNS != (DNSConfig{Mode: "internal"}) {
					t.Errorf("dns %+v", c.Shoot.DNS)
				}
			}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			doc := production(t)
			if tc.change != nil {
				tc.change(doc)
			}
			raw, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			files := map[string][]byte{converterPath: raw}
			for k, v := range tc.files {
				files[k] = v
			}
			o, err := LoadConverterConfig(converterPath, readPrevious(files))
			var cfg *OperatorConfig
			if err == nil {
				cfg, err = ParseOverlaid(nil, o)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, cfg)
			}
		})
	}
}

// TestParseOverlaid: a stated value fills what the document leaves out and must equal what it sets; a default gives
// way; two overlays that disagree conflict as well.
func TestParseOverlaid(t *testing.T) {
	stated := func(value any, path ...string) *Overlay {
		o := &Overlay{}
		o.State("converter.x of f.json", value, path...)
		return o
	}
	for _, tc := range []struct {
		reason   string
		doc      string
		overlays []*Overlay
		wantErr  string
		check    func(t *testing.T, c *OperatorConfig)
	}{
		{reason: "fills a key the document leaves out", doc: minimal, overlays: []*Overlay{stated("kyma.example.com", "shoot", "dns", "domainPrefix"),
			stated("s", "shoot", "dns", "secretName"), stated("p", "shoot", "dns", "providerType")},
			check: func(t *testing.T, c *OperatorConfig) {
				if c.Shoot.DNS.DomainPrefix != "kyma.example.com" {
					t.Errorf("dns %+v", c.Shoot.DNS)
				}
			}},
		{reason: "agrees with the document", doc: minimal, overlays: []*Overlay{stated("1.33", "shoot", "defaultKubernetesVersion")}},
		{reason: "durations agree by value", doc: minimal + "  kubeAPIServer: {maxTokenExpiration: 720h}\n",
			overlays: []*Overlay{stated("720h0m0s", "shoot", "kubeAPIServer", "maxTokenExpiration")}},
		{reason: "disagrees with the document", doc: minimal, overlays: []*Overlay{stated("1.32", "shoot", "defaultKubernetesVersion")},
			wantErr: `shoot.defaultKubernetesVersion: the configuration says "1.33", converter.x of f.json says "1.32"`},
		{reason: "a list is one value", doc: minimal + "  dualStack: {providers: [aws]}\n",
			overlays: []*Overlay{stated([]string{"aws", "gcp"}, "shoot", "dualStack", "providers")}, wantErr: "shoot.dualStack.providers"},
		{reason: "a key below a value", doc: minimal + "  dns: internal\n", overlays: []*Overlay{stated("x", "shoot", "dns", "mode")},
			wantErr: "sets a key below shoot.dns"},
		{reason: "two overlays that disagree", doc: minimal,
			overlays: []*Overlay{stated(true, "shoot", "acl", "enabled"), func() *Overlay {
				o := &Overlay{}
				o.State("--api-server-acl-enabled=false", false, "shoot", "acl", "enabled")
				return o
			}()}, wantErr: "shoot.acl.enabled: converter.x of f.json says true, --api-server-acl-enabled=false says false"},
		{reason: "a default gives way to the document", doc: minimal + "registryCache: {enabled: true}\n",
			overlays: []*Overlay{func() *Overlay {
				o := &Overlay{}
				o.Default("previous default", false, "registryCache", "enabled")
				return o
			}()},
			check: func(t *testing.T, c *OperatorConfig) {
				if !*c.RegistryCache.Enabled {
					t.Error("the default won over the document")
				}
			}},
		{reason: "a default fills in, and a stated value replaces it", doc: minimal,
			overlays: []*Overlay{func() *Overlay {
				o := &Overlay{}
				o.Default("previous default", false, "registryCache", "enabled")
				o.Default("previous default", false, "shoot", "auditLog", "pool", "enabled")
				return o
			}(), stated(true, "shoot", "auditLog", "pool", "enabled")},
			wantErr: "shoot.auditLog.pool.enabled: dedicated tenants need shoot.auditLog.policyConfigMapName and shoot.auditLog.secretName, " +
				"or a secretName on every shared tenant (the credentials a runtime uses until it has its own tenant) (set by converter.x of f.json)"},
		{reason: "a validation error names the overlay that set the key", doc: minimal,
			overlays: []*Overlay{stated("30s", "registryCache", "syncInterval")},
			wantErr:  "registryCache.syncInterval: must be at least 1m, got 30s (set by converter.x of f.json)"},
		{reason: "the overlays alone", overlays: []*Overlay{stated("kyma", "gardener", "project"), stated("1.33", "shoot", "defaultKubernetesVersion"),
			stated("gardenlinux", "shoot", "defaultMachineImage", "name")}},
		{reason: "the overlays alone must still make a valid configuration", overlays: []*Overlay{stated("kyma", "gardener", "project")},
			wantErr: "shoot.defaultKubernetesVersion: must be a version"},
		{reason: "a key the document gives twice", doc: minimal + "  dns: {mode: internal}\n  dns: {mode: internal}\n",
			overlays: []*Overlay{stated("kyma", "gardener", "project")}, wantErr: "shoot.dns: duplicate key (lines 7 and 8)"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			var data []byte
			if tc.doc != "" {
				data = []byte(tc.doc)
			}
			cfg, err := ParseOverlaid(data, tc.overlays...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, cfg)
			}
		})
	}
	if _, err := ParseOverlaid([]byte("[1, 2]")); err == nil || !strings.Contains(err.Error(), "mapping") {
		t.Errorf("a list as configuration: %v", err)
	}
}
