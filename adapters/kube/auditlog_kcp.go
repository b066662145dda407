package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// AuditLogRuntimes implements ports.AuditLogRuntimes with live reads of the KCP.
type AuditLogRuntimes struct {
	Live       client.Reader
	Namespaces []string
}

var _ ports.AuditLogRuntimes = (*AuditLogRuntimes)(nil)

// Lookup implements ports.AuditLogRuntimes.
func (r *AuditLogRuntimes) Lookup(ctx context.Context, runtimeID string) (ports.AuditLogOwner, error) {
	for _, ns := range r.Namespaces {
		rt := &imv1.Runtime{}
		err := r.Live.Get(ctx, client.ObjectKey{Namespace: ns, Name: runtimeID}, rt)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return ports.AuditLogOwner{}, transient("get runtime "+runtimeID, err)
		}
		return ports.AuditLogOwner{Exists: true, Enabled: ptr.Deref(rt.Spec.AuditLogAccessEnabled, false),
			Provisioned: rt.Status.ProvisioningCompleted, ShootName: rt.Spec.Shoot.Name}, nil
	}
	return ports.AuditLogOwner{}, nil
}

// KCPSecrets implements ports.AuditLogCredentials with live reads of Secrets in the KCP (the operator's cache
// holds only its own Secrets).
type KCPSecrets struct {
	Live client.Reader
}

var _ ports.AuditLogCredentials = (*KCPSecrets)(nil)

// Read implements ports.AuditLogCredentials. The data is returned, never logged.
func (k *KCPSecrets) Read(ctx context.Context, ref auditlog.SecretRef) (ports.KCPSecret, error) {
	s := &corev1.Secret{}
	err := k.Live.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, s)
	if apierrors.IsNotFound(err) {
		return ports.KCPSecret{}, fmt.Errorf("secret %s/%s: %w", ref.Namespace, ref.Name, ports.ErrSecretNotFound)
	}
	if err != nil {
		return ports.KCPSecret{}, transient("get secret "+ref.Namespace+"/"+ref.Name, err)
	}
	return ports.KCPSecret{Labels: s.Labels, Data: s.Data}, nil
}
