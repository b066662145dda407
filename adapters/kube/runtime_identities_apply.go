package kube

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"

	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// Apply implements ports.RuntimeIdentities.
func (r *RuntimeIdentities) Apply(ctx context.Context, rt ports.RuntimeRef, objs sakubeconfig.Objects) error {
	ctx, s, cancel, err := r.open(ctx, rt)
	defer cancel()
	if err != nil {
		return err
	}
	want := map[sakubeconfig.ObjectRef]bool{}
	for _, ref := range objs.Refs() {
		want[ref] = true
		if err := s.checkOwned(ctx, objs.Owner, ref); err != nil {
			return err
		}
	}
	// Claimed namespaces are checked before anything is written, and again if one appears meanwhile.
	for _, ns := range objs.Claimed {
		if err := s.checkClaim(ctx, objs.Owner, ns); err != nil {
			return err
		}
	}
	for _, ns := range objs.Namespaces {
		if err := s.ensureNamespace(ctx, objs.Owner, ns, slices.Contains(objs.Claimed, ns)); err != nil {
			return err
		}
	}
	if err := s.apply(ctx, objs); err != nil {
		return err
	}
	have, err := s.owned(ctx, objs.Owner)
	if err != nil {
		return err
	}
	for _, ref := range have {
		if !want[ref] {
			if err := s.delete(ctx, ref); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkOwned refuses to touch an existing object that was not created for owner.
func (s *session) checkOwned(ctx context.Context, owner sakubeconfig.Owner, ref sakubeconfig.ObjectRef) error {
	var m metav1.Object
	var err error
	switch ref.Kind {
	case sakubeconfig.KindServiceAccount:
		m, err = s.cs.CoreV1().ServiceAccounts(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	case sakubeconfig.KindRole:
		m, err = s.cs.RbacV1().Roles(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	case sakubeconfig.KindClusterRole:
		m, err = s.cs.RbacV1().ClusterRoles().Get(ctx, ref.Name, metav1.GetOptions{})
	case sakubeconfig.KindRoleBinding:
		m, err = s.cs.RbacV1().RoleBindings(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	case sakubeconfig.KindClusterRoleBinding:
		m, err = s.cs.RbacV1().ClusterRoleBindings().Get(ctx, ref.Name, metav1.GetOptions{})
	default:
		return fmt.Errorf("unknown kind %s", ref.Kind)
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return s.fail("read "+ref.String(), err)
	}
	if err := sakubeconfig.CheckOwned(owner, ref, m.GetLabels(), m.GetAnnotations()); err != nil {
		return fmt.Errorf("runtime %s: %w: %w", s.rt.RuntimeID, ports.ErrRuntimeObjectNotOwned, err)
	}
	return nil
}

// checkClaim refuses a claimed namespace that exists and was not created for owner (a missing one is fine: it is
// created for owner).
func (s *session) checkClaim(ctx context.Context, owner sakubeconfig.Owner, ns string) error {
	got, err := s.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return s.fail("read namespace "+ns, err)
	}
	if err := sakubeconfig.CheckNamespaceCreatedFor(owner, ns, got.Annotations); err != nil {
		return fmt.Errorf("runtime %s: %w", s.rt.RuntimeID, err)
	}
	return nil
}

// ensureNamespace creates namespace ns when it is missing, labelled as the operator's and annotated as created for
// owner (never deleted by it). A claimed namespace that someone else created since checkClaim is refused.
func (s *session) ensureNamespace(ctx context.Context, owner sakubeconfig.Owner, ns string, claimed bool) error {
	_, err := s.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return s.fail("read namespace "+ns, err)
	}
	_, err = s.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
		Labels:      map[string]string{sakubeconfig.LabelManagedBy: sakubeconfig.ManagedByValue},
		Annotations: sakubeconfig.NamespaceAnnotations(owner)}}, metav1.CreateOptions{FieldManager: sakubeconfig.FieldManager})
	switch {
	case apierrors.IsAlreadyExists(err) && claimed:
		return s.checkClaim(ctx, owner, ns)
	case err != nil && !apierrors.IsAlreadyExists(err):
		return s.fail("create namespace "+ns, err)
	}
	return nil
}

// apply writes every object of objs with server-side apply: the ServiceAccount, then roles, then bindings (a
// binding never points at a role that does not exist yet).
func (s *session) apply(ctx context.Context, objs sakubeconfig.Objects) error {
	labels, annotations := sakubeconfig.Labels(objs.Owner), sakubeconfig.Annotations(objs.Owner)
	opts := metav1.ApplyOptions{FieldManager: sakubeconfig.FieldManager, Force: true}
	sa := objs.ServiceAccount
	if _, err := s.cs.CoreV1().ServiceAccounts(sa.Namespace).Apply(ctx,
		corev1ac.ServiceAccount(sa.Name, sa.Namespace).WithLabels(labels).WithAnnotations(annotations), opts); err != nil {
		return s.fail("apply ServiceAccount "+sa.String(), err)
	}
	rbac := s.cs.RbacV1()
	for _, role := range objs.Roles {
		var err error
		if role.Kind == sakubeconfig.KindClusterRole {
			_, err = rbac.ClusterRoles().Apply(ctx, rbacv1ac.ClusterRole(role.Name).WithLabels(labels).WithAnnotations(annotations).
				WithRules(policyRules(role.Rules)...), opts)
		} else {
			_, err = rbac.Roles(role.Namespace).Apply(ctx, rbacv1ac.Role(role.Name, role.Namespace).WithLabels(labels).WithAnnotations(annotations).
				WithRules(policyRules(role.Rules)...), opts)
		}
		if err != nil {
			return s.fail("apply "+role.String(), err)
		}
	}
	subject := rbacv1ac.Subject().WithKind(rbacv1.ServiceAccountKind).WithNamespace(sa.Namespace).WithName(sa.Name)
	for _, b := range objs.Bindings {
		ref := rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind(b.RoleKind).WithName(b.RoleName)
		var err error
		if b.Kind == sakubeconfig.KindClusterRoleBinding {
			_, err = rbac.ClusterRoleBindings().Apply(ctx, rbacv1ac.ClusterRoleBinding(b.Name).WithLabels(labels).WithAnnotations(annotations).
				WithRoleRef(ref).WithSubjects(subject), opts)
		} else {
			_, err = rbac.RoleBindings(b.Namespace).Apply(ctx, rbacv1ac.RoleBinding(b.Name, b.Namespace).WithLabels(labels).WithAnnotations(annotations).
				WithRoleRef(ref).WithSubjects(subject), opts)
		}
		if err != nil {
			return s.fail("apply "+b.String(), err)
		}
	}
	return nil
}

func policyRules(rules []sakubeconfig.Rule) []*rbacv1ac.PolicyRuleApplyConfiguration {
	out := make([]*rbacv1ac.PolicyRuleApplyConfiguration, 0, len(rules))
	for _, r := range rules {
		out = append(out, rbacv1ac.PolicyRule().WithAPIGroups(r.APIGroups...).WithResources(r.Resources...).
			WithResourceNames(r.ResourceNames...).WithVerbs(r.Verbs...))
	}
	return out
}

// delete removes one object; a missing one is fine.
func (s *session) delete(ctx context.Context, ref sakubeconfig.ObjectRef) error {
	var err error
	opts := metav1.DeleteOptions{}
	switch ref.Kind {
	case sakubeconfig.KindServiceAccount:
		err = s.cs.CoreV1().ServiceAccounts(ref.Namespace).Delete(ctx, ref.Name, opts)
	case sakubeconfig.KindRole:
		err = s.cs.RbacV1().Roles(ref.Namespace).Delete(ctx, ref.Name, opts)
	case sakubeconfig.KindClusterRole:
		err = s.cs.RbacV1().ClusterRoles().Delete(ctx, ref.Name, opts)
	case sakubeconfig.KindRoleBinding:
		err = s.cs.RbacV1().RoleBindings(ref.Namespace).Delete(ctx, ref.Name, opts)
	case sakubeconfig.KindClusterRoleBinding:
		err = s.cs.RbacV1().ClusterRoleBindings().Delete(ctx, ref.Name, opts)
	default:
		return fmt.Errorf("unknown kind %s", ref.Kind)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return s.fail("delete "+ref.String(), err)
	}
	return nil
}
