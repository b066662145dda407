package config

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim/core/domain/shoot"
)

func TestExampleLoads(t *testing.T) {
	cfg, err := Load("testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if ns := cfg.ServiceAccountKubeconfigs.SystemNamespaces; len(ns) != 4 || ns[3] != "istio-system" {
		t.Errorf("serviceAccountKubeconfigs.systemNamespaces = %v", ns)
	}
	if ns := cfg.ServiceAccountKubeconfigs.ClusterWideSecretsNamespaces; len(ns) != 1 || ns[0] != "kcp-system" {
		t.Errorf("serviceAccountKubeconfigs not decoded: %v", ns)
	}
	if p := cfg.ServiceAccountKubeconfigs.AllowedPowers["kcp-system"]; len(p) != 1 || p[0] != "NamespaceWrites" {
		t.Errorf("serviceAccountKubeconfigs.allowedPowers not decoded: %v", cfg.ServiceAccountKubeconfigs.AllowedPowers)
	}
	if ns := cfg.ServiceAccountKubeconfigs.SharedNamespaces; len(ns) != 1 || ns[0] != "shared-tools" {
		t.Errorf("serviceAccountKubeconfigs.sharedNamespaces not decoded: %v", ns)
	}
	if d := cfg.ServiceAccountKubeconfigs.CleanupTimeout.Duration; d != 10*time.Minute {
		t.Errorf("serviceAccountKubeconfigs.cleanupTimeout not decoded: %s", d)
	}
	if cfg.Deletion.PlanGracePeriods["free"].Duration != 24*time.Hour || cfg.Deletion.ForceDeletionAfter.Duration != 4*time.Hour {
		t.Errorf("durations not decoded: %+v", cfg.Deletion)
	}
	sc := cfg.ShootConfig()
	if sc.Project != "kyma-dev" || sc.CloudProfiles[shoot.Azure] != "az" || sc.AuditLog.MissingTenantIsError ||
		sc.AuditLog.Tenants[shoot.AWS]["eu-central-1"].TenantID == "" || sc.DefaultOIDC == nil || !sc.Features.AWSIMDSv2 {
		t.Errorf("shoot config not converted: %+v", sc)
	}
}

