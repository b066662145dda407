package main

import (
	"flag"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/operator/config"
)

// previousHelmArgs are the previous infrastructure manager's Deployment arguments (testdata/previous-all-flags.yaml).
func previousHelmArgs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("testdata/previous-all-flags.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Args []string `json:"args"`
	}
	if err := yaml.UnmarshalStrict(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Args
}

// TestMigrationPreviousHelmArguments: the previous system's production arguments (every flag of its main.go) are
// accepted and set the equivalent settings, every previous name is a deprecation warning, and the ones without an
// equivalent are accepted and ignored. Before the four flags below were known, parseFlags refused the list.
func TestMigrationPreviousHelmArguments(t *testing.T) {
	args := previousHelmArgs(t)
	for _, added := range []string{"registry-cache-listener-port", "dedicated-audit-logging-enabled", "network-restriction-enabled",
		"registry-cache-reconcile-period"} {
		if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--"+added+"=") }) {
			t.Fatalf("the previous production arguments lack --%s", added)
		}
	}
	s, err := parseFlags(args, env(map[string]string{"KIM_CONFIG_MAP": "kim-manager-config", "POD_NAMESPACE": "kcp-system"}), io.Discard)
	if err != nil {
		t.Fatalf("the previous arguments are refused: %v", err)
	}
	o := s.opts
	for _, c := range []struct {
		flag      string
		got, want any
	}{
		{"gardener-project-name", o.GardenerProject, "kyma-prod"},
		{"kubeconfig-expiration-time", o.KubeconfigValidity, 24 * time.Hour},
		{"minimal-rotation-time", o.KubeconfigRotationFraction, 0.6},
		{"gardener-ratelimiter-qps", o.GardenerQPS, float32(20)},
		{"gardener-ratelimiter-burst", o.GardenerBurst, 20},
		{"runtime-ctrl-workers-cnt", o.RuntimeWorkers, 25},
		{"gardener-cluster-ctrl-workers-cnt", o.GardenerClusterWorkers, 5},
		{"leader-elect", o.LeaderElection, true},
		{"metrics-bind-address", o.MetricsAddr, ":8080"},
		{"health-probe-bind-address", o.ProbeAddr, ":8081"},
		{"gardener-kubeconfig-path", s.gardenKubeconfig, "/gardener/kubeconfig/kubeconfig"},
		{"converter-config-filepath", s.previous.converterFile, "/converter-config/converter_config.json"},
		{"registry-cache-listener-port (recorded)", s.previous.used["registry-cache-listener-port"], "8082"},
		{"KIM_CONFIG_MAP", s.configMap, "kim-manager-config"},
	} {
		if c.got != c.want {
			t.Errorf("--%s: got %v, want %v", c.flag, c.got, c.want)
		}
	}
	if err := o.Validate(); err != nil {
		t.Errorf("the options of the previous arguments do not validate: %v", err)
	}
	previous := 0
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if _, ok := s.previous.used[name]; ok {
			previous++
		}
	}
	if previous != 28 || len(s.previous.warnings) != previous {
		t.Errorf("%d previous flags recognised, %d warnings; want 28 each: %v", previous, len(s.previous.warnings), s.previous.warnings)
	}
	for _, w := range s.previous.warnings {
		if !strings.Contains(w, "deprecated") {
			t.Errorf("warning %q does not say deprecated", w)
		}
	}
}

