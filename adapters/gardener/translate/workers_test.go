package translate

import (
	"encoding/json"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/google/go-cmp/cmp"

	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/internal/mapping"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// passThroughFields are pool fields KEB sends that the operator does not own, each as KEB sends it (a JSON
// fragment of Gardener's Worker) and how the field reads back from the generated pool.
var passThroughFields = []struct {
	field string
	json  string
	read  func(w gardencorev1beta1.Worker) any
}{
	{"machine.architecture", `"machine":{"type":"m6i.large","architecture":"arm64"}`, func(w gardencorev1beta1.Worker) any { return w.Machine.Architecture }},
	{"providerConfig", `"providerConfig":{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"WorkerConfig","volume":{"iops":4000}}`,
		func(w gardencorev1beta1.Worker) any { return string(w.ProviderConfig.Raw) }},
	{"cri.containerRuntimes", `"cri":{"name":"containerd","containerRuntimes":[{"type":"kata"}]}`, func(w gardencorev1beta1.Worker) any { return w.CRI }},
	{"kubernetes.version", `"kubernetes":{"version":"1.32.9"}`, func(w gardencorev1beta1.Worker) any { return w.Kubernetes.Version }},
	{"dataVolumes", `"dataVolumes":[{"name":"images","size":"100Gi","type":"gp3"}]`, func(w gardencorev1beta1.Worker) any { return w.DataVolumes }},
	{"priority", `"priority":10`, func(w gardencorev1beta1.Worker) any { return w.Priority }},
	{"sysctls", `"sysctls":{"net.ipv4.tcp_keepalive_time":"300"}`, func(w gardencorev1beta1.Worker) any { return w.Sysctls }},
	{"updateStrategy", `"updateStrategy":"AutoInPlaceUpdate"`, func(w gardencorev1beta1.Worker) any { return w.UpdateStrategy }},
	{"machineControllerManager", `"machineControllerManager":{"machineHealthTimeout":"10m","maxEvictRetries":10}`,
		func(w gardencorev1beta1.Worker) any { return w.MachineControllerManagerSettings }},
	{"clusterAutoscaler", `"clusterAutoscaler":{"scaleDownUtilizationThreshold":0.6}`, func(w gardencorev1beta1.Worker) any { return w.ClusterAutoscaler }},
}

// poolRuntime is a Runtime whose only pool carries fragment in addition to what every pool has.
func poolRuntime(t *testing.T, fragment string) (*imv1.Runtime, gardencorev1beta1.Worker) {
	t.Helper()
	base := `{"name":"cpu-worker-0","machine":{"type":"m6i.large"},"minimum":1,"maximum":3,"zones":["eu-west-1a"]}`
	var w map[string]json.RawMessage
	if err := json.Unmarshal([]byte(base), &w); err != nil {
		t.Fatal(err)
	}
	var extra map[string]json.RawMessage
	if err := json.Unmarshal([]byte("{"+fragment+"}"), &extra); err != nil {
		t.Fatal(err)
	}
	for k, v := range extra {
		w[k] = v
	}
	data, _ := json.Marshal(w)
	var worker gardencorev1beta1.Worker
	if err := json.Unmarshal(data, &worker); err != nil {
		t.Fatal(err)
	}
	cr := &imv1.Runtime{}
	cr.Name = "rt-1"
	s := &cr.Spec.Shoot
	s.Name, s.Purpose, s.Region, s.SecretBindingName = "c-1234567", "production", "eu-west-1", "b"
	s.Provider.Type, s.Provider.Workers = "aws", []gardencorev1beta1.Worker{worker}
	s.Networking = imv1.Networking{Nodes: "10.250.0.0/16", Pods: "10.96.0.0/13", Services: "10.104.0.0/13"}
	return cr, worker
}

// TestWorkerFieldsPassThrough proves, field by field, that what KEB sends in a pool and the operator does not own
// reaches the shoot on create, and replaces a different value of an existing shoot on update.
func TestWorkerFieldsPassThrough(t *testing.T) {
	for _, f := range passThroughFields {
		t.Run(f.field, func(t *testing.T) {
			cr, sent := poolRuntime(t, f.json)
			want := f.read(sent)
			rt := mapping.Runtime(cr)
			spec, err := shoot.Generate(rt, adapterConfig())
			if err != nil {
				t.Fatal(err)
			}
			created, err := ToShoot(spec)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, f.read(created.Spec.Provider.Workers[0])); diff != "" {
				t.Errorf("create (-sent +shoot):\n%s", diff)
			}

			// An existing shoot whose pool has another value of every pass-through field: KEB's value wins.
			current := created.DeepCopy()
			current.Spec.Provider.Workers[0] = *otherPool(t, current.Spec.Provider.Workers[0])
			cur, err := CurrentFromShoot(current)
			if err != nil {
				t.Fatal(err)
			}
			spec, err = shoot.GenerateUpdate(rt, adapterConfig(), cur)
			if err != nil {
				t.Fatal(err)
			}
			updated, err := ApplySpec(current, spec)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, f.read(updated.Spec.Provider.Workers[0])); diff != "" {
				t.Errorf("update (-sent +shoot):\n%s", diff)
			}
		})
	}
}

