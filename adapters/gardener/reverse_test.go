package gardener

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/internal/mapping"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/testenv/goldenshoots"
)

// TestMigrationRoundTripGolden runs every golden Runtime (one or more per provider) through generation and back:
// Runtime -> shoot -> (translate.RuntimeFromShoot, mapping.RuntimeCR) -> Runtime'. Runtime' must generate exactly the same
// shoot and authentication ConfigMap, adopting the shoot with it must change nothing (AdoptionDifferences is empty),
// Runtime' must be a fixed point (its shoot gives Runtime' again), and every field a shoot records must be the
// Runtime's. What a shoot does not record is listed in lossy and checked to be the only differences.
func TestMigrationRoundTripGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/runtimes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden runtimes: %v", err)
	}
	providers := map[string]bool{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		if _, err := os.Stat("testdata/shoots/" + name + ".error"); err == nil {
			continue // a Runtime that must be refused has no shoot to go back from
		}
		t.Run(name, func(t *testing.T) {
			original := loadRuntime(t, f)
			providers[original.Spec.Shoot.Provider.Type] = true
			cfg := goldenshoots.Config(t, name)
			live, auth := generatedShoot(t, original, cfg)

			recovered := recoverRuntime(t, live, auth, cfg, original)
			again, againAuth := generatedShoot(t, recovered, cfg)
			if diff := cmp.Diff(goldenshoots.ObjectYAML(t, live), goldenshoots.ObjectYAML(t, again)); diff != "" {
				t.Errorf("the recovered Runtime generates another shoot (-original +recovered):\n%s", diff)
			}
			if diff := cmp.Diff(auth, againAuth); diff != "" {
				t.Errorf("the recovered Runtime generates another authentication configuration (-original +recovered):\n%s", diff)
			}
			checkAdoptionChangesNothing(t, live, auth, recovered, cfg)
			if fixed := recoverRuntime(t, again, againAuth, cfg, original); !cmp.Equal(fixed, recovered) {
				t.Errorf("recovering twice gives another Runtime:\n%s", cmp.Diff(recovered, fixed))
			}
			checkRecordedFields(t, original, recovered, cfg)
		})
	}
	for _, p := range []string{"aws", "azure", "gcp", "openstack", "alicloud", "gdch"} {
		if !providers[p] {
			t.Errorf("no golden Runtime of provider %s went through the round trip", p)
		}
	}
}

// generatedShoot is the shoot generated for cr as the gardener-apiserver returns it (JSON, so provider configs are
// raw bytes) and the data of its authentication ConfigMap (nil when it has none).
func generatedShoot(t *testing.T, cr *imv1.Runtime, cfg shoot.Config) (*gardencorev1beta1.Shoot, map[string]string) {
	t.Helper()
	spec, err := shoot.Generate(mapping.Runtime(cr), cfg)
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	s, err := translate.ToShoot(spec)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	out := &gardencorev1beta1.Shoot{}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatal(err)
	}
	auth, err := translate.AuthenticationConfigMapData(spec.Authentication)
	if err != nil {
		t.Fatal(err)
	}
	return out, auth
}

