package gardener

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	authenticationv1alpha1 "github.com/gardener/gardener/pkg/apis/authentication/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/ports"
)

// AdminKubeconfigIssuer issues admin kubeconfigs through the shoots/adminkubeconfig subresource of the
// gardener-apiserver. Each call is one POST; nothing is cached.
type AdminKubeconfigIssuer struct {
	client    client.Client
	namespace string
}

var _ ports.KubeconfigIssuer = (*AdminKubeconfigIssuer)(nil)

// NewAdminKubeconfigIssuer returns an issuer for the shoots in the project namespace (garden-<project>). The client's
// scheme must know Shoots and AdminKubeconfigRequests; NewIssuerClient builds such a client.
func NewAdminKubeconfigIssuer(c client.Client, namespace string) *AdminKubeconfigIssuer {
	return &AdminKubeconfigIssuer{client: c, namespace: namespace}
}

// NewIssuerClient returns an uncached client for the garden cluster whose scheme holds what the issuer sends.
func NewIssuerClient(cfg *rest.Config) (client.Client, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{gardencorev1beta1.AddToScheme, authenticationv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("build kubeconfig issuer scheme: %w", err)
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("create kubeconfig issuer client: %w", err)
	}
	return c, nil
}

// IssueAdminKubeconfig implements ports.KubeconfigIssuer.
func (g *AdminKubeconfigIssuer) IssueAdminKubeconfig(ctx context.Context, shootName string, validity time.Duration) (ports.IssuedKubeconfig, error) {
	shoot := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Name: shootName, Namespace: g.namespace}}
	req := &authenticationv1alpha1.AdminKubeconfigRequest{
		Spec: authenticationv1alpha1.AdminKubeconfigRequestSpec{ExpirationSeconds: new(int64(validity / time.Second))},
	}
	if err := g.client.SubResource("adminkubeconfig").Create(ctx, shoot, req); err != nil {
		return ports.IssuedKubeconfig{}, fmt.Errorf("request admin kubeconfig for shoot %s/%s: %w", g.namespace, shootName, classifyIssueError(err))
	}
	if len(req.Status.Kubeconfig) == 0 || req.Status.ExpirationTimestamp.IsZero() {
		return ports.IssuedKubeconfig{}, fmt.Errorf("request admin kubeconfig for shoot %s/%s: %w: response without kubeconfig or expiry",
			g.namespace, shootName, ports.ErrTransient)
	}
	return ports.IssuedKubeconfig{Kubeconfig: req.Status.Kubeconfig, ExpiresAt: req.Status.ExpirationTimestamp.UTC()}, nil
}

// classifyIssueError maps the gardener-apiserver's answer to the ports errors, keeping its message. The apiserver answers a
// shoot without an advertised kube-apiserver address with Invalid, and a shoot whose CA objects do not exist yet with
// an internal error naming the CA; both happen while a shoot is being created.
func classifyIssueError(err error) error {
	msg := err.Error()
	switch {
	case apierrors.IsNotFound(err):
		return errors.Join(ports.ErrShootNotFound, err)
	case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
		return errors.Join(ports.ErrForbidden, err)
	case apierrors.IsInvalid(err) && strings.Contains(msg, "advertised address"),
		apierrors.IsInternalError(err) && strings.Contains(msg, " CA "):
		return errors.Join(ports.ErrShootNotReady, err)
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		// A request the apiserver rejects as malformed will not succeed on retry either; it is a bug on our side, but
		// the closest class for the caller is "not ready" (retry later, show the message), not a tight retry loop.
		return errors.Join(ports.ErrShootNotReady, err)
	default:
		return errors.Join(ports.ErrTransient, err)
	}
}
