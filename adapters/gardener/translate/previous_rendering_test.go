package translate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/internal/mapping"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/testenv/goldenshoots"
	"github.com/kyma-project/kim/test/testenv/previous"
)

// TestUpdateOfThePreviousRenderingChangesNoExtension: every golden shoot as the previous manager rendered it
// (extension order, its encoders' JSON, explicit disabled: false, no apiVersion/kind where the extension defaults
// them, the DNS provider list) keeps its extensions, spec.dns and spec.resources byte for byte when this operator
// updates it. The previous rendering says the same, so writing ours would be a change for nothing.
func TestUpdateOfThePreviousRenderingChangesNoExtension(t *testing.T) {
	files, err := filepath.Glob("../testdata/runtimes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden runtimes: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var cr imv1.Runtime
			if err := yaml.UnmarshalStrict(data, &cr); err != nil {
				t.Fatal(err)
			}
			cfg := goldenshoots.Config(t, name)
			spec, err := shoot.Generate(mapping.Runtime(&cr), cfg)
			if err != nil {
				t.Fatal(err)
			}
			prev, err := ToShoot(spec)
			if err != nil {
				t.Fatal(err)
			}
			if err := previous.Render(prev); err != nil {
				t.Fatal(err)
			}
			cur, err := CurrentFromShoot(prev)
			if err != nil {
				t.Fatal(err)
			}
			update, err := shoot.GenerateUpdate(mapping.Runtime(&cr), cfg, cur)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ApplySpec(prev, update)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(goldenshoots.ExtensionsText(t, prev.Spec.Extensions), goldenshoots.ExtensionsText(t, got.Spec.Extensions)); diff != "" {
				t.Errorf("extensions changed (-previous +after update):\n%s", diff)
			}
			if diff := cmp.Diff(prev.Spec.DNS, got.Spec.DNS); diff != "" {
				t.Errorf("spec.dns changed (-previous +after update):\n%s", diff)
			}
			if diff := cmp.Diff(prev.Spec.Resources, got.Spec.Resources); diff != "" {
				t.Errorf("spec.resources changed (-previous +after update):\n%s", diff)
			}
		})
	}
}

