package runtimeconfig

// Bootstrap is the landscape's optional set of manifests applied into Namespace of every runtime (off unless the
// operator configuration names them), as loaded from KCP.
type Bootstrap struct {
	// Source names where the manifests come from (namespace/name of the KCP ConfigMap), for messages.
	Source string
	// Objects are the manifests, one object each as JSON, in the order they are applied. Namespaced objects are
	// placed in Namespace whatever their metadata says.
	Objects []BootstrapObject
	// PullSecret is copied into Namespace before the objects (nil: none).
	PullSecret *PullSecret
	// Problem says why the manifests cannot be used (not YAML, an object without kind or name, a missing pull
	// secret): nothing is applied and the runtime reports BootstrapManifestsInvalid, but nothing else waits for it.
	Problem string
}

// BootstrapObject is one manifest.
type BootstrapObject struct {
	APIVersion string
	Kind       string
	Name       string
	// JSON is the whole object.
	JSON []byte
}

// PullSecret is an image pull secret of the landscape (kubernetes.io/dockerconfigjson).
type PullSecret struct {
	Name string
	Type string
	Data map[string][]byte
}

// Deployments are the names of the Deployments among the objects: the bootstrap is done when all are available.
func (b *Bootstrap) Deployments() []string {
	if b == nil {
		return nil
	}
	var out []string
	for _, o := range b.Objects {
		if o.Kind == "Deployment" && (o.APIVersion == "apps/v1") {
			out = append(out, o.Name)
		}
	}
	return out
}
