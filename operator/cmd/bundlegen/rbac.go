package main

import (
	"fmt"
	"os"
	"sort"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// permissions are the CSV's RBAC for the operator's service accounts, plus the RBAC objects that grant to someone
// else (editor/viewer roles, metrics reader) and therefore ship as plain bundle manifests.
type permissions struct {
	namespaced []operatorsv1alpha1.StrategyDeploymentPermissions
	cluster    []operatorsv1alpha1.StrategyDeploymentPermissions
	unbound    []*unstructured.Unstructured
}

type roleKey struct{ kind, name string }

// permissionsFor follows every binding whose subject is one of the deployments' service accounts: rules granted by
// a RoleBinding become `permissions` (OLM creates them in the install namespace), rules granted by a
// ClusterRoleBinding become `clusterPermissions`. This works for whatever `make manifests` generates from the
// controllers' RBAC markers, without a list of roles to keep in sync.
func permissionsFor(serviceAccounts []string, objs []*unstructured.Unstructured) (*permissions, error) {
	roles := map[roleKey]*unstructured.Unstructured{}
	var bindings []*unstructured.Unstructured
	for _, u := range objs {
		switch u.GetKind() {
		case "Role", "ClusterRole":
			roles[roleKey{u.GetKind(), u.GetName()}] = u
		case "RoleBinding", "ClusterRoleBinding":
			bindings = append(bindings, u)
		default:
			return nil, fmt.Errorf("unexpected RBAC kind %s %s", u.GetKind(), u.GetName())
		}
	}
	isOperatorSA := map[string]bool{}
	for _, sa := range serviceAccounts {
		isOperatorSA[sa] = true
	}
	namespaced := map[string][]rbacv1.PolicyRule{}
	cluster := map[string][]rbacv1.PolicyRule{}
	consumed := map[*unstructured.Unstructured]bool{}
	sort.SliceStable(bindings, func(i, j int) bool { return bindings[i].GetName() < bindings[j].GetName() })
	for _, u := range bindings {
		b := &rbacv1.ClusterRoleBinding{} // RoleBinding has the same shape
		if err := fromUnstructured(u, b); err != nil {
			return nil, err
		}
		var grantees []string
		for _, s := range b.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind && isOperatorSA[s.Name] {
				grantees = append(grantees, s.Name)
			}
		}
		if len(grantees) == 0 {
			continue
		}
		if len(grantees) != len(b.Subjects) {
			return nil, fmt.Errorf("%s %s binds the operator's service account together with other subjects; split it", u.GetKind(), u.GetName())
		}
		consumed[u] = true
		role, ok := roles[roleKey{b.RoleRef.Kind, b.RoleRef.Name}]
		if !ok {
			// e.g. the namespaced manager-role before any controller has a namespaced RBAC marker.
			fmt.Fprintf(os.Stderr, "bundlegen: %s %s references %s %s, which is not in the manifests; skipped\n",
				u.GetKind(), u.GetName(), b.RoleRef.Kind, b.RoleRef.Name)
			continue
		}
		consumed[role] = true
		rules, err := rulesOf(role)
		if err != nil {
			return nil, err
		}
		target := cluster
		if u.GetKind() == "RoleBinding" {
			target = namespaced
		}
		for _, sa := range grantees {
			target[sa] = append(target[sa], rules...)
		}
	}
	p := &permissions{namespaced: toStrategy(namespaced), cluster: toStrategy(cluster)}
	for _, u := range objs {
		if !consumed[u] {
			p.unbound = append(p.unbound, u)
		}
	}
	return p, nil
}

func rulesOf(u *unstructured.Unstructured) ([]rbacv1.PolicyRule, error) {
	r := &rbacv1.ClusterRole{} // Role has the same rules field
	if err := fromUnstructured(u, r); err != nil {
		return nil, err
	}
	return r.Rules, nil
}

func toStrategy(bySA map[string][]rbacv1.PolicyRule) []operatorsv1alpha1.StrategyDeploymentPermissions {
	names := make([]string, 0, len(bySA))
	for sa := range bySA {
		names = append(names, sa)
	}
	sort.Strings(names)
	out := make([]operatorsv1alpha1.StrategyDeploymentPermissions, 0, len(names))
	for _, sa := range names {
		out = append(out, operatorsv1alpha1.StrategyDeploymentPermissions{ServiceAccountName: sa, Rules: bySA[sa]})
	}
	return out
}