// recoverRuntime is what kim migrate does with a shoot: the Runtime from the shoot plus what KEB's Kyma resource
// and the runtime cluster tell (labels, platform region, administrators), as a CR stored by the API server.
func recoverRuntime(t *testing.T, live *gardencorev1beta1.Shoot, auth map[string]string, cfg shoot.Config, keb *imv1.Runtime) *imv1.Runtime {
	t.Helper()
	rec := translate.RuntimeFromShoot(live, auth, cfg)
	if len(rec.Problems) > 0 {
		t.Fatalf("shoot %s cannot be expressed as a Runtime: %v", live.Name, rec.Problems)
	}
	if rec.Predecessor != translate.PredecessorInfrastructureManager || rec.Runtime.ID != keb.Name {
		t.Errorf("recovered runtime %q by %q, want %s by the infrastructure manager", rec.Runtime.ID, rec.Predecessor, keb.Name)
	}
	rec.Runtime.PlatformRegion = keb.Labels[imv1.LabelPlatformRegion]
	rec.Runtime.Administrators = keb.Spec.Security.Administrators
	// Customer OIDC issuers live in the runtime (OpenIDConnect objects), not in the shoot: like the administrators,
	// a migration learns them elsewhere. The shoot records only that shoot-oidc-service is on.
	if len(rec.Runtime.OIDC) == 0 {
		want := mapping.Runtime(keb)
		rec.Runtime.OIDC, rec.Runtime.OIDCGiven = want.OIDC, want.OIDCGiven
	}
	cr, err := mapping.RuntimeCR(rec.Runtime, keb.Namespace, keb.Labels)
	if err != nil {
		t.Fatal(err)
	}
	cr.Generation = keb.Generation
	raw, err := yaml.Marshal(cr)
	if err != nil {
		t.Fatal(err)
	}
	stored := &imv1.Runtime{}
	if err := yaml.UnmarshalStrict(raw, stored); err != nil {
		t.Fatalf("the recovered Runtime is not in the CRD's shape: %v", err)
	}
	return stored
}

