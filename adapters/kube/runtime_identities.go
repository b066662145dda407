package kube

import (
	"cmp"
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// DefaultRuntimeCallTimeout bounds one call of RuntimeIdentities (a few requests, each bounded by the runtime
// clients' request timeout).
const DefaultRuntimeCallTimeout = 30 * time.Second

// RuntimeIdentities implements ports.RuntimeIdentities with the admin kubeconfig Secrets the GardenerCluster
// controller keeps in KCP, reaching the runtimes through the runtime clients (the configurator's clients: the same
// admin kubeconfig, so the same cached client).
type RuntimeIdentities struct {
	// KCP reads the admin kubeconfig Secrets: an uncached reader (the manager's cache holds Secrets without their
	// data, see SecretCacheTransform; a cached copy reads as holding no kubeconfig).
	KCP client.Reader
	// Clients reach the runtimes (required for every call but Endpoint).
	Clients *RuntimeClients
	// CallTimeout bounds each port call (zero: DefaultRuntimeCallTimeout).
	CallTimeout time.Duration
}

var _ ports.RuntimeIdentities = (*RuntimeIdentities)(nil)

// adminKubeconfig reads the runtime's admin kubeconfig from the KCP namespace of rt. The port's classes: a missing
// or empty Secret is ErrNoRuntimeKubeconfig (and unreachable), a failed read ErrTransient.
func (r *RuntimeIdentities) adminKubeconfig(ctx context.Context, rt ports.RuntimeRef) ([]byte, error) {
	s := &corev1.Secret{}
	name := kubeconfig.SecretName(rt.RuntimeID)
	err := r.KCP.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: name}, s)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("secret %s/%s not found: %w: %w", rt.Namespace, name, ports.ErrNoRuntimeKubeconfig, ports.ErrRuntimeUnreachable)
	case err != nil:
		return nil, fmt.Errorf("read Secret %s/%s: %w: %w", rt.Namespace, name, ports.ErrTransient, err)
	case len(s.Data[kubeconfig.SecretKey]) == 0:
		return nil, fmt.Errorf("secret %s/%s holds no kubeconfig: %w: %w", rt.Namespace, name, ports.ErrNoRuntimeKubeconfig, ports.ErrRuntimeUnreachable)
	}
	return s.Data[kubeconfig.SecretKey], nil
}

// Endpoint implements ports.RuntimeIdentities.
func (r *RuntimeIdentities) Endpoint(ctx context.Context, rt ports.RuntimeRef) (sakubeconfig.Endpoint, error) {
	kc, err := r.adminKubeconfig(ctx, rt)
	if err != nil {
		return sakubeconfig.Endpoint{}, err
	}
	cfg, err := restConfigOf(rt.RuntimeID, kc)
	if err != nil {
		return sakubeconfig.Endpoint{}, fmt.Errorf("admin %w", err)
	}
	if len(cfg.CAData) == 0 {
		return sakubeconfig.Endpoint{}, fmt.Errorf("admin kubeconfig of runtime %s has no certificate-authority-data: %w", rt.RuntimeID, ports.ErrRuntimeUnreachable)
	}
	return sakubeconfig.Endpoint{Server: cfg.Host, CAData: cfg.CAData}, nil
}

// session is a client of one runtime for the duration of one port call.
type session struct {
	cs typedClients
	rt ports.RuntimeRef
}

