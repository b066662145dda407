package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// Default bounds of the calls to runtime API servers.
const (
	// DefaultRuntimeRequestTimeout bounds one request to a runtime API server.
	DefaultRuntimeRequestTimeout = 10 * time.Second
	// DefaultRuntimeCallTimeout bounds one port call (a few requests).
	DefaultRuntimeCallTimeout = 30 * time.Second
)

// RuntimeIdentities implements ports.RuntimeIdentities with the admin kubeconfig Secrets the GardenerCluster
// controller keeps in KCP. It builds a client per call with its own transport (closed afterwards): calls happen at
// rotations and spec changes, rarely enough that keeping connections per runtime would only hold memory, and
// client-go's shared transport cache would keep one entry per admin certificate ever used.
type RuntimeIdentities struct {
	// KCP reads the admin kubeconfig Secrets: an uncached reader (the manager's cache holds Secrets without their
	// data, see SecretCacheTransform; a cached copy reads as holding no kubeconfig).
	KCP client.Reader
	// RequestTimeout and CallTimeout bound each request and each port call (zero: the defaults).
	RequestTimeout, CallTimeout time.Duration
}

var _ ports.RuntimeIdentities = (*RuntimeIdentities)(nil)

// adminConfig reads and parses the runtime's admin kubeconfig.
func (r *RuntimeIdentities) adminConfig(ctx context.Context, rt ports.RuntimeRef) (*rest.Config, error) {
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
	cfg, err := clientcmd.RESTConfigFromKubeConfig(s.Data[kubeconfig.SecretKey])
	if err != nil {
		return nil, fmt.Errorf("admin kubeconfig of runtime %s: %w: %w", rt.RuntimeID, ports.ErrRuntimeUnreachable, err)
	}
	return cfg, nil
}

// Endpoint implements ports.RuntimeIdentities.
func (r *RuntimeIdentities) Endpoint(ctx context.Context, rt ports.RuntimeRef) (sakubeconfig.Endpoint, error) {
	cfg, err := r.adminConfig(ctx, rt)
	if err != nil {
		return sakubeconfig.Endpoint{}, err
	}
	if len(cfg.CAData) == 0 {
		return sakubeconfig.Endpoint{}, fmt.Errorf("admin kubeconfig of runtime %s has no certificate-authority-data: %w", rt.RuntimeID, ports.ErrRuntimeUnreachable)
	}
	return sakubeconfig.Endpoint{Server: cfg.Host, CAData: cfg.CAData}, nil
}

// session is a client of one runtime for the duration of one port call.
type session struct {
	cs    kubernetes.Interface
	rt    ports.RuntimeRef
	close func()
}

// open builds the client of a call and bounds the call by CallTimeout. Callers defer both returned functions.
func (r *RuntimeIdentities) open(ctx context.Context, rt ports.RuntimeRef) (context.Context, *session, context.CancelFunc, error) {
	cfg, err := r.adminConfig(ctx, rt)
	if err != nil {
		return ctx, nil, func() {}, err
	}
	cfg.Timeout = orDefault(r.RequestTimeout, DefaultRuntimeRequestTimeout)
	cfg.QPS, cfg.Burst = 20, 40
	cfg.UserAgent = "kim/serviceaccountkubeconfig"
	// A proxy function makes the transport uncacheable: it is this call's own and goes with it.
	cfg.Proxy = http.ProxyFromEnvironment
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return ctx, nil, func() {}, fmt.Errorf("client of runtime %s: %w: %w", rt.RuntimeID, ports.ErrRuntimeUnreachable, err)
	}
	cs, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		hc.CloseIdleConnections()
		return ctx, nil, func() {}, fmt.Errorf("client of runtime %s: %w: %w", rt.RuntimeID, ports.ErrRuntimeUnreachable, err)
	}
	ctx, cancel := context.WithTimeout(ctx, orDefault(r.CallTimeout, DefaultRuntimeCallTimeout))
	return ctx, &session{cs: cs, rt: rt, close: hc.CloseIdleConnections}, cancel, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// fail classifies an error of a request to the runtime: the server's answers by status, everything else (no
// answer, refused connection, timeouts) as unreachable.
func (s *session) fail(op string, err error) error {
	var status apierrors.APIStatus
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%s in runtime %s: the admin credentials were not accepted: %w: %w", op, s.rt.RuntimeID, ports.ErrRuntimeUnreachable, err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s in runtime %s: %w: %w", op, s.rt.RuntimeID, ports.ErrForbidden, err)
	case apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsInternalError(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsConflict(err) || apierrors.IsUnexpectedServerError(err):
		return fmt.Errorf("%s in runtime %s: %w: %w", op, s.rt.RuntimeID, ports.ErrTransient, err)
	case errors.As(err, &status):
		return fmt.Errorf("%s in runtime %s: %w", op, s.rt.RuntimeID, err)
	}
	return fmt.Errorf("%s in runtime %s: %w: %w", op, s.rt.RuntimeID, ports.ErrRuntimeUnreachable, err)
}

// ClusterRoleRules implements ports.RuntimeIdentities.
func (r *RuntimeIdentities) ClusterRole(ctx context.Context, rt ports.RuntimeRef, name string) (sakubeconfig.ClusterRole, error) {
	ctx, s, cancel, err := r.open(ctx, rt)
	defer cancel()
	if err != nil {
		return sakubeconfig.ClusterRole{}, err
	}
	defer s.close()
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
	defer s.close()
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
	defer s.close()
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
