package catalogue

import (
	"fmt"

	"github.com/Masterminds/semver/v3"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Objects returns the API objects of the catalogue in creation order (namespace and project first).
func (c Catalogue) Objects() ([]client.Object, error) {
	if c.Project == "" {
		return nil, fmt.Errorf("catalogue: project name is empty")
	}
	ns := c.ProjectNamespace()
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{
			"project.gardener.cloud/name": c.Project,
			"gardener.cloud/role":         "project",
		}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "garden"}},
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: seedDNSSecretRef().Name, Namespace: seedDNSSecretRef().Namespace},
			StringData: map[string]string{"sandbox": "no real DNS credentials"},
		},
		c.project(),
	}
	objs = append(objs, c.referencedObjects()...)
	// Registrations first: the admission rejects seeds and shoots of types nobody registered.
	objs = append(objs, c.controllerRegistrations()...)
	for _, p := range c.Providers {
		cp, err := c.cloudProfile(p)
		if err != nil {
			return nil, err
		}
		objs = append(objs, cp)
		for _, r := range p.Regions {
			objs = append(objs, seed(p.Type, r.Name))
		}
		for _, name := range p.CredentialsBindings {
			objs = append(objs,
				&corev1.Secret{
					ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"provider.shoot.gardener.cloud/" + p.Type: "true"}},
					StringData: map[string]string{"sandbox": "no real cloud credentials: machines are simulated"},
				},
				&securityv1alpha1.CredentialsBinding{
					ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: ns},
					Provider:       securityv1alpha1.CredentialsBindingProvider{Type: p.Type},
					CredentialsRef: corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Name: name, Namespace: ns},
				})
		}
	}
	return objs, nil
}

func (c Catalogue) project() *gardencorev1beta1.Project {
	p := &gardencorev1beta1.Project{
		ObjectMeta: metav1.ObjectMeta{Name: c.Project},
		Spec:       gardencorev1beta1.ProjectSpec{Namespace: ptr.To(c.ProjectNamespace())},
	}
	if len(c.ProjectTolerations) > 0 {
		p.Spec.Tolerations = &gardencorev1beta1.ProjectTolerations{}
		for _, key := range c.ProjectTolerations {
			p.Spec.Tolerations.Whitelist = append(p.Spec.Tolerations.Whitelist, gardencorev1beta1.Toleration{Key: key})
		}
	}
	return p
}

