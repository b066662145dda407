// Package runtimeconfig decides what the operator keeps inside a runtime cluster: the kyma-system namespace, the
// kyma-provisioning-info ConfigMap other control-plane components read, one OpenIDConnect resource per customer OIDC
// issuer, a cluster-admin ClusterRoleBinding per administrator and, optionally, the landscape's bootstrap
// manifests. Compute turns a Runtime and what was observed of its shoot into the Desired state and its hash; the
// Plan* functions turn an observation of the runtime into the writes that reach the desired state in a safe order
// (an administrator never loses access while a binding is renamed). Adapters act; this package only decides, reads
// no clock and imports only the standard library, core/domain and a YAML encoder.
package runtimeconfig