func TestDefaults(t *testing.T) {
	cfg, err := Parse([]byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Deletion.ForceDeletionAfter.Duration != DefaultForceDeletionAfter ||
		cfg.Deletion.DefaultGracePeriod.Duration != DefaultDeletionGracePeriod || !*cfg.Shoot.AuditLog.MissingTenantIsError ||
		cfg.Runtime.DriftPeriod.Duration != DefaultDriftPeriod || cfg.Runtime.Timeout.Duration != DefaultRuntimeTimeout || cfg.Runtime.Bootstrap != nil {
		t.Errorf("defaults not applied: %+v", cfg)
	}
	if cfg.Runtime.StatusProgressInterval.Duration != DefaultStatusProgressInterval {
		t.Errorf("runtime.statusProgressInterval default %s, want %s", cfg.Runtime.StatusProgressInterval.Duration, DefaultStatusProgressInterval)
	}
	if cfg.Runtime.MaxRetryDelay.Duration != DefaultMaxRetryDelay {
		t.Errorf("runtime.maxRetryDelay default %s, want %s", cfg.Runtime.MaxRetryDelay.Duration, DefaultMaxRetryDelay)
	}
	if every, err := Parse([]byte(minimal + "runtime: {statusProgressInterval: 0s}\n")); err != nil || every.Runtime.StatusProgressInterval.Duration != 0 {
		t.Errorf("runtime.statusProgressInterval 0s (every change): %v, %+v", err, every)
	}
	rc, pool := cfg.RegistryCache, cfg.Shoot.AuditLog.Pool
	if !*rc.Enabled || !*rc.CheckUpstreamDNS || rc.SyncInterval.Duration != time.Hour || rc.Workers != DefaultRegistryCacheWorkers ||
		rc.MaxConfigsPerRuntime != 100 || rc.MaxListBytesPerRuntime != 256<<10 || pool.Enabled || pool.Scope != PoolScopeNamespaced {
		t.Errorf("self-service defaults not applied: registry cache %+v, audit log pool %+v", rc, pool)
	}
	// The previous manager's built-in drain settings (issue 27), unless the landscape sets its own.
	if w := cfg.Shoot.Workers; w.MachineDrainTimeout == nil || w.MachineDrainTimeout.Duration != 15*time.Minute || w.MaxEvictRetries == nil || *w.MaxEvictRetries != 2 {
		t.Errorf("worker defaults %+v, want 15m and 2", w)
	}
	own, err := Parse([]byte(minimal + "  workers: {machineDrainTimeout: 1h, maxEvictRetries: 0}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if w := own.Shoot.Workers; w.MachineDrainTimeout.Duration != time.Hour || *w.MaxEvictRetries != 0 {
		t.Errorf("the landscape's worker settings were replaced: %+v", w)
	}
}

const minimal = `apiVersion: kim.kyma-project.io/v1alpha1
kind: OperatorConfig
gardener: {project: kyma}
shoot:
  defaultKubernetesVersion: "1.33"
  defaultMachineImage: {name: gardenlinux}
`

func TestBadConfigNamesTheKey(t *testing.T) {
	cases := []struct {
		reason string
		change func(string) string
		want   string
	}{
		{"empty project", func(s string) string { return strings.Replace(s, "project: kyma", "project: \"\"", 1) }, "gardener.project: must not be empty"},
		{"unknown key", func(s string) string { return s + "bogus: 1\n" }, `unknown field "bogus"`},
		{"wrong version", func(s string) string { return strings.Replace(s, "v1alpha1", "v9", 1) }, "apiVersion: must be"},
		{"bad kubernetes version", func(s string) string { return strings.Replace(s, `"1.33"`, "latest", 1) }, "shoot.defaultKubernetesVersion"},
		{"wrong type", func(s string) string { return s + "deletion: {freeze: maybe}\n" }, "deletion.freeze: must be a bool"},
		{"bad duration", func(s string) string { return s + "deletion: {defaultGracePeriod: forever}\n" }, "invalid duration"},
		{"negative force-deletion delay", func(s string) string { return s + "deletion: {forceDeletionAfter: -1h}\n" }, "deletion.forceDeletionAfter: must be positive"},
		{"kubeconfig settings are flags, not file keys", func(s string) string { return s + "kubeconfig: {validity: 1h}\n" }, `unknown field "kubeconfig"`},
		{"unknown cloud profile provider", func(s string) string { return s + "  cloudProfiles: {vsphere: x}\n" }, "shoot.cloudProfiles.vsphere"},
		{"dns without secret", func(s string) string { return s + "  dns: {domainPrefix: a.b, providerType: aws-route53}\n" }, "shoot.dns.secretName"},
		{"bad window", func(s string) string {
			return s + "  maintenance: {windows: {eu: {begin: '25', end: '230000+0000'}}}\n"
		}, "shoot.maintenance.windows.eu.begin"},
		{"audit tenant without URL", func(s string) string {
			return s + "  auditLog: {enabled: true, policyConfigMapName: p, secretName: s, tenants: {aws: {eu-central-1: {tenantID: t}}}}\n"
		}, "shoot.auditLog.tenants.aws.eu-central-1.serviceURL"},
		{"grace period above max", func(s string) string { return s + "deletion: {defaultGracePeriod: 100h, maxGracePeriod: 10h}\n" }, "deletion.defaultGracePeriod"},
		{"the privacy cap cannot be switched off", func(s string) string { return s + "deletion: {maxGracePeriod: 0s}\n" }, "deletion.maxGracePeriod: must be positive"},
		{"the breaker cannot be switched off", func(s string) string { return s + "deletion: {budget: {limit: 0}}\n" }, "deletion.budget.limit"},
		{"the breaker needs a period", func(s string) string { return s + "deletion: {budget: {period: 0s}}\n" }, "deletion.budget.period"},
		{"no clock tolerance below the Date header's resolution", func(s string) string { return s + "deletion: {maxClockAhead: 0s}\n" }, "deletion.maxClockAhead"},
		{"no zero binding release hold: KEB's step relies on the label", func(s string) string { return s + "deletion: {bindingReleaseHold: 0s}\n" }, "deletion.bindingReleaseHold"},
		// Keys of the 2025-26 landscape features: each problem names its key.
		{"unknown dns mode", func(s string) string { return s + "  dns: {mode: magic}\n" }, "shoot.dns.mode"},
		{"external dns without prefix", func(s string) string { return s + "  dns: {mode: external, secretName: s, providerType: p}\n" }, "shoot.dns.domainPrefix"},
		{"internal dns with a provider", func(s string) string { return s + "  dns: {mode: internal, providerType: p}\n" }, "shoot.dns.providerType"},
		{"operator issuer over http", func(s string) string {
			return s + "  operatorOIDC: [{issuerURL: 'http://kcp.example.com', clientID: kim}]\n"
		}, "shoot.operatorOIDC[0].issuerURL"},
		{"operator issuer with a bad CA", func(s string) string {
			return s + "  operatorOIDC: [{issuerURL: 'https://kcp.example.com', clientID: kim, caBundle: nope}]\n"
		}, "shoot.operatorOIDC[0].caBundle"},
		{"default issuer without client", func(s string) string { return s + "  oidc: {issuerURL: 'https://a.example.com'}\n" }, "shoot.oidc.clientID"},
		{"unknown authentication style", func(s string) string { return s + "  authenticationStyle: mine\n" }, "shoot.authenticationStyle: must be kim or previous"},
		{"the previous authentication rules with two operator issuers", func(s string) string {
			return s + "  authenticationStyle: previous\n  operatorOIDC: [{issuerURL: 'https://a.example.com', clientID: a}, {issuerURL: 'https://b.example.com', clientID: b}]\n"
		}, "shoot.authenticationStyle: previous trusts one operator issuer, but shoot.operatorOIDC lists 2"},
		{"the previous authentication rules with a CA bundle", func(s string) string {
			return s + "  authenticationStyle: previous\n  operatorOIDC: [{issuerURL: 'https://a.example.com', clientID: a, caBundle: nope}]\n"
		}, "shoot.operatorOIDC[0].caBundle: the previous manager's rules write no CA bundle"},
		{"unknown oidc extension mode", func(s string) string { return s + "  oidcExtension: sometimes\n" }, "shoot.oidcExtension"},
		{"gdch without parent network", func(s string) string { return s + "  gdch: {enableEgress: true}\n" }, "shoot.gdch.parentReference.name"},
		{"empty eu-access region", func(s string) string { return s + "  euAccess: {platformRegions: [cf-eu11, '']}\n" }, "shoot.euAccess.platformRegions[1]"},
		{"bad toleration key", func(s string) string { return s + "  tolerations: {me-central2: ['not a key']}\n" }, "shoot.tolerations.me-central2[0]"},
		{"acl on without its ConfigMap", func(s string) string { return s + "  acl: {enabled: true}\n" }, "shoot.acl.configMap"},
		{"acl ConfigMap without a name", func(s string) string { return s + "  acl: {enabled: true, configMap: {namespace: kcp-system}}\n" }, "shoot.acl.configMap.name"},
		{"acl on an unknown provider", func(s string) string {
			return s + "  acl: {providers: [vsphere]}\n"
		}, "shoot.acl.providers[0]"},
		{"dual stack on azure", func(s string) string { return s + "  dualStack: {providers: [aws, azure]}\n" }, "shoot.dualStack.providers[1]"},
		{"negative drain timeout", func(s string) string { return s + "  workers: {machineDrainTimeout: -5m}\n" }, "shoot.workers.machineDrainTimeout"},
		{"negative evict retries", func(s string) string { return s + "  workers: {maxEvictRetries: -1}\n" }, "shoot.workers.maxEvictRetries"},
		{"drain timeout not a duration", func(s string) string { return s + "  workers: {machineDrainTimeout: soon}\n" }, "invalid duration"},
		{"bad api server feature gate", func(s string) string { return s + "  kubeAPIServer: {featureGates: {not-a-gate: true}}\n" }, "shoot.kubeAPIServer.featureGates.not-a-gate"},
		{"feature gate not a bool", func(s string) string { return s + "  kubelet: {featureGates: {Gate: maybe}}\n" }, "shoot.kubelet.featureGates"},
		{"bad kubelet feature gate", func(s string) string { return s + "  kubelet: {featureGates: {lower: true}}\n" }, "shoot.kubelet.featureGates.lower"},
		{"bad runtime config", func(s string) string { return s + "  kubeAPIServer: {runtimeConfig: {'Not A Group': true}}\n" }, "shoot.kubeAPIServer.runtimeConfig.Not A Group"},
		{"negative token lifetime", func(s string) string { return s + "  kubeAPIServer: {maxTokenExpiration: -1h}\n" }, "shoot.kubeAPIServer.maxTokenExpiration"},
		{"a cluster-wide Secrets namespace that is not a name", func(s string) string {
			return s + "serviceAccountKubeconfigs: {clusterWideSecretsNamespaces: [kcp-system, KCP]}\n"
		}, "serviceAccountKubeconfigs.clusterWideSecretsNamespaces[1]"},
		{"a system namespace that is not a name", func(s string) string {
			return s + "serviceAccountKubeconfigs: {systemNamespaces: [kube-system, Kyma_System]}\n"
		}, "serviceAccountKubeconfigs.systemNamespaces[1]"},
		{"an unknown power", func(s string) string {
			return s + "serviceAccountKubeconfigs: {allowedPowers: {kcp-system: [NamespaceWrites, ClusterAdmin]}}\n"
		}, "serviceAccountKubeconfigs.allowedPowers.kcp-system[1]"},
		{"a shared system namespace", func(s string) string {
			return s + "serviceAccountKubeconfigs: {sharedNamespaces: [tools, kube-system]}\n"
		}, "serviceAccountKubeconfigs.sharedNamespaces[1]"},
		{"a negative cleanup timeout", func(s string) string {
			return s + "serviceAccountKubeconfigs: {cleanupTimeout: -1m}\n"
		}, "serviceAccountKubeconfigs.cleanupTimeout"},
		{"a cleanup timeout above a day", func(s string) string {
			return s + "serviceAccountKubeconfigs: {cleanupTimeout: 25h}\n"
		}, "serviceAccountKubeconfigs.cleanupTimeout"},
		{"negative cleanup grace period", func(s string) string { return s + "  cleanupGracePeriods: {webhooks: -1}\n" }, "shoot.cleanupGracePeriods.webhooks"},
		{"registry cache sync faster than a minute", func(s string) string { return s + "registryCache: {syncInterval: 10s}\n" }, "registryCache.syncInterval"},
		{"registry cache workers out of range", func(s string) string { return s + "registryCache: {workers: 1000}\n" }, "registryCache.workers"},
		{"registry cache objects per runtime out of range", func(s string) string { return s + "registryCache: {maxConfigsPerRuntime: -1}\n" }, "registryCache.maxConfigsPerRuntime"},
		{"registry cache list bytes per runtime too small", func(s string) string { return s + "registryCache: {maxListBytesPerRuntime: 1000}\n" }, "registryCache.maxListBytesPerRuntime"},
		{"listener gateway principal as a SPIFFE URI", func(s string) string {
			return s + "registryCache: {listenerTrust: {gatewayPrincipal: spiffe://cluster.local/ns/istio-system/sa/gw}}\n"
		}, "registryCache.listenerTrust.gatewayPrincipal"},
		{"listener operator principal without a service account", func(s string) string {
			return s + "registryCache: {listenerTrust: {operatorPrincipal: cluster.local/ns/kcp-system}}\n"
		}, "registryCache.listenerTrust.operatorPrincipal"},
		{"unknown audit log pool scope", func(s string) string { return s + "  auditLog: {pool: {scope: Galaxy}}\n" }, "shoot.auditLog.pool.scope"},
		{"cluster-scoped pool with a namespace", func(s string) string {
			return s + "  auditLog: {pool: {scope: Cluster, namespace: kcp-system}}\n"
		}, "shoot.auditLog.pool.namespace"},
		{"pool without the shared audit log settings", func(s string) string { return s + "  auditLog: {pool: {enabled: true}}\n" }, "shoot.auditLog.pool.enabled"},
		{"drift period zero", func(s string) string { return s + "runtime: {driftPeriod: 0s}\n" }, "runtime.driftPeriod"},
		{"runtime timeout too long", func(s string) string { return s + "runtime: {timeout: 1h}\n" }, "runtime.timeout"},
		{"status progress interval too long", func(s string) string { return s + "runtime: {statusProgressInterval: 2h}\n" }, "runtime.statusProgressInterval"},
		{"max retry delay too short", func(s string) string { return s + "runtime: {maxRetryDelay: 500ms}\n" }, "runtime.maxRetryDelay"},
		{"max retry delay too long", func(s string) string { return s + "runtime: {maxRetryDelay: 2h}\n" }, "runtime.maxRetryDelay"},
		{"status progress interval negative", func(s string) string { return s + "runtime: {statusProgressInterval: -1s}\n" }, "runtime.statusProgressInterval"},
		{"bootstrap without a ConfigMap name", func(s string) string { return s + "runtime: {bootstrap: {configMap: {namespace: kcp-system}}}\n" }, "runtime.bootstrap.configMap.name"},
		{"bootstrap allowed kind without a kind", func(s string) string {
			return s + "runtime: {bootstrap: {configMap: {name: b}, allowedKinds: [{group: apps}]}}\n"
		}, "runtime.bootstrap.allowedKinds[0].kind"},
		{"bootstrap allowed kind with a wildcard", func(s string) string {
			return s + "runtime: {bootstrap: {configMap: {name: b}, allowedKinds: [{group: '*', kind: '*'}]}}\n"
		}, "runtime.bootstrap.allowedKinds[0]"},
		// A key given twice was the last one silently winning; it names the key's path and both lines.
		{"a top-level key twice", func(s string) string { return s + "gardener: {project: other}\n" }, "gardener: duplicate key (lines 3 and 7)"},
		{"a key twice in a flow mapping", func(s string) string {
			return strings.Replace(s, "project: kyma", "project: kyma, project: other", 1)
		}, "gardener.project: duplicate key"},
		{"a nested key twice", func(s string) string {
			return s + "  dns:\n    mode: external\n    secretName: a\n    secretName: b\n"
		}, "shoot.dns.secretName: duplicate key (lines 9 and 10)"},
		{"a key twice in a list entry", func(s string) string {
			return s + "  operatorOIDC: [{issuerURL: 'https://kcp.example.com', clientID: kim, clientID: other}]\n"
		}, "shoot.operatorOIDC[0].clientID: duplicate key"},
		{"a map entry twice", func(s string) string {
			return s + "  tolerations:\n    me-central2: [a]\n    me-central2: [b]\n"
		}, "shoot.tolerations.me-central2: duplicate key"},
		{"a key twice in JSON", func(string) string {
			return `{"apiVersion": "kim.kyma-project.io/v1alpha1", "kind": "OperatorConfig", "gardener": {"project": "a", "project": "b"}}`
		}, "gardener.project: duplicate key (lines 1 and 1)"},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			_, err := Parse([]byte(tc.change(minimal)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want error containing %q, got %v", tc.want, err)
			}
		})
	}
}

// TestZeroMeansWhatTheDomainSays: "0s" is not "unset". A zero force-deletion delay disables force-deletion and a
// zero default window deletes at once; neither is replaced by a default.
func TestZeroMeansWhatTheDomainSays(t *testing.T) {
	cfg, err := Parse([]byte(minimal + "deletion: {forceDeletionAfter: 0s, defaultGracePeriod: 0s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cfg.Deletion; d.ForceDeletionAfter.Duration != 0 || d.DefaultGracePeriod.Duration != 0 {
		t.Errorf("0s replaced by defaults: forceDeletionAfter %s, defaultGracePeriod %s", d.ForceDeletionAfter.Duration, d.DefaultGracePeriod.Duration)
	}
	if d := cfg.Deletion; *d.Budget.Limit != DefaultDeletionBudget || d.Budget.Period.Duration != time.Hour || d.MaxClockAhead.Duration != DefaultMaxClockAhead ||
		d.BindingReleaseHold.Duration != 2*time.Hour {
		t.Errorf("unset breaker settings not defaulted: %+v", d)
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := Load(os.DevNull + "/missing"); err == nil {
		t.Error("want error for a missing file")
	}
}

func TestLandscapeKeysConvert(t *testing.T) {
	cfg, err := Parse([]byte(minimal + `  dns: {mode: internal}
  operatorOIDC: [{issuerURL: 'https://kcp.example.com', clientID: kim}]
  oidcExtension: always
  gdch: {enableEgress: true, parentReference: {name: net, namespace: ns, type: SingleSubnet}}
  euAccess: {platformRegions: []}
  tolerations: {me-central2: [a]}
  acl: {enabled: true, providers: [aws], configMap: {name: acl-ip-list}}
  dualStack: {providers: [aws]}
  workers: {machineDrainTimeout: 15m, maxEvictRetries: 2}
  kubeAPIServer: {featureGates: {A: true}, runtimeConfig: {resource.k8s.io/v1beta1: true}, maxTokenExpiration: 1000h}
  kubelet: {featureGates: {B: false}}
`))
	if err != nil {
		t.Fatal(err)
	}
	sc := cfg.ShootConfig()
	checks := map[string]bool{
		"dns mode":              sc.DNS.Mode == shoot.DNSModeInternal,
		"operator issuer":       len(sc.OperatorOIDC) == 1 && sc.OperatorOIDC[0].ClientID == "kim",
		"oidc extension":        sc.OIDCExtension == shoot.OIDCExtensionAlways,
		"gdch":                  sc.GDCH.EnableEgress && sc.GDCH.ParentReference == shoot.GDCHParentReference{Name: "net", Namespace: "ns", Type: "SingleSubnet"},
		"eu access off":         sc.EUAccessPlatformRegions != nil && len(sc.EUAccessPlatformRegions) == 0,
		"tolerations":           len(sc.RegionTolerations["me-central2"]) == 1,
		"acl":                   sc.ACL.Enabled && len(sc.ACL.Providers) == 1 && sc.ACL.Providers[0] == shoot.AWS,
		"dual stack":            len(sc.DualStack) == 1,
		"drain timeout":         sc.Workers.MachineDrainTimeout == "15m0s" && *sc.Workers.MaxEvictRetries == 2,
		"api server":            sc.KubeAPIServer.FeatureGates["A"] && sc.KubeAPIServer.RuntimeConfig["resource.k8s.io/v1beta1"] && sc.KubeAPIServer.MaxTokenExpiration == 1000*time.Hour,
		"kubelet":               len(sc.Kubelet.FeatureGates) == 1,
		"cleanup grace default": *sc.CleanupGracePeriods.ExtendedAPIs == 120 && *sc.CleanupGracePeriods.Webhooks == 60,
	}
	for name, ok := range checks {
		if !ok {
			t.Errorf("%s not converted: %+v", name, sc)
		}
	}
	def, _ := Parse([]byte(minimal))
	if dsc := def.ShootConfig(); dsc.EUAccessPlatformRegions != nil || dsc.RegionTolerations != nil {
		t.Errorf("absent keys must leave the domain defaults: %+v", dsc)
	}
}
