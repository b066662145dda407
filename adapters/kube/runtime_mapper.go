package kube

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// knownKindsFirst maps the kinds the self-service adapters use in runtimes without asking the runtime, and other
// kinds through next (controller-runtime's lazy discovery mapper). Discovery would otherwise run for every client
// RuntimeClients builds (a new runtime, a rotated kubeconfig, a client idled out): two requests (/api and the
// aggregated /apis, every group and resource of the cluster) whose size the customer controls through the CRDs and
// API services they install, outside any budget of the call.
type knownKindsFirst struct {
	known *meta.DefaultRESTMapper
	next  meta.RESTMapper
}

var _ meta.RESTMapper = knownKindsFirst{}

// newKnownKindsFirst maps Secrets, Namespaces, RegistryCacheConfigGVK, KymaGVK and CRDs statically in front of next.
func newKnownKindsFirst(next meta.RESTMapper) knownKindsFirst {
	known := meta.NewDefaultRESTMapper(nil)
	known.Add(schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, meta.RESTScopeNamespace)
	known.Add(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, meta.RESTScopeRoot)
	known.Add(RegistryCacheConfigGVK, meta.RESTScopeNamespace)
	known.Add(KymaGVK, meta.RESTScopeNamespace)
	known.Add(crdGVK, meta.RESTScopeRoot)
	return knownKindsFirst{known: known, next: next}
}

// KindFor implements meta.RESTMapper.
func (m knownKindsFirst) KindFor(r schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	if k, err := m.known.KindFor(r); err == nil {
		return k, nil
	}
	return m.next.KindFor(r)
}

// KindsFor implements meta.RESTMapper.
func (m knownKindsFirst) KindsFor(r schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	if k, err := m.known.KindsFor(r); err == nil {
		return k, nil
	}
	return m.next.KindsFor(r)
}

// ResourceFor implements meta.RESTMapper.
func (m knownKindsFirst) ResourceFor(r schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	if g, err := m.known.ResourceFor(r); err == nil {
		return g, nil
	}
	return m.next.ResourceFor(r)
}

// ResourcesFor implements meta.RESTMapper.
func (m knownKindsFirst) ResourcesFor(r schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	if g, err := m.known.ResourcesFor(r); err == nil {
		return g, nil
	}
	return m.next.ResourcesFor(r)
}

// RESTMapping implements meta.RESTMapper.
func (m knownKindsFirst) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if r, err := m.known.RESTMapping(gk, versions...); err == nil {
		return r, nil
	}
	return m.next.RESTMapping(gk, versions...)
}

// RESTMappings implements meta.RESTMapper.
func (m knownKindsFirst) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	if r, err := m.known.RESTMappings(gk, versions...); err == nil {
		return r, nil
	}
	return m.next.RESTMappings(gk, versions...)
}

// ResourceSingularizer implements meta.RESTMapper.
func (m knownKindsFirst) ResourceSingularizer(resource string) (string, error) {
	if s, err := m.known.ResourceSingularizer(resource); err == nil {
		return s, nil
	}
	return m.next.ResourceSingularizer(resource)
}
