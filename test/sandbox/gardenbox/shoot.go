package gardenbox

import (
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// NewShoot returns a Shoot for the given provider type that the gardener-apiserver accepts with this
// environment's catalogue: the provider's first region, zone, machine type and volume type, the newest
// kubernetes minor's first listed version, calico networking and the provider's first CredentialsBinding.
// Tests adjust it before creating it.
func (e *Env) NewShoot(name, providerType string) (*gardencorev1beta1.Shoot, error) {
	p, ok := e.Catalogue.Provider(providerType)
	if !ok || len(p.Regions) == 0 || len(p.MachineTypes) == 0 || len(p.CredentialsBindings) == 0 {
		return nil, fmt.Errorf("catalogue has no usable provider %q", providerType)
	}
	region := p.Regions[0]
	worker := gardencorev1beta1.Worker{
		Name:           "cpu-worker-0",
		Machine:        gardencorev1beta1.Machine{Type: p.MachineTypes[0].Name, Image: &gardencorev1beta1.ShootMachineImage{Name: e.Catalogue.MachineImages[0].Name}},
		Minimum:        1,
		Maximum:        3,
		MaxSurge:       ptr.To(intstr.FromInt32(1)),
		MaxUnavailable: ptr.To(intstr.FromInt32(0)),
		Zones:          region.Zones[:1],
	}
	if len(p.VolumeTypes) > 0 {
		worker.Volume = &gardencorev1beta1.Volume{Type: ptr.To(p.VolumeTypes[0]), VolumeSize: "50Gi"}
	}
	return &gardencorev1beta1.Shoot{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.Catalogue.ProjectNamespace()},
		Spec: gardencorev1beta1.ShootSpec{
			CloudProfile:           &gardencorev1beta1.CloudProfileReference{Kind: "CloudProfile", Name: p.CloudProfile},
			CredentialsBindingName: ptr.To(p.CredentialsBindings[0]),
			Region:                 region.Name,
			Kubernetes:             gardencorev1beta1.Kubernetes{Version: e.Catalogue.KubernetesVersions[len(e.Catalogue.KubernetesVersions)-1]},
			Networking: &gardencorev1beta1.Networking{Type: ptr.To("calico"),
				Nodes: ptr.To("10.250.0.0/16"), Pods: ptr.To("10.96.0.0/13"), Services: ptr.To("10.104.0.0/13")},
			Provider: gardencorev1beta1.Provider{Type: p.Type, Workers: []gardencorev1beta1.Worker{worker}},
			Purpose:  ptr.To(gardencorev1beta1.ShootPurposeEvaluation),
		},
	}, nil
}