// TestMigrationPreviousFeatureFlags: the previous flags with an equivalent in the operator configuration set it
// (merged by config.ParseOverlaid); the networking filter cannot be switched off; the Runtime Watcher listener port
// is accepted and ignored, saying why.
func TestMigrationPreviousFeatureFlags(t *testing.T) {
	for _, tc := range []struct {
		reason  string
		args    []string
		wantErr string
		check   func(t *testing.T, s *settings, cfg *config.OperatorConfig)
	}{
		{reason: "the registry cache period sets registryCache.syncInterval", args: []string{"--registry-cache-reconcile-period=90m"},
			check: func(t *testing.T, _ *settings, c *config.OperatorConfig) {
				if c.RegistryCache.SyncInterval.Duration != 90*time.Minute {
					t.Errorf("syncInterval %s", c.RegistryCache.SyncInterval.Duration)
				}
			}},
		{reason: "a registry cache period the configuration refuses names the flag", args: []string{"--registry-cache-reconcile-period=30s"},
			wantErr: "registryCache.syncInterval: must be at least 1m, got 30s (set by --registry-cache-reconcile-period=30s)"},
		{reason: "a registry cache period that is no duration", args: []string{"--registry-cache-reconcile-period=hourly"},
			wantErr: "registry-cache-reconcile-period"},
		{reason: "dedicated audit logging sets shoot.auditLog.pool.enabled", args: []string{"--dedicated-audit-logging-enabled"},
			check: func(t *testing.T, _ *settings, c *config.OperatorConfig) {
				if !c.Shoot.AuditLog.Pool.Enabled {
					t.Error("pool not enabled")
				}
			}},
		{reason: "the API server ACL and the audit log strictness", args: []string{"--api-server-acl-enabled=true", "--audit-log-mandatory=false"},
			check: func(t *testing.T, _ *settings, c *config.OperatorConfig) {
				if !c.Shoot.ACL.Enabled || *c.Shoot.AuditLog.MissingTenantIsError {
					t.Errorf("acl %v, missingTenantIsError %v", c.Shoot.ACL.Enabled, *c.Shoot.AuditLog.MissingTenantIsError)
				}
			}},
		{reason: "a flag that contradicts the configuration is refused", args: []string{"--api-server-acl-enabled=false"},
			wantErr: "shoot.acl.enabled: the configuration says true, --api-server-acl-enabled=false says false"},
		{reason: "the registry cache sync switched off", args: []string{"--registry-cache-config-controller-enabled=false"},
			check: func(t *testing.T, _ *settings, c *config.OperatorConfig) {
				if *c.RegistryCache.Enabled {
					t.Error("registry cache sync still on")
				}
			}},
		{reason: "the networking filter on is the configuration's default", args: []string{"--network-restriction-enabled=true"},
			check: func(t *testing.T, s *settings, c *config.OperatorConfig) {
				if c.Shoot.Features.DisableNetworkingFilter || !strings.Contains(strings.Join(s.previous.warnings, "\n"), "shoot.features.disableNetworkingFilter") {
					t.Errorf("disableNetworkingFilter %v, warnings %v", c.Shoot.Features.DisableNetworkingFilter, s.previous.warnings)
				}
			}},
		{reason: "the networking filter off leaves it to the landscape", args: []string{"--network-restriction-enabled=false"},
			check: func(t *testing.T, _ *settings, c *config.OperatorConfig) {
				if !c.Shoot.Features.DisableNetworkingFilter || !c.ShootConfig().Features.DisableNetworkingFilter {
					t.Error("networking filter not switched off")
				}
			}},
		{reason: "the listener port sets registryCache.listenerPort", args: []string{"--registry-cache-listener-port=8090"},
			check: func(t *testing.T, s *settings, c *config.OperatorConfig) {
				if c.RegistryCache.ListenerPort != 8090 {
					t.Errorf("listenerPort %d, want 8090", c.RegistryCache.ListenerPort)
				}
				if len(s.previous.warnings) != 1 || !strings.Contains(s.previous.warnings[0], "registryCache.listenerPort") {
					t.Errorf("warnings %v", s.previous.warnings)
				}
			}},
		{reason: "a listener port out of range names the flag", args: []string{"--registry-cache-listener-port=70000"},
			wantErr: "registryCache.listenerPort: must be 0 (no listener) or a port 1..65535, got 70000 (set by --registry-cache-listener-port=70000)"},
		{reason: "a listener port that is no number", args: []string{"--registry-cache-listener-port=http"},
			wantErr: "registry-cache-listener-port"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			s, err := parseFlags(append([]string{"--config=/landscape.yaml"}, tc.args...), env(nil), io.Discard)
			var cfg *config.OperatorConfig
			if err == nil {
				cfg, err = startupConfig(t, s, map[string]string{"/landscape.yaml": landscapeWithACL})
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
			tc.check(t, s, cfg)
		})
	}
}

// landscapeWithACL is a landscape configuration of this operator with the API server ACL on.
const landscapeWithACL = `apiVersion: kim.kyma-project.io/v1alpha1
kind: OperatorConfig
gardener: {project: kyma-prod}
shoot:
  defaultKubernetesVersion: "1.33"
  defaultMachineImage: {name: gardenlinux}
  auditLog: {policyConfigMapName: audit-policy, secretName: auditlog-credentials}
  acl: {enabled: true, configMap: {namespace: kcp-system, name: kcp-egress-ips}}
`

// previousMounts are the files the previous manager's Deployment mounted, from the test data.
var previousMounts = map[string]string{
	"/converter-config/converter_config.json": "../../config/testdata/previous/converter_config.json",
	"/gardener/tenant/config":                 "../../config/testdata/previous/audit-tenants.json",
	"/maintenance-window-config/config":       "../../config/testdata/previous/maintenance-windows.json",
}

