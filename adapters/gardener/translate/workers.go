package translate

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

// containerRuntimes sets the CRI name and makes the pool's additional runtimes exactly the Runtime's: KEB is
// their only source (it sends no cri at all when gVisor is switched off, and Gardener defaults none), so a runtime
// the Runtime no longer lists goes, as it went under the previous manager, which replaced whole pools. Runtimes the
// pool keeps stay in its order with their provider config; config flags the domain settled on (gVisor's) are merged
// into it, keeping other settings.
func containerRuntimes(gw *gardencorev1beta1.Worker, w shoot.Worker) error {
	if len(w.ContainerRuntimes) == 0 {
		if gw.CRI != nil {
			gw.CRI.ContainerRuntimes = nil
		}
		if w.CRI == "" {
			return nil
		}
	}
	if gw.CRI == nil {
		gw.CRI = &gardencorev1beta1.CRI{Name: gardencorev1beta1.CRINameContainerD}
	}
	if w.CRI != "" {
		gw.CRI.Name = gardencorev1beta1.CRIName(w.CRI)
	}
	listed := func(t string) bool {
		return slices.ContainsFunc(w.ContainerRuntimes, func(cr shoot.ContainerRuntime) bool { return cr.Type == t })
	}
	gw.CRI.ContainerRuntimes = slices.DeleteFunc(gw.CRI.ContainerRuntimes, func(c gardencorev1beta1.ContainerRuntime) bool { return !listed(c.Type) })
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
	if len(gw.CRI.ContainerRuntimes) == 0 {
		gw.CRI.ContainerRuntimes = nil
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
