// Package sakubeconfig holds the pure rules of least-privilege kubeconfigs: a ServiceAccountKubeconfig asks for one
// ServiceAccount identity in a runtime with the permissions its rules name, and gets a kubeconfig with a short-lived
// token of that ServiceAccount. The package decides what is refused (the no-escalation policy), which objects the
// identity needs in the runtime (ServiceAccount, Roles, ClusterRoles, bindings, their names and labels), when a token
// is issued (the rotation policy of core/domain/kubeconfig), how the kubeconfig and its Secret look, and when a
// deletion may let go. It reads no clock and imports only the standard library and core.
package sakubeconfig