// minimalAuditPolicy logs request metadata only: enough for the gardener-apiserver, which checks that the
// referenced ConfigMap holds a decodable audit policy.
const minimalAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
`

// referencedObjects are the objects shoots reference by name besides cloud profile and credentials:
// exposure classes, and Secrets and ConfigMaps in the project namespace.
func (c Catalogue) referencedObjects() []client.Object {
	ns := c.ProjectNamespace()
	var out []client.Object
	for _, name := range c.ExposureClasses {
		out = append(out, &gardencorev1beta1.ExposureClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: name})
	}
	for _, name := range c.Secrets {
		out = append(out, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			StringData: map[string]string{"sandbox": "placeholder: nothing in the sandbox calls the real service"},
		})
	}
	for _, name := range c.AuditPolicyConfigMaps {
		out = append(out, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Data:       map[string]string{"policy": minimalAuditPolicy},
		})
	}
	return out
}

func (c Catalogue) cloudProfile(p Provider) (*gardencorev1beta1.CloudProfile, error) {
	spec := gardencorev1beta1.CloudProfileSpec{Type: p.Type}
	for _, v := range c.KubernetesVersions {
		spec.Kubernetes.Versions = append(spec.Kubernetes.Versions, gardencorev1beta1.ExpirableVersion{
			// Lifecycle, Classification's successor, needs the alpha gate VersionClassificationLifecycle (off in v1.149).
			Version: v, Classification: ptr.To(classification(v, c.KubernetesVersions))}) //nolint:staticcheck // see above
	}
	// Every image supports the additional container runtimes (gVisor): Gardener accepts a pool's runtime only when
	// its image version lists it.
	var runtimes []gardencorev1beta1.ContainerRuntime
	for _, t := range c.ContainerRuntimeTypes {
		runtimes = append(runtimes, gardencorev1beta1.ContainerRuntime{Type: t})
	}
	for _, img := range c.MachineImages {
		mi := gardencorev1beta1.MachineImage{Name: img.Name, UpdateStrategy: ptr.To(gardencorev1beta1.UpdateStrategyMajor)}
		for _, v := range img.Versions {
			mi.Versions = append(mi.Versions, gardencorev1beta1.MachineImageVersion{
				//nolint:staticcheck // Classification: Lifecycle needs the alpha gate VersionClassificationLifecycle (off in v1.149)
				ExpirableVersion: gardencorev1beta1.ExpirableVersion{Version: v, Classification: ptr.To(gardencorev1beta1.ClassificationSupported)},
				CRI:              []gardencorev1beta1.CRI{{Name: gardencorev1beta1.CRINameContainerD, ContainerRuntimes: runtimes}},
				Architectures:    []string{"amd64", "arm64"},
			})
		}
		spec.MachineImages = append(spec.MachineImages, mi)
	}
	for _, mt := range p.MachineTypes {
		q, err := machineType(mt)
		if err != nil {
			return nil, fmt.Errorf("cloud profile %s: %w", p.CloudProfile, err)
		}
		spec.MachineTypes = append(spec.MachineTypes, q)
	}
	for _, vt := range p.VolumeTypes {
		spec.VolumeTypes = append(spec.VolumeTypes, gardencorev1beta1.VolumeType{Name: vt, Class: "standard", Usable: ptr.To(true)})
	}
	for _, r := range p.Regions {
		region := gardencorev1beta1.Region{Name: r.Name}
		for _, a := range r.AccessRestrictions {
			region.AccessRestrictions = append(region.AccessRestrictions, gardencorev1beta1.AccessRestriction{Name: a})
		}
		for _, z := range r.Zones {
			region.Zones = append(region.Zones, gardencorev1beta1.AvailabilityZone{Name: z})
		}
		spec.Regions = append(spec.Regions, region)
	}
	return &gardencorev1beta1.CloudProfile{ObjectMeta: metav1.ObjectMeta{Name: p.CloudProfile}, Spec: spec}, nil
}

// classification marks the newest patch of each minor "supported" and older patches "deprecated":
// Gardener allows only one supported version per minor.
func classification(version string, all []string) gardencorev1beta1.VersionClassification {
	v, err := semver.NewVersion(version)
	if err != nil {
		return gardencorev1beta1.ClassificationSupported // validation of the profile reports the bad version
	}
	for _, other := range all {
		o, err := semver.NewVersion(other)
		if err == nil && o.Major() == v.Major() && o.Minor() == v.Minor() && o.GreaterThan(v) {
			return gardencorev1beta1.ClassificationDeprecated
		}
	}
	return gardencorev1beta1.ClassificationSupported
}

func machineType(mt MachineType) (gardencorev1beta1.MachineType, error) {
	cpu, err := resource.ParseQuantity(mt.CPU)
	if err != nil {
		return gardencorev1beta1.MachineType{}, fmt.Errorf("machine type %s: cpu %q: %w", mt.Name, mt.CPU, err)
	}
	mem, err := resource.ParseQuantity(mt.Memory)
	if err != nil {
		return gardencorev1beta1.MachineType{}, fmt.Errorf("machine type %s: memory %q: %w", mt.Name, mt.Memory, err)
	}
	gpu := resource.MustParse("0")
	if mt.GPU != "" {
		if gpu, err = resource.ParseQuantity(mt.GPU); err != nil {
			return gardencorev1beta1.MachineType{}, fmt.Errorf("machine type %s: gpu %q: %w", mt.Name, mt.GPU, err)
		}
	}
	return gardencorev1beta1.MachineType{
		Name: mt.Name, CPU: cpu, Memory: mem, GPU: gpu, Usable: ptr.To(true), Architecture: ptr.To("amd64"),
	}, nil
}

// sandboxDNS is the DNS provider type of the seeds (registered as DNSRecord type, never called).
const sandboxDNS = "sandbox-dns"

// seedDNSSecretRef points to the (dummy) DNS credentials of all seeds in namespace "garden".
func seedDNSSecretRef() *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Name: "seed-dns", Namespace: "garden"}
}

// seed is a minimal Seed of the given provider and region, labelled with the region so that
// `spec.seedSelector` with `seed.gardener.cloud/region` finds it.
func seed(providerType, region string) *gardencorev1beta1.Seed {
	return &gardencorev1beta1.Seed{
		ObjectMeta: metav1.ObjectMeta{
			Name:   SeedName(providerType, region),
			Labels: map[string]string{"seed.gardener.cloud/region": region, "seed.gardener.cloud/provider": providerType},
		},
		Spec: gardencorev1beta1.SeedSpec{
			Provider: gardencorev1beta1.SeedProvider{Type: providerType, Region: region},
			// Outside the ranges KEB gives shoots (10.x): Gardener rejects shoots overlapping their seed.
			Networks: gardencorev1beta1.SeedNetworks{Nodes: ptr.To("172.16.0.0/16"), Pods: "100.64.0.0/12", Services: "100.112.0.0/13"},
			DNS: gardencorev1beta1.SeedDNS{
				Provider: &gardencorev1beta1.SeedDNSProvider{Type: sandboxDNS, CredentialsRef: seedDNSSecretRef()},
				Internal: &gardencorev1beta1.SeedDNSProviderConfig{Type: sandboxDNS, Domain: "internal." + SeedName(providerType, region) + ".sandbox.local", CredentialsRef: *seedDNSSecretRef()},
			},
			Ingress: &gardencorev1beta1.Ingress{
				Domain:     "ingress." + SeedName(providerType, region) + ".sandbox.local",
				Controller: gardencorev1beta1.IngressController{Kind: "nginx"},
			},
			Settings: &gardencorev1beta1.SeedSettings{Scheduling: &gardencorev1beta1.SeedSettingScheduling{Visible: true}},
		},
	}
}

func (c Catalogue) controllerRegistrations() []client.Object {
	var out []client.Object
	reg := func(name string, res ...gardencorev1beta1.ControllerResource) {
		out = append(out, &gardencorev1beta1.ControllerRegistration{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       gardencorev1beta1.ControllerRegistrationSpec{Resources: res},
		})
	}
	res := func(kind, typ string) gardencorev1beta1.ControllerResource {
		return gardencorev1beta1.ControllerResource{Kind: kind, Type: typ, Primary: ptr.To(true)}
	}
	for _, p := range c.Providers {
		reg("provider-"+p.Type,
			res("ControlPlane", p.Type), res("Infrastructure", p.Type), res("Worker", p.Type),
			res("BackupBucket", p.Type), res("BackupEntry", p.Type), res("Bastion", p.Type))
	}
	for _, t := range c.NetworkingTypes {
		reg("networking-"+t, res("Network", t))
	}
	for _, img := range c.MachineImages {
		reg("os-"+img.Name, res("OperatingSystemConfig", img.Name))
	}
	dns := []gardencorev1beta1.ControllerResource{res("DNSRecord", sandboxDNS)}
	for _, t := range c.DNSProviderTypes {
		dns = append(dns, res("DNSRecord", t))
	}
	reg("dns-records", dns...)
	for _, t := range c.ContainerRuntimeTypes {
		reg("runtime-"+t, res("ContainerRuntime", t))
	}
	for _, t := range c.ExtensionTypes {
		r := res("Extension", t)
		r.WorkerlessSupported = ptr.To(true)
		reg("extension-"+t, r)
	}
	return out
}