// checkAdoptionChangesNothing: the operator, having adopted the shoot for the recovered Runtime, computes its update
// from the shoot as it is (GenerateUpdate) and would write nothing new.
func checkAdoptionChangesNothing(t *testing.T, live *gardencorev1beta1.Shoot, auth map[string]string, cr *imv1.Runtime, cfg shoot.Config) {
	t.Helper()
	cur, err := translate.CurrentFromShoot(live)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := shoot.GenerateUpdate(mapping.Runtime(cr), cfg, cur)
	if err != nil {
		t.Fatalf("generate the update: %v", err)
	}
	diffs, err := AdoptionDifferences(live, auth, ports.ShootApply{Spec: spec, RuntimeID: cr.Name, RuntimeGeneration: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Errorf("adopting would change %s", d)
	}
}

// checkRecordedFields compares what a shoot records with the original Runtime. Not recorded, and so not compared:
// the pools' defaulted image versions and the gVisor flag generation adds, the OIDC signing algorithms
// (AuthenticationConfiguration has no field for them), the legacy oidcConfig (KEB sends it empty), KEB's names of
// registry cache configurations, and the Kyma resource's labels, platform region and administrators (taken from
// KEB's objects by the caller, asserted above).
func checkRecordedFields(t *testing.T, original, got *imv1.Runtime, cfg shoot.Config) {
	t.Helper()
	o, g := original.Spec.Shoot, got.Spec.Shoot
	for _, f := range []struct{ name, want, got string }{
		{"name", o.Name, g.Name}, {"region", o.Region, g.Region}, {"purpose", o.Purpose, g.Purpose},
		{"provider", o.Provider.Type, g.Provider.Type}, {"secretBindingName", o.SecretBindingName, g.SecretBindingName},
		{"licenceType", ptr.Deref(o.LicenceType, ""), ptr.Deref(g.LicenceType, "")},
		{"kubernetes.version", ptr.Deref(o.Kubernetes.Version, cfg.DefaultKubernetesVersion), ptr.Deref(g.Kubernetes.Version, "")},
		{"networking.nodes", o.Networking.Nodes, g.Networking.Nodes}, {"networking.pods", o.Networking.Pods, g.Networking.Pods},
		{"networking.services", o.Networking.Services, g.Networking.Services},
	} {
		if f.want != f.got {
			t.Errorf("spec.shoot.%s: %q, want %q", f.name, f.got, f.want)
		}
	}
	for _, f := range []struct {
		name      string
		want, got bool
	}{
		{"enforceSeedLocation", ptr.Deref(o.EnforceSeedLocation, false), ptr.Deref(g.EnforceSeedLocation, false)},
		{"enableNvidiaOpenshell", ptr.Deref(o.EnableNvidiaOpenshell, false), ptr.Deref(g.EnableNvidiaOpenshell, false)},
		{"networking.dualStack", ptr.Deref(o.Networking.DualStack, false), ptr.Deref(g.Networking.DualStack, false)},
		{"egress filter", original.Spec.Security.Networking.Filter.Egress.Enabled, got.Spec.Security.Networking.Filter.Egress.Enabled},
		{"ingress filter", ptr.Deref(original.Spec.Security.Networking.Filter.Ingress, imv1.Ingress{}).Enabled,
			ptr.Deref(got.Spec.Security.Networking.Filter.Ingress, imv1.Ingress{}).Enabled},
	} {
		if f.want != f.got {
			t.Errorf("%s: %t, want %t", f.name, f.got, f.want)
		}
	}
	if !cmp.Equal(o.ControlPlane, g.ControlPlane) {
		t.Errorf("controlPlane: %s", cmp.Diff(o.ControlPlane, g.ControlPlane))
	}
	if want, have := pools(o.Provider), pools(g.Provider); !cmp.Equal(want, have) {
		t.Errorf("worker pools (name, machine type, minimum, maximum, zones) differ (-original +recovered):\n%s", cmp.Diff(want, have))
	}
	if want, have := issuers(mapping.Runtime(original), cfg), issuers(mapping.Runtime(got), cfg); !cmp.Equal(want, have) {
		t.Errorf("OIDC issuers differ (-original +recovered):\n%s", cmp.Diff(want, have))
	}
	if want, have := ptr.Deref(o.Kubernetes.KubeAPIServer.ACL, imv1.ACL{}).AllowedCIDRs, ptr.Deref(g.Kubernetes.KubeAPIServer.ACL, imv1.ACL{}).AllowedCIDRs; !cmp.Equal(want, have) {
		t.Errorf("ACL: %v, want %v", have, want)
	}
	var upstreams, gotUpstreams []string
	for _, c := range original.Spec.ImageRegistryCache {
		upstreams = append(upstreams, c.Config.Upstream)
	}
	for _, c := range got.Spec.ImageRegistryCache {
		gotUpstreams = append(gotUpstreams, c.Config.Upstream)
	}
	if !slices.Equal(upstreams, gotUpstreams) {
		t.Errorf("registry caches %v, want %v", gotUpstreams, upstreams)
	}
}

type pool struct {
	Name, Type       string
	Minimum, Maximum int32
	Zones            []string
}

func pools(p imv1.Provider) []pool {
	var out []pool
	all := slices.Clone(p.Workers)
	if p.AdditionalWorkers != nil {
		all = append(all, *p.AdditionalWorkers...)
	}
	for _, w := range all {
		out = append(out, pool{w.Name, w.Machine.Type, w.Minimum, w.Maximum, w.Zones})
	}
	return out
}

// issuers are the customer issuers that reach the cluster, as issuer and client ID (the default issuer when the
// Runtime lists none).
func issuers(rt shoot.Runtime, cfg shoot.Config) []string {
	var out []string
	list := rt.OIDC
	if !rt.OIDCGiven && cfg.DefaultOIDC != nil {
		list = []shoot.OIDC{*cfg.DefaultOIDC}
	}
	for _, c := range list {
		out = append(out, c.IssuerURL+" "+c.ClientID)
	}
	return out
}

// TestMigrationRuntimeFromShootPredecessors: shoots of the provisioner and shoots still on a SecretBinding are
// recognised; what a Runtime cannot say is a problem, never silently dropped.
func TestMigrationRuntimeFromShootPredecessors(t *testing.T) {
	cfg := goldenshoots.Config(t, "aws")
	base, auth := generatedShoot(t, loadRuntime(t, "testdata/runtimes/aws.yaml"), cfg)
	for _, tc := range []struct {
		reason      string
		change      func(s *gardencorev1beta1.Shoot, auth map[string]string)
		noAuth      bool
		wantBy      translate.Predecessor
		wantID      string
		wantBinding string
		wantSB      string
		wantProblem string
	}{
		{reason: "the previous infrastructure manager's shoot", change: func(*gardencorev1beta1.Shoot, map[string]string) {},
			wantBy: translate.PredecessorInfrastructureManager, wantID: base.Annotations[shoot.AnnotationRuntimeID], wantBinding: "aws-kyma-1"},
		{reason: "the provisioner's shoot with its own annotations", change: func(s *gardencorev1beta1.Shoot, _ map[string]string) {
			s.Annotations = map[string]string{translate.AnnotationProvisionerRuntimeID: "rt-prov", translate.AnnotationProvisionerLicenceType: "PARTNER"}
		}, wantBy: translate.PredecessorProvisioner, wantID: "rt-prov", wantBinding: "aws-kyma-1"},
		{reason: "a shoot without a runtime ID", change: func(s *gardencorev1beta1.Shoot, _ map[string]string) { s.Annotations = nil },
			wantBy: translate.PredecessorNone, wantBinding: "aws-kyma-1"},
		{reason: "a shoot still on a SecretBinding names the CredentialsBinding of the same name", change: func(s *gardencorev1beta1.Shoot, _ map[string]string) {
			s.Spec.CredentialsBindingName = nil
			s.Spec.SecretBindingName = ptr.To("aws-kyma-legacy") //nolint:staticcheck // the legacy field under test
		}, wantBy: translate.PredecessorInfrastructureManager, wantID: base.Annotations[shoot.AnnotationRuntimeID], wantBinding: "aws-kyma-legacy", wantSB: "aws-kyma-legacy"},
		{reason: "an unknown field of the networking filter", change: func(s *gardencorev1beta1.Shoot, _ map[string]string) {
			for i := range s.Spec.Extensions {
				if s.Spec.Extensions[i].Type == shoot.ExtensionNetworkingFilter {
					s.Spec.Extensions[i].ProviderConfig = rawJSON(t, `{"egressFilter":{"blackholingEnabled":true,"staticFilterList":[]}}`)
				}
			}
		}, wantBy: translate.PredecessorInfrastructureManager, wantID: base.Annotations[shoot.AnnotationRuntimeID], wantBinding: "aws-kyma-1",
			wantProblem: "staticFilterList"},
		{reason: "a CEL rule in the authentication configuration", change: func(_ *gardencorev1beta1.Shoot, auth map[string]string) {
			auth[translate.AuthenticationConfigKey] = strings.Replace(auth[translate.AuthenticationConfigKey], "claimMappings:",
				"claimValidationRules:\n  - expression: claims.exp > 0\n  claimMappings:", 1)
		}, wantBy: translate.PredecessorInfrastructureManager, wantID: base.Annotations[shoot.AnnotationRuntimeID], wantBinding: "aws-kyma-1",
			wantProblem: "expression"},
		{reason: "a referenced authentication ConfigMap that is missing", change: func(*gardencorev1beta1.Shoot, map[string]string) {}, noAuth: true,
			wantBy: translate.PredecessorInfrastructureManager, wantID: base.Annotations[shoot.AnnotationRuntimeID], wantBinding: "aws-kyma-1",
			wantProblem: "does not exist"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			s := base.DeepCopy()
			a := map[string]string{}
			for k, v := range auth {
				a[k] = v
			}
			tc.change(s, a)
			if tc.noAuth {
				a = nil
			}
			got := translate.RuntimeFromShoot(s, a, cfg)
			if got.Predecessor != tc.wantBy || got.Runtime.ID != tc.wantID || got.Runtime.CredentialsBinding != tc.wantBinding || got.SecretBinding != tc.wantSB {
				t.Errorf("got runtime %q by %q, binding %q, SecretBinding %q; want %q by %q, %q, %q", got.Runtime.ID, got.Predecessor,
					got.Runtime.CredentialsBinding, got.SecretBinding, tc.wantID, tc.wantBy, tc.wantBinding, tc.wantSB)
			}
			joined := strings.Join(got.Problems, "; ")
			if (tc.wantProblem == "") != (joined == "") || !strings.Contains(joined, tc.wantProblem) {
				t.Errorf("problems %q, want one mentioning %q", joined, tc.wantProblem)
			}
		})
	}
}

func rawJSON(t *testing.T, s string) *runtime.RawExtension {
	t.Helper()
	if !json.Valid([]byte(s)) {
		t.Fatalf("invalid JSON %s", s)
	}
	return &runtime.RawExtension{Raw: []byte(s)}
}
