package mapping

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/core/domain/shoot"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

func TestRuntimeFromKEBTrial(t *testing.T) {
	data, err := os.ReadFile("../api/v1/testdata/keb-runtime-trial.yaml")
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
		OIDC: []shoot.OIDC{{
			IssuerURL: "https://kymatest.accounts400.ondemand.com", ClientID: "9bd05ed7-a930-44e6-8c79-e6defeb7dec9",
			UsernameClaim: "sub", UsernamePrefix: ptr.To("-"), GroupsClaim: "groups", GroupsPrefix: ptr.To("-"), SigningAlgs: []string{"RS256"},
		}},
		Provider: shoot.AWS,
		Workers: []shoot.Worker{{
			Name: "cpu-worker-0", MachineType: "m6i.xlarge", ImageName: "gardenlinux", Minimum: 1, Maximum: 1,
			MaxSurge: "1", MaxUnavailable: "0", VolumeType: "gp3", VolumeSize: "80Gi", Zones: []string{"eu-west-1a"},
		}},
		Networking:     shoot.Networking{Type: "calico", Pods: "10.96.0.0/13", Nodes: "10.250.0.0/16", Services: "10.104.0.0/13"},
		Administrators: []string{"trial.user@example.com"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
