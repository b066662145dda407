package kube

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
)

// configureBindings makes the operator's cluster-admin bindings match the administrators: it lists the bindings
// labelled as the operator's, writes what the plan says, new names first, and removes obsolete ones last. A
// binding under a desired name that the list did not show (not labelled) is taken over by the apply; if its role
// differs (the role of a binding cannot change) it is deleted and written again.
func configureBindings(ctx context.Context, c *runtimeClient, d runtimeconfig.Desired) runtimeconfig.Outcome {
	api := c.core.RbacV1().ClusterRoleBindings()
	list, err := api.List(ctx, metav1.ListOptions{LabelSelector: runtimeconfig.LabelManagedBy + "=" + runtimeconfig.ManagedByValue})
	if err != nil {
		return outcome(err, runtimeconfig.ReasonConfigurationError, "list admin ClusterRoleBindings")
	}
	observed := make([]runtimeconfig.ObservedBinding, 0, len(list.Items))
	for i := range list.Items {
		observed = append(observed, ObserveBinding(&list.Items[i]))
	}
	plan := runtimeconfig.PlanBindings(observed, d.Administrators)
	recreate := func(b runtimeconfig.AdminBinding) error {
		if err := api.Delete(ctx, b.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		_, err := api.Apply(ctx, AdminBindingApply(b), applyOptions())
		return err
	}
	for _, b := range plan.Recreate {
		if err := recreate(b); err != nil {
			return outcome(err, runtimeconfig.ReasonConfigurationError, "recreate ClusterRoleBinding "+b.Name)
		}
	}
	for _, b := range plan.Apply {
		_, err := api.Apply(ctx, AdminBindingApply(b), applyOptions())
		if isInvalid(err) { // someone's binding under our name with another role
			err = recreate(b)
		}
		if err != nil {
			return outcome(err, runtimeconfig.ReasonConfigurationError, "apply ClusterRoleBinding "+b.Name)
		}
	}
	for _, name := range plan.Delete {
		if err := api.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return outcome(err, runtimeconfig.ReasonConfigurationError, "delete ClusterRoleBinding "+name)
		}
	}
	return runtimeconfig.AdministratorsOutcome(len(d.Administrators), d.ReservedAdministrators)
}

// AdminBindingApply is the binding of an administrator to cluster-admin, labelled as the operator's.
func AdminBindingApply(b runtimeconfig.AdminBinding) *rbacv1ac.ClusterRoleBindingApplyConfiguration {
	return rbacv1ac.ClusterRoleBinding(b.Name).
		WithLabels(map[string]string{runtimeconfig.LabelManagedBy: runtimeconfig.ManagedByValue}).
		WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("ClusterRole").WithName(runtimeconfig.ClusterAdminRole)).
		WithSubjects(rbacv1ac.Subject().WithAPIGroup(rbacv1.GroupName).WithKind(rbacv1.UserKind).WithName(b.User))
}

// ObserveBinding reads a ClusterRoleBinding into the domain's terms.
func ObserveBinding(b *rbacv1.ClusterRoleBinding) runtimeconfig.ObservedBinding {
	out := runtimeconfig.ObservedBinding{Name: b.Name, Managed: b.Labels[runtimeconfig.LabelManagedBy] == runtimeconfig.ManagedByValue,
		RoleKind: b.RoleRef.Kind, RoleName: b.RoleRef.Name}
	for _, s := range b.Subjects {
		out.Subjects = append(out.Subjects, runtimeconfig.Subject{Kind: s.Kind, APIGroup: s.APIGroup, Name: s.Name, Namespace: s.Namespace})
	}
	return out
}

func isInvalid(err error) bool { return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) }