// TestMergeExtensions: the shoot's order is kept; an extension that already says what is generated keeps its
// bytes; a different one is replaced in place; one the operator owns and no longer generates goes unless generation
// keeps it; others stay; new ones are appended.
func TestMergeExtensions(t *testing.T) {
	ext := func(typ, cfg string, disabled *bool) gardencorev1beta1.Extension {
		e := gardencorev1beta1.Extension{Type: typ, Disabled: disabled}
		if cfg != "" {
			e.ProviderConfig = &runtime.RawExtension{Raw: []byte(cfg)}
		}
		return e
	}
	const dnsV = "service.dns.extensions.gardener.cloud/v1alpha1"
	for _, tc := range []struct {
		reason             string
		current, generated []gardencorev1beta1.Extension
		kept               []string
		want               []gardencorev1beta1.Extension
	}{
		{reason: "another encoding of the same config keeps its bytes and place",
			current: []gardencorev1beta1.Extension{ext("foreign", "", nil),
				ext(shoot.ExtensionDNS, `{"providers":null,"kind":"DNSConfig","apiVersion":"`+dnsV+`","syncProvidersFromShootSpecDNS":true}`, nil)},
			generated: []gardencorev1beta1.Extension{ext(shoot.ExtensionDNS, `{"apiVersion":"`+dnsV+`","kind":"DNSConfig","syncProvidersFromShootSpecDNS":true}`, nil)},
			want: []gardencorev1beta1.Extension{ext("foreign", "", nil),
				ext(shoot.ExtensionDNS, `{"providers":null,"kind":"DNSConfig","apiVersion":"`+dnsV+`","syncProvidersFromShootSpecDNS":true}`, nil)}},
		{reason: "a missing apiVersion/kind the extension defaults is the same",
			current:   []gardencorev1beta1.Extension{ext(shoot.ExtensionNetworkingFilter, `{"egressFilter":{"blackholingEnabled":true}}`, ptr.To(false))},
			generated: []gardencorev1beta1.Extension{ext(shoot.ExtensionNetworkingFilter, `{"apiVersion":"x/v1","kind":"Configuration","egressFilter":{"blackholingEnabled":true}}`, nil)},
			want:      []gardencorev1beta1.Extension{ext(shoot.ExtensionNetworkingFilter, `{"egressFilter":{"blackholingEnabled":true}}`, ptr.To(false))}},
		{reason: "a missing apiVersion of an extension that does not default it is a change",
			current:   []gardencorev1beta1.Extension{ext(shoot.ExtensionAuditLog, `{"tenantID":"a"}`, nil)},
			generated: []gardencorev1beta1.Extension{ext(shoot.ExtensionAuditLog, `{"apiVersion":"x/v1","tenantID":"a"}`, nil)},
			want:      []gardencorev1beta1.Extension{ext(shoot.ExtensionAuditLog, `{"apiVersion":"x/v1","tenantID":"a"}`, nil)}},
		{reason: "a wrong apiVersion is a change",
			current:   []gardencorev1beta1.Extension{ext(shoot.ExtensionNetworkingFilter, `{"apiVersion":"old/v1","egressFilter":{}}`, nil)},
			generated: []gardencorev1beta1.Extension{ext(shoot.ExtensionNetworkingFilter, `{"apiVersion":"x/v1","egressFilter":{}}`, nil)},
			want:      []gardencorev1beta1.Extension{ext(shoot.ExtensionNetworkingFilter, `{"apiVersion":"x/v1","egressFilter":{}}`, nil)}},
		{reason: "enablement differs: replaced in place",
			current:   []gardencorev1beta1.Extension{ext(shoot.ExtensionCert, "", nil), ext(shoot.ExtensionNetworkingFilter, "", nil), ext("foreign", "", nil)},
			generated: []gardencorev1beta1.Extension{ext(shoot.ExtensionNetworkingFilter, "", ptr.To(true)), ext(shoot.ExtensionCert, "", nil)},
			want:      []gardencorev1beta1.Extension{ext(shoot.ExtensionCert, "", nil), ext(shoot.ExtensionNetworkingFilter, "", ptr.To(true)), ext("foreign", "", nil)}},
		{reason: "owned and no longer generated goes; kept stays; new is appended",
			current: []gardencorev1beta1.Extension{ext(shoot.ExtensionACL, `{"rule":{}}`, nil), ext(shoot.ExtensionNetworkingFilter, `{"a":1}`, nil),
				ext(shoot.ExtensionRegistryCache, `{"caches":[]}`, nil)},
			generated: []gardencorev1beta1.Extension{ext(shoot.ExtensionCert, `{"b":2}`, nil)},
			kept:      []string{shoot.ExtensionNetworkingFilter},
			want:      []gardencorev1beta1.Extension{ext(shoot.ExtensionNetworkingFilter, `{"a":1}`, nil), ext(shoot.ExtensionCert, `{"b":2}`, nil)}},
		{reason: "an owned extension already switched off stays when no longer generated",
			current:   []gardencorev1beta1.Extension{ext(shoot.ExtensionNvidiaOpenShell, "", ptr.To(true)), ext(shoot.ExtensionACL, `{"rule":{}}`, ptr.To(true))},
			generated: nil,
			want:      []gardencorev1beta1.Extension{ext(shoot.ExtensionNvidiaOpenShell, "", ptr.To(true)), ext(shoot.ExtensionACL, `{"rule":{}}`, ptr.To(true))}},
		{reason: "one someone removed comes back at its generated place",
			current: []gardencorev1beta1.Extension{ext(shoot.ExtensionNetworkingFilter, "", nil), ext(shoot.ExtensionOIDC, "", nil),
				ext("foreign", "", nil)},
			generated: []gardencorev1beta1.Extension{ext(shoot.ExtensionNetworkingFilter, "", nil), ext(shoot.ExtensionCert, "", nil),
				ext(shoot.ExtensionOIDC, "", nil)},
			want: []gardencorev1beta1.Extension{ext(shoot.ExtensionNetworkingFilter, "", nil), ext(shoot.ExtensionCert, "", nil),
				ext(shoot.ExtensionOIDC, "", nil), ext("foreign", "", nil)}},
		{reason: "the first generated one the shoot lacks goes before the generated ones",
			current:   []gardencorev1beta1.Extension{ext("foreign", "", nil), ext(shoot.ExtensionOIDC, "", nil)},
			generated: []gardencorev1beta1.Extension{ext(shoot.ExtensionNetworkingFilter, "", nil), ext(shoot.ExtensionOIDC, "", nil)},
			want: []gardencorev1beta1.Extension{ext("foreign", "", nil), ext(shoot.ExtensionNetworkingFilter, "", nil),
				ext(shoot.ExtensionOIDC, "", nil)}},
		{reason: "a current config that is no JSON object is replaced",
			current:   []gardencorev1beta1.Extension{ext(shoot.ExtensionCert, `[1]`, nil)},
			generated: []gardencorev1beta1.Extension{ext(shoot.ExtensionCert, `{}`, nil)},
			want:      []gardencorev1beta1.Extension{ext(shoot.ExtensionCert, `{}`, nil)}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			got := mergeExtensions(tc.current, tc.generated, tc.kept)
			if diff := cmp.Diff(goldenshoots.ExtensionsText(t, tc.want), goldenshoots.ExtensionsText(t, got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestUpdateKeepsThePreviousManagersRegistryCredentials: an adopted runtime's spec.imageRegistryCache still as the
// previous manager's registry cache controller wrote it (the entry names the Secret in the runtime), and its shoot
// referencing the previous manager's garden copy reg-cache-<uuid> (resource and Secret of that name): the update
// changes neither the extension nor spec.resources, and does not fail the Runtime as referencing a foreign Secret.
func TestUpdateKeepsThePreviousManagersRegistryCredentials(t *testing.T) {
	const copyName = "reg-cache-3f8a2c1e-6b7d-4e5f-9a0b-1c2d3e4f5a6b"
	cr, _ := poolRuntime(t, "")
	cr.Spec.ImageRegistryCache = []imv1.ImageRegistryCache{{Name: "docker", Namespace: "team", UID: "u1",
		Config: imv1.RegistryCacheConfig{Upstream: "docker.io", SecretReferenceName: ptr.To(copyName)}}}
	rt := mapping.Runtime(cr)
	rt.RegistryCredentialCopies = []string{copyName}
	spec, err := shoot.Generate(rt, adapterConfig())
	if err != nil {
		t.Fatal(err)
	}
	prev, err := ToShoot(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := previous.Render(prev); err != nil {
		t.Fatal(err)
	}

	cr.Spec.ImageRegistryCache[0].Config.SecretReferenceName = ptr.To("creds-in-runtime")
	cur, err := CurrentFromShoot(prev)
	if err != nil {
		t.Fatal(err)
	}
	update, err := shoot.GenerateUpdate(mapping.Runtime(cr), adapterConfig(), cur)
	if err != nil {
		t.Fatalf("update of the adopted shoot: %v", err)
	}
	got, err := ApplySpec(prev, update)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(goldenshoots.ExtensionsText(t, prev.Spec.Extensions), goldenshoots.ExtensionsText(t, got.Spec.Extensions)); diff != "" {
		t.Errorf("extensions changed (-previous +after update):\n%s", diff)
	}
	if diff := cmp.Diff(prev.Spec.Resources, got.Spec.Resources); diff != "" {
		t.Errorf("spec.resources changed (-previous +after update):\n%s", diff)
	}
}