// open takes the runtime's client and bounds the call by CallTimeout. Callers defer the returned function.
func (r *RuntimeIdentities) open(ctx context.Context, rt ports.RuntimeRef) (context.Context, *session, context.CancelFunc, error) {
	kc, err := r.adminKubeconfig(ctx, rt)
	if err != nil {
		return ctx, nil, func() {}, err
	}
	c, err := r.Clients.forKubeconfig(rt.RuntimeID, kc)
	if err != nil {
		return ctx, nil, func() {}, fmt.Errorf("admin %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(r.CallTimeout, DefaultRuntimeCallTimeout))
	return ctx, &session{cs: c.core, rt: rt}, cancel, nil
}

// fail maps the classification of a failed request (answerOf) to the port's classes: no answer and credentials
// not accepted are unreachable; a server that cannot serve now, throttling, server errors and conflicts are
// transient; other answers keep their status.
func (s *session) fail(op string, err error) error {
	switch answer := answerOf(err); {
	case answer == notAuthorized:
		return fmt.Errorf("%s in runtime %s: the admin credentials were not accepted: %w: %w", op, s.rt.RuntimeID, ports.ErrRuntimeUnreachable, err)
	case answer == noAnswer:
		return fmt.Errorf("%s in runtime %s: %w: %w", op, s.rt.RuntimeID, ports.ErrRuntimeUnreachable, err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s in runtime %s: %w: %w", op, s.rt.RuntimeID, ports.ErrForbidden, err)
	case answer == notNow || apierrors.IsTooManyRequests(err) || apierrors.IsInternalError(err) || apierrors.IsConflict(err) ||
		apierrors.IsUnexpectedServerError(err):
		return fmt.Errorf("%s in runtime %s: %w: %w", op, s.rt.RuntimeID, ports.ErrTransient, err)
	}
	return fmt.Errorf("%s in runtime %s: %w", op, s.rt.RuntimeID, err)
}

// ClusterRoleRules implements ports.RuntimeIdentities.
func (r *RuntimeIdentities) ClusterRole(ctx context.Context, rt ports.RuntimeRef, name string) (sakubeconfig.ClusterRole, error) {
	ctx, s, cancel, err := r.open(ctx, rt)
	defer cancel()
	if err != nil {
		return sakubeconfig.ClusterRole{}, err
	}
	role, err := s.cs.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return sakubeconfig.ClusterRole{}, fmt.Errorf("ClusterRole %s in runtime %s: %w", name, rt.RuntimeID, ports.ErrClusterRoleNotFound)
	}
	if err != nil {
		return sakubeconfig.ClusterRole{}, s.fail("read ClusterRole "+name, err)
	}
	out := sakubeconfig.ClusterRole{Rules: make([]sakubeconfig.Rule, 0, len(role.Rules)), Aggregated: role.AggregationRule != nil}
	for _, p := range role.Rules {
		out.Rules = append(out.Rules, sakubeconfig.Rule{APIGroups: p.APIGroups, Resources: p.Resources, ResourceNames: p.ResourceNames,
			Verbs: p.Verbs, NonResourceURLs: p.NonResourceURLs})
	}
	return out, nil
}

// IssueToken implements ports.RuntimeIdentities.
func (r *RuntimeIdentities) IssueToken(ctx context.Context, rt ports.RuntimeRef, sa sakubeconfig.ServiceAccount, validity time.Duration) (ports.IssuedToken, error) {
	ctx, s, cancel, err := r.open(ctx, rt)
	defer cancel()
	if err != nil {
		return ports.IssuedToken{}, err
	}
	seconds := int64(validity / time.Second)
	tr, err := s.cs.CoreV1().ServiceAccounts(sa.Namespace).CreateToken(ctx, sa.Name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if apierrors.IsNotFound(err) {
		return ports.IssuedToken{}, fmt.Errorf("TokenRequest for %s in runtime %s: no such ServiceAccount: %w", sa, rt.RuntimeID, ports.ErrTransient)
	}
	if err != nil {
		return ports.IssuedToken{}, s.fail("TokenRequest for "+sa.String(), err)
	}
	if tr.Status.Token == "" {
		return ports.IssuedToken{}, fmt.Errorf("TokenRequest for %s in runtime %s returned no token: %w", sa, rt.RuntimeID, ports.ErrTransient)
	}
	return ports.IssuedToken{Token: tr.Status.Token, ExpiresAt: tr.Status.ExpirationTimestamp.Time}, nil
}

// Remove implements ports.RuntimeIdentities.
func (r *RuntimeIdentities) Remove(ctx context.Context, rt ports.RuntimeRef, owner sakubeconfig.Owner) (bool, error) {
	ctx, s, cancel, err := r.open(ctx, rt)
	defer cancel()
	if err != nil {
		return false, err
	}
	have, err := s.owned(ctx, owner)
	if err != nil {
		return false, err
	}
	if len(have) == 0 {
		return true, nil
	}
	for _, ref := range have {
		if err := s.delete(ctx, ref); err != nil {
			return false, err
		}
	}
	left, err := s.owned(ctx, owner)
	return err == nil && len(left) == 0, err
}

// owned lists the objects labelled for owner, bindings first, then roles, then ServiceAccounts: the order in
// which they are deleted, so the ServiceAccount never keeps permissions it should lose and goes last.
func (s *session) owned(ctx context.Context, owner sakubeconfig.Owner) ([]sakubeconfig.ObjectRef, error) {
	sel := metav1.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{sakubeconfig.LabelOwner: owner.Key()}).String()}
	rbac := s.cs.RbacV1()
	lists := []struct {
		kind string
		list func() ([]sakubeconfig.ObjectRef, error)
	}{
		{sakubeconfig.KindClusterRoleBinding, func() ([]sakubeconfig.ObjectRef, error) {
			l, err := rbac.ClusterRoleBindings().List(ctx, sel)
			return refsOf(sakubeconfig.KindClusterRoleBinding, l, err)
		}},
		{sakubeconfig.KindRoleBinding, func() ([]sakubeconfig.ObjectRef, error) {
			l, err := rbac.RoleBindings("").List(ctx, sel)
			return refsOf(sakubeconfig.KindRoleBinding, l, err)
		}},
		{sakubeconfig.KindClusterRole, func() ([]sakubeconfig.ObjectRef, error) {
			l, err := rbac.ClusterRoles().List(ctx, sel)
			return refsOf(sakubeconfig.KindClusterRole, l, err)
		}},
		{sakubeconfig.KindRole, func() ([]sakubeconfig.ObjectRef, error) {
			l, err := rbac.Roles("").List(ctx, sel)
			return refsOf(sakubeconfig.KindRole, l, err)
		}},
		{sakubeconfig.KindServiceAccount, func() ([]sakubeconfig.ObjectRef, error) {
			l, err := s.cs.CoreV1().ServiceAccounts("").List(ctx, sel)
			return refsOf(sakubeconfig.KindServiceAccount, l, err)
		}},
	}
	var out []sakubeconfig.ObjectRef
	for _, l := range lists {
		refs, err := l.list()
		if err != nil {
			return nil, s.fail("list "+l.kind+"s", err)
		}
		out = append(out, refs...)
	}
	return out, nil
}

// refsOf names the items of a list (nil and err when the list failed).
func refsOf(kind string, list runtime.Object, err error) ([]sakubeconfig.ObjectRef, error) {
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]sakubeconfig.ObjectRef, 0, len(items))
	for _, it := range items {
		o, err := meta.Accessor(it)
		if err != nil {
			return nil, err
		}
		out = append(out, sakubeconfig.ObjectRef{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()})
	}
	return out, nil
}
