package sakubeconfig

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kyma-project/kim/core/domain/wire"
)

// Labels and annotations of everything the operator creates for a request: in the runtime (ServiceAccount, roles,
// bindings, namespaces it had to create) and the kubeconfig Secret in the KCP.
const (
	// LabelManagedBy and ManagedByValue mark objects the operator manages (the KCP cache selects Secrets by them).
	LabelManagedBy = wire.LabelManagedBy
	ManagedByValue = wire.ManagedByValue
	// LabelOwner is Owner.Key() of the request an object belongs to: how the operator finds its objects again.
	LabelOwner = "infrastructuremanager.kyma-project.io/serviceaccountkubeconfig"
	// AnnotationOwner is the owning ServiceAccountKubeconfig as <namespace>/<name>, for people and for the
	// ownership checks (the label is only a digest).
	AnnotationOwner = "infrastructuremanager.kyma-project.io/serviceaccountkubeconfig-owner"
	// FieldManager is the server-side-apply field manager of every write in a runtime.
	FieldManager = "kim"
)

// Kinds of runtime objects.
const (
	KindServiceAccount     = "ServiceAccount"
	KindRole               = "Role"
	KindClusterRole        = "ClusterRole"
	KindRoleBinding        = "RoleBinding"
	KindClusterRoleBinding = "ClusterRoleBinding"
)

// ObjectRef names one object in a runtime (Namespace is empty for cluster-scoped kinds).
type ObjectRef struct {
	Kind, Namespace, Name string
}

func (r ObjectRef) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// RoleObject is a Role (Namespace set) or ClusterRole with its rules (their Namespaces are not used).
type RoleObject struct {
	ObjectRef
	Rules []Rule
}

// BindingObject is a RoleBinding or ClusterRoleBinding of the request's ServiceAccount to a Role or ClusterRole.
type BindingObject struct {
	ObjectRef
	// RoleKind is KindRole or KindClusterRole; RoleName names it.
	RoleKind, RoleName string
}

// Objects is everything a request needs in its runtime.
type Objects struct {
	Owner          Owner
	ServiceAccount ServiceAccount
	// Namespaces must exist: the ServiceAccount's and every namespace a rule or binding names. Missing ones are
	// created (and never deleted: other things may come to live in them).
	Namespaces []string
	// Claimed are the Namespaces in which the request reaches Secrets, ServiceAccount tokens or workloads
	// (AccessPolicy.NamespaceClaims): each must not exist yet (it is created for the request, with
	// AnnotationCreatedFor) or must have been created for the request; otherwise nothing is written.
	Claimed  []string
	Roles    []RoleObject
	Bindings []BindingObject
}

// Refs lists the objects that belong to the request (not the namespaces), in a stable order: the ServiceAccount,
// roles, then bindings.
func (o Objects) Refs() []ObjectRef {
	out := []ObjectRef{{Kind: KindServiceAccount, Namespace: o.ServiceAccount.Namespace, Name: o.ServiceAccount.Name}}
	for _, r := range o.Roles {
		out = append(out, r.ObjectRef)
	}
	for _, b := range o.Bindings {
		out = append(out, b.ObjectRef)
	}
	return out
}

// Labels are the labels of every object of owner.
func Labels(owner Owner) map[string]string {
	return map[string]string{LabelManagedBy: ManagedByValue, LabelOwner: owner.Key()}
}

// Annotations are the annotations of every object of owner.
func Annotations(owner Owner) map[string]string {
	return map[string]string{AnnotationOwner: owner.String()}
}

