package sakubeconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// Owner identifies the ServiceAccountKubeconfig (namespace and name in the KCP) that a runtime identity belongs to.
type Owner struct {
	Namespace, Name string
}

// String renders the owner as namespace/name, as the owner annotation records it.
func (o Owner) String() string { return o.Namespace + "/" + o.Name }

// Key is a short stable digest of the owner, usable as a label value (owner names can be longer than 63
// characters) and in object names.
func (o Owner) Key() string {
	sum := sha256.Sum256([]byte(o.String()))
	return hex.EncodeToString(sum[:8])
}

// ServiceAccount names a ServiceAccount in a runtime.
type ServiceAccount struct {
	Namespace, Name string
}

// Username is the name the runtime's API server authenticates the ServiceAccount's tokens as (and writes into its
// audit log).
func (s ServiceAccount) Username() string {
	return "system:serviceaccount:" + s.Namespace + ":" + s.Name
}

// String renders the ServiceAccount as namespace/name.
func (s ServiceAccount) String() string { return s.Namespace + "/" + s.Name }

// Rule is one permission of a request, in the shape of an RBAC policy rule plus where it applies.
type Rule struct {
	// Namespaces the rule applies in; empty means cluster-wide.
	Namespaces []string
	// APIGroups, Resources, ResourceNames and Verbs as in an RBAC PolicyRule ("" is the core group, "*" all).
	APIGroups, Resources, ResourceNames, Verbs []string
	// NonResourceURLs of a rule of a bound ClusterRole as read from the runtime (a request's own rules have none).
	NonResourceURLs []string
}

// ClusterRoleRef binds an existing ClusterRole of the runtime to the ServiceAccount.
type ClusterRoleRef struct {
	// Name of the ClusterRole in the runtime.
	Name string
	// Namespaces the ClusterRole is bound in (RoleBindings); empty binds it cluster-wide (a ClusterRoleBinding).
	Namespaces []string
}

// Request is what a ServiceAccountKubeconfig asks for.
type Request struct {
	Owner Owner
	// Generation is the owner's metadata.generation (the spec version the request describes).
	Generation int64
	// RuntimeID names the runtime; its admin kubeconfig is the Secret kubeconfig-<RuntimeID> in Owner.Namespace.
	RuntimeID      string
	ServiceAccount ServiceAccount
	Rules          []Rule
	// ClusterRole is nil when no existing ClusterRole is bound.
	ClusterRole *ClusterRoleRef
	// Validity is the lifetime requested for each token.
	Validity time.Duration
	// SecretName is the Secret in Owner.Namespace that receives the kubeconfig (key SecretKey).
	SecretName string
	// Force asks for a new token now (the force-rotation annotation).
	Force bool
}

// Bounds of a token's validity. The TokenRequest API refuses less than ten minutes; the upper bound keeps a leaked
// kubeconfig short-lived.
const (
	MinValidity     = 10 * time.Minute
	MaxValidity     = 7 * 24 * time.Hour
	DefaultValidity = 24 * time.Hour
)

// SecretKey is the data key of the kubeconfig in its Secret, as for admin kubeconfigs.
const SecretKey = "config"