// otherPool returns w with every pass-through field set to a value different from the test's.
func otherPool(t *testing.T, w gardencorev1beta1.Worker) *gardencorev1beta1.Worker {
	t.Helper()
	other := `{"machine":{"type":"m6i.large","architecture":"amd64"},
	  "providerConfig":{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"WorkerConfig","volume":{"iops":3000}},
	  "cri":{"name":"containerd"},"kubernetes":{"version":"1.31.1"},"dataVolumes":[{"name":"old","size":"10Gi"}],
	  "priority":1,"sysctls":{"vm.max_map_count":"262144"},"updateStrategy":"AutoRollingUpdate",
	  "machineControllerManager":{"machineHealthTimeout":"20m","maxEvictRetries":1},"clusterAutoscaler":{"scaleDownUtilizationThreshold":0.1}}`
	out := w.DeepCopy()
	if err := overlayWorker(out, []byte(other)); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTheRuntimeOwnsThePoolsContainerRuntimes: KEB switches gVisor off by sending the pool without cri (its
// ToGardenerCRI returns nil), so a runtime the Runtime no longer lists leaves the pool, while the CRI name and the
// provider config of a runtime still listed stay.
func TestTheRuntimeOwnsThePoolsContainerRuntimes(t *testing.T) {
	gvisor := `"cri":{"name":"containerd","containerRuntimes":[{"type":"gvisor"}]}`
	liveWithGVisor := `{"cri":{"name":"containerd","containerRuntimes":[{"type":"kata"},{"type":"gvisor","providerConfig":{"apiVersion":"gvisor.runtime.extensions.config.gardener.cloud/v1alpha1","kind":"GVisorConfiguration","configFlags":{"net-raw":"true","debug":"true"}}}]}}`
	for _, tc := range []struct {
		name, sent, live string
		want             *gardencorev1beta1.CRI
	}{
		{"gVisor switched off: the pool loses it and keeps its CRI name", "", liveWithGVisor,
			&gardencorev1beta1.CRI{Name: gardencorev1beta1.CRINameContainerD}},
		{"gVisor still on: a runtime the Runtime does not list goes, gVisor keeps its other flags", gvisor, liveWithGVisor,
			&gardencorev1beta1.CRI{Name: gardencorev1beta1.CRINameContainerD, ContainerRuntimes: []gardencorev1beta1.ContainerRuntime{{Type: "gvisor"}}}},
		{"no runtimes before or after: nothing added", "", `{"cri":{"name":"containerd"}}`,
			&gardencorev1beta1.CRI{Name: gardencorev1beta1.CRINameContainerD}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cr, _ := poolRuntime(t, tc.sent)
			rt := mapping.Runtime(cr)
			spec, err := shoot.Generate(rt, adapterConfig())
			if err != nil {
				t.Fatal(err)
			}
			created, err := ToShoot(spec)
			if err != nil {
				t.Fatal(err)
			}
			current := created.DeepCopy()
			if err := overlayWorker(&current.Spec.Provider.Workers[0], []byte(tc.live)); err != nil {
				t.Fatal(err)
			}
			cur, err := CurrentFromShoot(current)
			if err != nil {
				t.Fatal(err)
			}
			if spec, err = shoot.GenerateUpdate(rt, adapterConfig(), cur); err != nil {
				t.Fatal(err)
			}
			updated, err := ApplySpec(current, spec)
			if err != nil {
				t.Fatal(err)
			}
			got := updated.Spec.Provider.Workers[0].CRI.DeepCopy()
			if tc.sent != "" {
				// gVisor keeps the net-raw flag the landscape's node stability rule sets.
				if raw := string(got.ContainerRuntimes[0].ProviderConfig.Raw); !strings.Contains(raw, `"net-raw":"true"`) {
					t.Errorf("gVisor config %s lost net-raw", raw)
				}
			}
			for i := range got.ContainerRuntimes {
				got.ContainerRuntimes[i].ProviderConfig = nil // compared above
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("pool CRI (-want +got):\n%s", diff)
			}
		})
	}
}