// Desired returns the objects req needs: its ServiceAccount; one ClusterRole with the cluster-wide rules and a
// ClusterRoleBinding to it; per namespace one Role with the rules for that namespace and a RoleBinding to it; and
// the bindings of the referenced ClusterRole (cluster-wide, or per namespace). Names derive from the
// ServiceAccount's name and the owner, so two requests never share an object, and a binding's name includes the
// role it binds (a roleRef cannot change: another role means another binding).
func Desired(req Request) Objects {
	base := baseName(req.ServiceAccount.Name, req.Owner)
	o := Objects{Owner: req.Owner, ServiceAccount: req.ServiceAccount}
	namespaces := []string{req.ServiceAccount.Namespace}
	var cluster []Rule
	perNamespace := map[string][]Rule{}
	for _, r := range req.Rules {
		bare := Rule{APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames, Verbs: r.Verbs}
		if len(r.Namespaces) == 0 {
			cluster = append(cluster, bare)
			continue
		}
		for _, ns := range r.Namespaces {
			perNamespace[ns] = append(perNamespace[ns], bare)
		}
	}
	if len(cluster) > 0 {
		o.Roles = append(o.Roles, RoleObject{ObjectRef: ObjectRef{Kind: KindClusterRole, Name: base}, Rules: cluster})
		o.Bindings = append(o.Bindings, BindingObject{ObjectRef: ObjectRef{Kind: KindClusterRoleBinding, Name: base},
			RoleKind: KindClusterRole, RoleName: base})
	}
	for _, ns := range sortedKeys(perNamespace) {
		namespaces = append(namespaces, ns)
		o.Roles = append(o.Roles, RoleObject{ObjectRef: ObjectRef{Kind: KindRole, Namespace: ns, Name: base}, Rules: perNamespace[ns]})
		o.Bindings = append(o.Bindings, BindingObject{ObjectRef: ObjectRef{Kind: KindRoleBinding, Namespace: ns, Name: base},
			RoleKind: KindRole, RoleName: base})
	}
	if ref := req.ClusterRole; ref != nil {
		name := base + "-" + nameSafe(ref.Name, 40)
		if len(ref.Namespaces) == 0 {
			o.Bindings = append(o.Bindings, BindingObject{ObjectRef: ObjectRef{Kind: KindClusterRoleBinding, Name: name},
				RoleKind: KindClusterRole, RoleName: ref.Name})
		}
		for _, ns := range ref.Namespaces {
			namespaces = append(namespaces, ns)
			o.Bindings = append(o.Bindings, BindingObject{ObjectRef: ObjectRef{Kind: KindRoleBinding, Namespace: ns, Name: name},
				RoleKind: KindClusterRole, RoleName: ref.Name})
		}
	}
	slices.Sort(namespaces)
	o.Namespaces = slices.Compact(namespaces)
	return o
}

// baseName is kim-<ServiceAccount name>-<owner key>: recognisable for people, unique per owner.
func baseName(sa string, owner Owner) string {
	return "kim-" + nameSafe(sa, 40) + "-" + owner.Key()[:10]
}

// nameSafe shortens s to at most n characters of a DNS label ([a-z0-9-]); other characters become '-'.
func nameSafe(s string, n int) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		if b.Len() == n {
			break
		}
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Ownership errors: an object the request needs exists and is not the request's.
var (
	// ErrNotManaged: the object was not created by the operator (a ServiceAccount of the customer or of Kyma).
	ErrNotManaged = errors.New("the object exists and was not created by the operator")
	// ErrOtherOwner: the object was created for another ServiceAccountKubeconfig.
	ErrOtherOwner = errors.New("the object belongs to another ServiceAccountKubeconfig")
)

// CheckOwned decides whether an existing runtime object with these labels and annotations may be changed or deleted
// for owner: only objects created for exactly this owner may. Taking over a customer's ServiceAccount would give
// its workloads the request's permissions, and deleting it would break them.
func CheckOwned(owner Owner, ref ObjectRef, labels, annotations map[string]string) error {
	if labels[LabelManagedBy] != ManagedByValue || labels[LabelOwner] == "" {
		return fmt.Errorf("%w: %s", ErrNotManaged, ref)
	}
	if labels[LabelOwner] != owner.Key() || annotations[AnnotationOwner] != owner.String() {
		return fmt.Errorf("%w: %s belongs to %s", ErrOtherOwner, ref, annotations[AnnotationOwner])
	}
	return nil
}
