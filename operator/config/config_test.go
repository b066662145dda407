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
		cfg.Deletion.DefaultGracePeriod.Duration != DefaultDeletionGracePeriod || !*cfg.Shoot.AuditLog.MissingTenantIsError {
		t.Errorf("defaults not applied: %+v", cfg)
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
	if d := cfg.Deletion; *d.Budget.Limit != DefaultDeletionBudget || d.Budget.Period.Duration != time.Hour || d.MaxClockAhead.Duration != DefaultMaxClockAhead {
		t.Errorf("unset breaker settings not defaulted: %+v", d)
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := Load(os.DevNull + "/missing"); err == nil {
		t.Error("want error for a missing file")
	}
}
