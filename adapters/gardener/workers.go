package gardener

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// overlayWorker lays the top-level fields of raw (a pool in Gardener's Worker JSON, as KEB sent it) over w: a
// field KEB sent replaces w's, a field it did not send stays as w has it.
func overlayWorker(w *gardencorev1beta1.Worker, raw []byte) error {
	if len(raw) == 0 {
		return nil
	}
	base, err := json.Marshal(w)
	if err != nil {
		return fmt.Errorf("encode pool: %w", err)
	}
	var merged, sent map[string]json.RawMessage
	if err := json.Unmarshal(base, &merged); err != nil {
		return fmt.Errorf("decode pool: %w", err)
	}
	if err := json.Unmarshal(raw, &sent); err != nil {
		return fmt.Errorf("decode the pool KEB sent: %w", err)
	}
	for k, v := range sent {
		merged[k] = v
	}
	out, err := json.Marshal(merged)
	if err != nil {
		return fmt.Errorf("encode pool: %w", err)
	}
	var next gardencorev1beta1.Worker
	if err := json.Unmarshal(out, &next); err != nil {
		return fmt.Errorf("decode merged pool: %w", err)
	}
	*w = next
	return nil
}

// containerRuntimes sets the CRI name and makes sure every runtime of the pool is listed; runtimes with config
// flags (gVisor) get them merged into their provider config, keeping other settings KEB sent.
func containerRuntimes(gw *gardencorev1beta1.Worker, w shoot.Worker) error {
	if w.CRI == "" && len(w.ContainerRuntimes) == 0 {
		return nil
	}
	if gw.CRI == nil {
		gw.CRI = &gardencorev1beta1.CRI{Name: gardencorev1beta1.CRINameContainerD}
	}
	if w.CRI != "" {
		gw.CRI.Name = gardencorev1beta1.CRIName(w.CRI)
	}
	for _, cr := range w.ContainerRuntimes {
		i := slices.IndexFunc(gw.CRI.ContainerRuntimes, func(c gardencorev1beta1.ContainerRuntime) bool { return c.Type == cr.Type })
		if i < 0 {
			gw.CRI.ContainerRuntimes = append(gw.CRI.ContainerRuntimes, gardencorev1beta1.ContainerRuntime{Type: cr.Type})
			i = len(gw.CRI.ContainerRuntimes) - 1
		}
		if len(cr.ConfigFlags) == 0 {
			continue
		}
		cfg, err := raw(gvisorConfiguration{typeMeta: typeMeta{gvisorAPIVersion, "GVisorConfiguration"}, ConfigFlags: cr.ConfigFlags})
		if err != nil {
			return err
		}
		merged, err := mergeRaw(gw.CRI.ContainerRuntimes[i].ProviderConfig, cfg)
		if err != nil {
			return fmt.Errorf("container runtime %s: %w", cr.Type, err)
		}
		gw.CRI.ContainerRuntimes[i].ProviderConfig = merged
	}
	return nil
}

// machineControllerManager sets the pool's drain timeout and eviction retries the domain settled on.
func machineControllerManager(gw *gardencorev1beta1.Worker, w shoot.Worker) {
	if w.MachineDrainTimeout == "" && w.MaxEvictRetries == nil {
		return
	}
	if gw.MachineControllerManagerSettings == nil {
		gw.MachineControllerManagerSettings = &gardencorev1beta1.MachineControllerManagerSettings{}
	}
	m := gw.MachineControllerManagerSettings
	if d, err := time.ParseDuration(w.MachineDrainTimeout); err == nil && w.MachineDrainTimeout != "" {
		m.MachineDrainTimeout = &metav1.Duration{Duration: d}
	}
	if w.MaxEvictRetries != nil {
		m.MaxEvictRetries = ptr.To(*w.MaxEvictRetries)
	}
}
