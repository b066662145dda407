package mapping

import (
	"encoding/json"
	"os"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/core/domain/shoot"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

func TestRuntimeFromKEBTrial(t *testing.T) {
	data, err := os.ReadFile("../../operator/api/v1/testdata/keb-runtime-trial.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cr imv1.Runtime
	if err := yaml.UnmarshalStrict(data, &cr); err != nil {
		t.Fatal(err)
	}
	got := Runtime(&cr)
	want := shoot.Runtime{
		ID: "91b7c0de-5e2f-4d3a-a6c1-0b8e7f6d5c43", GlobalAccountID: "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d",
		SubaccountID: "6f5e4d3c-2b1a-4f0e-9d8c-7b6a5f4e3d2c", Name: "c-91f0e7a", Purpose: "evaluation",
		PlatformRegion: "cf-eu10", Region: "eu-west-1", CredentialsBinding: "aws-trial-shared-01", KubernetesVersion: "1.33",
		OIDCGiven: true,
		OIDC: []shoot.OIDC{{
			IssuerURL: "https://kymatest.accounts400.ondemand.com", ClientID: "9bd05ed7-a930-44e6-8c79-e6defeb7dec9",
			UsernameClaim: "sub", UsernamePrefix: ptr.To("-"), GroupsClaim: "groups", GroupsPrefix: ptr.To("-"), SigningAlgs: []string{"RS256"},
		}},
		Provider: shoot.AWS,
		Workers: []shoot.Worker{{
			Name: "cpu-worker-0", MachineType: "m6i.xlarge", ImageName: "gardenlinux", Minimum: 1, Maximum: 1,
			MaxSurge: "1", MaxUnavailable: "0", VolumeType: "gp3", VolumeSize: "80Gi", Zones: []string{"eu-west-1a"},
			Raw: []byte(`{"name":"cpu-worker-0","machine":{"type":"m6i.xlarge","image":{"name":"gardenlinux","version":""}},` +
				`"maximum":1,"minimum":1,"maxSurge":1,"maxUnavailable":0,"volume":{"type":"gp3","size":"80Gi"},"zones":["eu-west-1a"]}`),
		}},
		Networking:     shoot.Networking{Type: "calico", Pods: "10.96.0.0/13", Nodes: "10.250.0.0/16", Services: "10.104.0.0/13"},
		Administrators: []string{"trial.user@example.com"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestOIDCAbsentEmptyAndLegacy(t *testing.T) {
	issuer := imv1.OIDCConfig{IssuerURL: ptr.To("https://c.example.com"), ClientID: ptr.To("c"), CABundle: ptr.To("PEM")}
	for _, tc := range []struct {
		reason     string
		additional *[]imv1.OIDCConfig
		legacy     imv1.OIDCConfig
		given      bool
		n          int
		legacySet  bool
	}{
		{"absent: not given, the domain uses the default", nil, imv1.OIDCConfig{}, false, 0, false},
		{"empty: given, no customer issuer", &[]imv1.OIDCConfig{}, imv1.OIDCConfig{}, true, 0, false},
		{"listed", &[]imv1.OIDCConfig{issuer}, imv1.OIDCConfig{}, true, 1, false},
		{"legacy oidcConfig with an issuer", nil, issuer, false, 0, true},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			cr := &imv1.Runtime{}
			cr.Spec.Shoot.Kubernetes.KubeAPIServer.AdditionalOidcConfig = tc.additional
			cr.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig = tc.legacy
			rt := Runtime(cr)
			if rt.OIDCGiven != tc.given || len(rt.OIDC) != tc.n || (rt.LegacyOIDC != nil) != tc.legacySet {
				t.Errorf("given=%v n=%d legacy=%v", rt.OIDCGiven, len(rt.OIDC), rt.LegacyOIDC)
			}
			for _, o := range append(rt.OIDC, ptr.Deref(rt.LegacyOIDC, shoot.OIDC{})) {
				if o.IssuerURL != "" && o.CABundle != "PEM" {
					t.Errorf("caBundle not carried: %+v", o)
				}
			}
		})
	}
}

func TestWorkerPassThroughAndNodeSettings(t *testing.T) {
	data := []byte(`{"name":"gvisor","machine":{"type":"m6i.large","architecture":"arm64"},"minimum":1,"maximum":2,
	  "cri":{"name":"containerd","containerRuntimes":[{"type":"gvisor","providerConfig":{"configFlags":{"net-raw":false,"debug":"true"}}}]},
	  "machineControllerManager":{"machineDrainTimeout":"45m","maxEvictRetries":9},"priority":3,"sysctls":{"net.ipv4.ip_forward":"1"}}`)
	var w gardencorev1beta1.Worker
	if err := json.Unmarshal(data, &w); err != nil {
		t.Fatal(err)
	}
	cr := &imv1.Runtime{}
	cr.Spec.Shoot.Provider.Workers = []gardencorev1beta1.Worker{w}
	cr.Spec.Shoot.EnableNvidiaOpenshell = ptr.To(true)
	rt := Runtime(cr)
	got := rt.Workers[0]
	if diff := cmp.Diff([]shoot.ContainerRuntime{{Type: "gvisor", ConfigFlags: map[string]string{"net-raw": "false", "debug": "true"}}}, got.ContainerRuntimes); diff != "" {
		t.Errorf("container runtimes (-want +got):\n%s", diff)
	}
	if got.MachineDrainTimeout != "45m0s" || ptr.Deref(got.MaxEvictRetries, 0) != 9 || got.CRI != "containerd" {
		t.Errorf("node settings: %+v", got)
	}
	var raw map[string]any
	if err := json.Unmarshal(got.Raw, &raw); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"priority", "sysctls", "cri", "machineControllerManager", "machine"} {
		if _, ok := raw[key]; !ok {
			t.Errorf("%s does not pass through: %s", key, got.Raw)
		}
	}
	if !rt.NvidiaOpenShell {
		t.Error("enableNvidiaOpenshell is not mapped")
	}
}

// TestExperimentalAuditPolicyAnnotation: the annotation is read in any case, as the previous infrastructure
// manager reads it; other values leave the configured policy.
func TestExperimentalAuditPolicyAnnotation(t *testing.T) {
	for value, want := range map[string]bool{"true": true, "TRUE": true, "True": true, "false": false, "yes": false, "": false} {
		cr := &imv1.Runtime{}
		cr.Annotations = map[string]string{imv1.AnnotationExperimentalAuditPolicy: value}
		if got := Runtime(cr).ExperimentalAuditPolicy; got != want {
			t.Errorf("annotation %q: experimental %v, want %v", value, got, want)
		}
	}
}

// The runtime ID is the Runtime's name, whatever the runtime-id label says: the shoot, the GardenerCluster and the
// kubeconfig Secret are keyed by the name.
func TestRuntimeIDIsTheName(t *testing.T) {
	cr := &imv1.Runtime{}
	cr.Name, cr.Labels = "5e1d0c2a-name", map[string]string{imv1.LabelRuntimeID: "other-label-value"}
	if got := Runtime(cr).ID; got != cr.Name || RuntimeID(cr) != cr.Name {
		t.Errorf("ID %q, RuntimeID %q; want the name %q", got, RuntimeID(cr), cr.Name)
	}
}
