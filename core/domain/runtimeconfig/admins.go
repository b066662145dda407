package runtimeconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// AdminBinding is the ClusterRoleBinding that makes User a cluster-admin of the runtime.
type AdminBinding struct {
	Name string
	User string
}

// AdminBindingName is the name of the binding of user: stable, valid for any user ID, and distinct from the
// previous system's generated names (admin-<5 characters>).
func AdminBindingName(user string) string {
	sum := sha256.Sum256([]byte(user))
	return AdminBindingPrefix + hex.EncodeToString(sum[:8])
}

// reservedUserPrefix starts the user names Kubernetes gives its own identities (system:anonymous,
// system:unauthenticated, system:kube-controller-manager): binding one of them to cluster-admin would open the
// cluster to anyone or to a component, never to a person.
const reservedUserPrefix = "system:"

// ReservedAdministrators are the administrator names that are not bound: empty ones and those Kubernetes reserves,
// each once, in their order. KEB sends any strings, so admission takes them and the configuration refuses them.
func ReservedAdministrators(users []string) []string {
	var out []string
	for _, u := range users {
		if (u == "" || strings.HasPrefix(u, reservedUserPrefix)) && !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out
}

// AdministratorsOutcome is the outcome of binding the administrators once every binding holds: reason
// AdministratorNamesReserved, naming what was not bound (at most five names), when some names were refused.
func AdministratorsOutcome(bound int, reserved []string) Outcome {
	if len(reserved) == 0 {
		return Done(ReasonAdministratorsConfigured, fmt.Sprintf("%d administrators are bound to cluster-admin.", bound))
	}
	shown := reserved[:min(len(reserved), 5)]
	quoted := make([]string, len(shown))
	for i, u := range shown {
		quoted[i] = fmt.Sprintf("%q", u)
	}
	more := ""
	if len(reserved) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(reserved)-len(shown))
	}
	return Done(ReasonAdministratorNamesReserved, fmt.Sprintf("%d administrators are bound to cluster-admin; not bound: %s%s "+
		"(empty, or starting with %s, which Kubernetes reserves for its own identities): correct spec.security.administrators.",
		bound, strings.Join(quoted, ", "), more, reservedUserPrefix))
}

// BoundAdministrators is the number of bindings users get: each distinct name that is not reserved.
func BoundAdministrators(users []string) int { return len(adminBindings(users)) }

// adminBindings are the bindings of the administrators, sorted by name, each user once; reserved names (see
// ReservedAdministrators) get none.
func adminBindings(users []string) []AdminBinding {
	seen := map[string]bool{}
	var out []AdminBinding
	for _, u := range users {
		if u == "" || strings.HasPrefix(u, reservedUserPrefix) || seen[u] {
			continue
		}
		seen[u] = true
		out = append(out, AdminBinding{Name: AdminBindingName(u), User: u})
	}
	slices.SortFunc(out, func(a, b AdminBinding) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// Subject is a subject of a ClusterRoleBinding.
type Subject struct {
	Kind     string
	APIGroup string
	Name     string
	// Namespace is set for service accounts.
	Namespace string
}

// ObservedBinding is a ClusterRoleBinding found in the runtime.
type ObservedBinding struct {
	Name string
	// Managed is true when it carries LabelManagedBy=ManagedByValue.
	Managed  bool
	RoleKind string
	RoleName string
	Subjects []Subject
}

// userSubject is the subject of an administrator's binding.
func userSubject(user string) Subject {
	return Subject{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}
}

// isAdminBinding reports whether b binds only users to cluster-admin: the shape of the bindings the operator (and
// the system before it) wrote. A labelled binding of another shape is left alone.
func (b ObservedBinding) isAdminBinding() bool {
	if b.RoleKind != "ClusterRole" || b.RoleName != ClusterAdminRole || len(b.Subjects) == 0 {
		return false
	}
	for _, s := range b.Subjects {
		if s.Kind != "User" {
			return false
		}
	}
	return true
}

// BindingPlan is what to write, in this order: Recreate (bindings under the operator's names with another role:
// the role of a binding cannot change, so it is deleted and created again), Apply (create, or correct labels and
// subjects), then Delete (the operator's bindings no administrator needs any more). Every administrator who keeps
// access keeps a binding throughout: new names are written before old ones go.
type BindingPlan struct {
	Recreate []AdminBinding
	Apply    []AdminBinding
	Delete   []string
}

// PlanBindings compares the bindings found in the runtime (those labelled as the operator's, plus any found under
// a desired name) with the desired ones.
func PlanBindings(observed []ObservedBinding, desired []AdminBinding) BindingPlan {
	byName := map[string]ObservedBinding{}
	for _, o := range observed {
		byName[o.Name] = o
	}
	var plan BindingPlan
	want := map[string]bool{}
	for _, d := range desired {
		want[d.Name] = true
		o, ok := byName[d.Name]
		switch {
		case !ok:
			plan.Apply = append(plan.Apply, d)
		case o.RoleKind != "ClusterRole" || o.RoleName != ClusterAdminRole:
			plan.Recreate = append(plan.Recreate, d)
		case !o.Managed || !slices.Equal(o.Subjects, []Subject{userSubject(d.User)}):
			// Someone else's binding under our name, or other subjects: corrected, not trusted.
			plan.Apply = append(plan.Apply, d)
		}
	}
	for _, o := range observed {
		if o.Managed && !want[o.Name] && o.isAdminBinding() {
			plan.Delete = append(plan.Delete, o.Name)
		}
	}
	slices.Sort(plan.Delete)
	return plan
}

// Empty reports whether the plan writes nothing.
func (p BindingPlan) Empty() bool { return len(p.Recreate)+len(p.Apply)+len(p.Delete) == 0 }

// Empty reports whether the plan writes nothing.
func (p OIDCPlan) Empty() bool { return len(p.Apply)+len(p.Delete) == 0 }