// startupConfig is the configuration the manager starts with for s, as run builds it, with the files of files (path
// -> content) and the previous manager's mounts; it applies the flag overrides as the manager does.
func startupConfig(t *testing.T, s *settings, files map[string]string) (*config.OperatorConfig, error) {
	t.Helper()
	readFile := func(path string) ([]byte, error) {
		if c, ok := files[path]; ok {
			return []byte(c), nil
		}
		if local, ok := previousMounts[path]; ok {
			return os.ReadFile(local)
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: os.ErrNotExist}
	}
	overlays, err := s.overlays(readFile)
	if err != nil {
		return nil, err
	}
	var cfg *config.OperatorConfig
	if s.configMap != "" {
		// What loadConfigMap does with the ConfigMap's config.yaml.
		data, ok := files["configmap:"+s.configMap]
		if !ok {
			t.Fatalf("no content for ConfigMap %s", s.configMap)
		}
		cfg, err = config.ParseOverlaid([]byte(data), overlays...)
	} else {
		cfg, _, err = s.fileConfig(readFile, overlays)
	}
	if err != nil {
		return nil, err
	}
	o := s.opts
	o.Config = cfg
	if err := o.ResolveConfig(); err != nil {
		return nil, err
	}
	return o.Config, nil
}

// TestMigrationPreviousStartupConfiguration: the previous manager's production Deployment, unchanged (its arguments
// and its converter configuration, test data), starts this manager with the configuration the converter file
// describes; next to a landscape ConfigMap of this operator the two are merged, and where they disagree the start
// fails naming the key.
func TestMigrationPreviousStartupConfiguration(t *testing.T) {
	args := previousHelmArgs(t)
	t.Run("the previous Deployment unchanged: the converter configuration is the configuration", func(t *testing.T) {
		s, err := parseFlags(args, env(nil), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := startupConfig(t, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		sh := cfg.Shoot
		for _, c := range []struct {
			key       string
			got, want any
		}{
			{"gardener.project (flag and file)", cfg.Gardener.Project, "kyma-prod"},
			{"shoot.defaultKubernetesVersion", sh.DefaultKubernetesVersion, "1.33"},
			{"shoot.dns.domainPrefix", sh.DNS.DomainPrefix, "kyma-prod.example.com"},
			{"shoot.acl.enabled (--api-server-acl-enabled)", sh.ACL.Enabled, true},
			{"shoot.acl.configMap.name", sh.ACL.ConfigMap.Name, "kcp-egress-ips"},
			{"shoot.auditLog.enabled", sh.AuditLog.Enabled, true},
			{"shoot.auditLog.missingTenantIsError (--audit-log-mandatory)", *sh.AuditLog.MissingTenantIsError, true},
			{"shoot.auditLog.pool.enabled (--dedicated-audit-logging-enabled)", sh.AuditLog.Pool.Enabled, false},
			{"shoot.auditLog.tenants.azure.westeurope.tenantID", sh.AuditLog.Tenants["azure"]["westeurope"].TenantID, "2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f"},
			{"shoot.maintenance.windows.us-east-1.begin", sh.Maintenance.Windows["us-east-1"].Begin, "060000+0000"},
			{"registryCache.enabled (--registry-cache-config-controller-enabled)", *cfg.RegistryCache.Enabled, true},
			{"registryCache.syncInterval (--registry-cache-reconcile-period)", cfg.RegistryCache.SyncInterval.Duration, time.Hour},
			{"shoot.oidc.clientID", sh.OIDC.ClientID, "6c1f0e3a-8d2b-4e7f-a951-3b0d7c2e9f14"},
			{"shoot.workers.maxEvictRetries", *sh.Workers.MaxEvictRetries, int32(3)},
			{"deletion.defaultGracePeriod (this operator's default)", cfg.Deletion.DefaultGracePeriod.Duration, config.DefaultDeletionGracePeriod},
		} {
			if c.got != c.want {
				t.Errorf("%s: got %v, want %v", c.key, c.got, c.want)
			}
		}
	})
	t.Run("next to a landscape ConfigMap holding what the converter file has not", func(t *testing.T) {
		s, err := parseFlags(args, env(map[string]string{"KIM_CONFIG_MAP": "kim-landscape", "POD_NAMESPACE": "kcp-system"}), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := startupConfig(t, s, map[string]string{"configmap:kim-landscape": `apiVersion: kim.kyma-project.io/v1alpha1
kind: OperatorConfig
shoot:
  defaultKubernetesVersion: "1.33"   # the same as the converter file: fine
  euAccess: {platformRegions: [cf-eu11]}
deletion: {planGracePeriods: {trial: 0s}}
`})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Deletion.PlanGracePeriods["trial"].Duration != 0 || len(*cfg.Shoot.EUAccess.PlatformRegions) != 1 || cfg.Shoot.DNS.SecretName != "route53-kyma-prod" {
			t.Errorf("not merged: deletion %+v, euAccess %v, dns %+v", cfg.Deletion, *cfg.Shoot.EUAccess.PlatformRegions, cfg.Shoot.DNS)
		}
	})
	t.Run("next to the shipped default ConfigMap, which disagrees", func(t *testing.T) {
		s, err := parseFlags(args, env(map[string]string{"KIM_CONFIG_MAP": "kim-manager-config"}), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		_, err = startupConfig(t, s, map[string]string{"configmap:kim-manager-config": shippedConfig(t)})
		for _, want := range []string{`gardener.project: the configuration says "kyma", converter.gardener.projectName of /converter-config/converter_config.json says "kyma-prod"`,
			`shoot.dualStack.providers: the configuration says [], converter.networking.enableDualStackIP`,
			`shoot.acl.enabled: the configuration says false, --api-server-acl-enabled=true says true`} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v, want one containing %q", err, want)
			}
		}
	})
	t.Run("a project flag that disagrees with the converter file", func(t *testing.T) {
		s, err := parseFlags(append(slices.Clone(args), "--gardener-project-name=kyma-dev"), env(nil), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := startupConfig(t, s, nil); err == nil || !strings.Contains(err.Error(), `gardener.project: converter.gardener.projectName`) {
			t.Errorf("error %v, want the project conflict", err)
		}
	})
	t.Run("a converter file that is not there", func(t *testing.T) {
		s, err := parseFlags([]string{"--converter-config-filepath=/elsewhere.json"}, env(nil), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := startupConfig(t, s, nil); err == nil || !strings.Contains(err.Error(), "/elsewhere.json") {
			t.Errorf("error %v, want one naming the file", err)
		}
	})
}

// shippedConfig is config.yaml of the ConfigMap that ships with the operator.
func shippedConfig(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../../config/manager/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		t.Fatal(err)
	}
	return cm.Data["config.yaml"]
}

func TestMigrationPreviousFlagConflicts(t *testing.T) {
	base := []string{"--config=/tmp/c.yaml"}
	for _, tc := range []struct {
		reason string
		args   []string
		ok     bool
	}{
		{"a previous name alone", []string{"--gardener-project-name=a"}, true},
		{"both names with the same value", []string{"--gardener-project=a", "--gardener-project-name=a"}, true},
		{"both names with different values, new first", []string{"--gardener-project=a", "--gardener-project-name=b"}, false},
		{"both names with different values, previous first", []string{"--runtime-ctrl-workers-cnt", "5", "--runtime-workers", "6"}, false},
		{"a bad value names the flag it sets", []string{"--kubeconfig-expiration-time=soon"}, false},
		{"an ignored boolean without value", []string{"--structured-auth-enabled"}, true},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			_, err := parseFlags(append(append([]string{}, base...), tc.args...), env(nil), io.Discard)
			if (err == nil) != tc.ok {
				t.Errorf("parseFlags(%v) = %v, want ok=%t", tc.args, err, tc.ok)
			}
		})
	}
}

// TestPreviousFlagsHiddenFromHelp: -h lists this manager's flags only; the previous manager's names and --log-format
// (deprecated aliases, half of the list) are left out, with one line saying that they are accepted. Each is still
// accepted, with a warning.
func TestPreviousFlagsHiddenFromHelp(t *testing.T) {
	out := help(t)
	listed := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "  -"); ok {
			name, _, _ := strings.Cut(rest, " ")
			listed[name] = true
		}
	}
	previous := flag.NewFlagSet("previous", flag.ContinueOnError)
	hidden := append(bindPreviousFlags(previous).names, "log-format")
	if len(hidden) < 30 {
		t.Fatalf("%d previous flags registered: %v", len(hidden), hidden)
	}
	for _, name := range hidden {
		if listed[name] {
			t.Errorf("-h lists the deprecated --%s", name)
		}
	}
	for _, name := range []string{"gardener-project", "gardener-qps", "config-map", "zap-encoder", "legacy-metrics", "version"} {
		if !listed[name] {
			t.Errorf("-h does not list --%s:\n%s", name, out)
		}
	}
	if !strings.HasSuffix(out, "\n"+deprecatedNote+"\n") {
		t.Errorf("-h does not end with the note on deprecated flags:\n%s", out)
	}
	for _, c := range []struct {
		arg, warning string
	}{
		{"--gardener-project-name=kyma", "--gardener-project-name is the previous infrastructure manager's name of --gardener-project"},
		{"--runtime-bootstrapper-skr-namespace=kyma-system", "--runtime-bootstrapper-skr-namespace of the previous infrastructure manager is deprecated and ignored"},
		{"--log-format=console", "--log-format is deprecated; use --zap-encoder"},
	} {
		s, err := parseFlags([]string{"--config=/f", c.arg}, env(nil), io.Discard)
		if err != nil {
			t.Errorf("hidden %s refused: %v", c.arg, err)
			continue
		}
		if len(s.previous.warnings) != 1 || !strings.Contains(s.previous.warnings[0], c.warning) {
			t.Errorf("%s: warnings %q, want one containing %q", c.arg, s.previous.warnings, c.warning)
		}
	}
}
