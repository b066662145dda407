package fake

// Helpers that play people, Gardener and the runtime's API server on the in-memory runtimes.

import (
	"maps"
	"slices"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
)

// SetUnreachable makes the runtime's API server stop (or resume) answering.
func (r *RuntimeConfigurator) SetUnreachable(runtimeID string, unreachable bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runtime(runtimeID).unreachable = unreachable
}

// ServeOIDC plays shoot-oidc-service installing (or not) its CRD in the runtime.
func (r *RuntimeConfigurator) ServeOIDC(runtimeID string, serve bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runtime(runtimeID).serveOIDC = serve
}

// Namespace reports whether the namespace exists in the runtime.
func (r *RuntimeConfigurator) Namespace(runtimeID, name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runtime(runtimeID).namespaces[name]
}

// ConfigMap returns the data and labels of a ConfigMap in the runtime.
func (r *RuntimeConfigurator) ConfigMap(runtimeID, namespace, name string) (data, labels map[string]string, found bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cm, ok := r.runtime(runtimeID).configMaps[namespace+"/"+name]
	return maps.Clone(cm.data), maps.Clone(cm.labels), ok
}

// DeleteConfigMap plays someone deleting a ConfigMap by hand.
func (r *RuntimeConfigurator) DeleteConfigMap(runtimeID, namespace, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.runtime(runtimeID).configMaps, namespace+"/"+name)
}

// OIDC returns every OpenIDConnect resource of the runtime, sorted by name.
func (r *RuntimeConfigurator) OIDC(runtimeID string) []runtimeconfig.ObservedOIDC {
	r.mu.Lock()
	defer r.mu.Unlock()
	return byName(r.runtime(runtimeID).oidc)
}

// PutOIDC plays someone writing an OpenIDConnect resource (Managed: with the operator's label).
func (r *RuntimeConfigurator) PutOIDC(runtimeID string, o runtimeconfig.ObservedOIDC) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runtime(runtimeID).oidc[o.Name] = o
}

// DeleteOIDC plays someone deleting an OpenIDConnect resource by hand.
func (r *RuntimeConfigurator) DeleteOIDC(runtimeID, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.runtime(runtimeID).oidc, name)
}

// Bindings returns every ClusterRoleBinding of the runtime, sorted by name.
func (r *RuntimeConfigurator) Bindings(runtimeID string) []runtimeconfig.ObservedBinding {
	r.mu.Lock()
	defer r.mu.Unlock()
	return byName(r.runtime(runtimeID).bindings)
}

// byName returns the values of m in the order of their keys (names).
func byName[T any](m map[string]T) []T {
	out := make([]T, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

// PutBinding plays someone (a person, the previous system) writing a ClusterRoleBinding.
func (r *RuntimeConfigurator) PutBinding(runtimeID string, b runtimeconfig.ObservedBinding) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runtime(runtimeID).bindings[b.Name] = b
}

// DeleteBinding plays someone deleting a ClusterRoleBinding by hand.
func (r *RuntimeConfigurator) DeleteBinding(runtimeID, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.runtime(runtimeID).bindings, name)
}

// Admins returns the users bound to cluster-admin in the runtime, sorted.
func (r *RuntimeConfigurator) Admins(runtimeID string) []string {
	var out []string
	for _, b := range r.Bindings(runtimeID) {
		if b.RoleName != runtimeconfig.ClusterAdminRole {
			continue
		}
		for _, s := range b.Subjects {
			if s.Kind == "User" {
				out = append(out, s.Name)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// BootstrapObject reports whether a bootstrap object (by kind) exists in the namespace of the runtime.
func (r *RuntimeConfigurator) BootstrapObject(runtimeID, kind, namespace, name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.runtime(runtimeID).objects[kind+"/"+namespace+"/"+name]
	return ok
}

// ReplaceBootstrapObject plays someone else deleting a bootstrap object and creating one of the same name without
// the operator's bootstrap label.
func (r *RuntimeConfigurator) ReplaceBootstrapObject(runtimeID, kind, namespace, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runtime(runtimeID).objects[kind+"/"+namespace+"/"+name] = memObject{}
}

// PullSecret reports whether the pull secret was copied into the namespace of the runtime.
func (r *RuntimeConfigurator) PullSecret(runtimeID, namespace, name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.runtime(runtimeID).secrets[namespace+"/"+name]
	return ok
}

// SetDeploymentAvailable plays the runtime's controllers making a Deployment available.
func (r *RuntimeConfigurator) SetDeploymentAvailable(runtimeID, namespace, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runtime(runtimeID).available[namespace+"/"+name] = true
}

// BootstrapObjectJSON returns a bootstrap object as last applied (nil when there is none).
func (r *RuntimeConfigurator) BootstrapObjectJSON(runtimeID, kind, namespace, name string) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.runtime(runtimeID).objects[kind+"/"+namespace+"/"+name].json)
}

// FailBootstrap plays the runtime refusing to take the bootstrap manifests (an admission webhook inside it, a quota):
// while on, applying them fails with ReasonBootstrapFailed before anything is written.
func (r *RuntimeConfigurator) FailBootstrap(runtimeID string, fail bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runtime(runtimeID).bootstrapFault = fail
}

// BootstrapPasses counts the configurations that applied (or tried to apply) bootstrap manifests in the runtime:
// every one of them also corrects drift and prunes.
func (r *RuntimeConfigurator) BootstrapPasses(runtimeID string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runtime(runtimeID).bootstrapPasses
}
