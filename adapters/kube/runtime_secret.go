package kube

import (
	"bytes"
	"context"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/ports"
)

// Labels on the objects the operator writes into runtimes.
const (
	LabelRuntimeManagedBy = "reconciler.kyma-project.io/managed-by"
	RuntimeManagedByValue = "infrastructure-manager"
)

// RuntimeSecrets implements ports.RuntimeSecretWriter on the runtimes' API servers.
type RuntimeSecrets struct {
	// Clients makes the client of a runtime.
	Clients RuntimeClientFactory
}

var _ ports.RuntimeSecretWriter = (*RuntimeSecrets)(nil)

// EnsureSecret implements ports.RuntimeSecretWriter. The data is compared and written, never logged.
func (r *RuntimeSecrets) EnsureSecret(ctx context.Context, runtimeID string, s ports.RuntimeSecret) (bool, error) {
	c, err := r.Clients(ctx, runtimeID)
	if err != nil {
		return false, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.Namespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return false, runtimeError("create namespace "+s.Namespace, runtimeID, err)
	}
	have := &corev1.Secret{}
	err = c.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: s.Name}, have)
	switch {
	case apierrors.IsNotFound(err):
		want := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name,
			Labels: map[string]string{LabelRuntimeManagedBy: RuntimeManagedByValue}}, Type: corev1.SecretTypeOpaque, Data: s.Data}
		if err := c.Create(ctx, want); err != nil {
			return false, runtimeError("create Secret "+s.Namespace+"/"+s.Name, runtimeID, err)
		}
		return true, nil
	case err != nil:
		return false, runtimeError("get Secret "+s.Namespace+"/"+s.Name, runtimeID, err)
	case maps.EqualFunc(have.Data, s.Data, bytes.Equal) && have.Labels[LabelRuntimeManagedBy] == RuntimeManagedByValue:
		return false, nil
	}
	if have.Labels == nil {
		have.Labels = map[string]string{}
	}
	have.Labels[LabelRuntimeManagedBy] = RuntimeManagedByValue
	have.Data = s.Data
	if err := c.Update(ctx, have); err != nil {
		return false, runtimeError("update Secret "+s.Namespace+"/"+s.Name, runtimeID, err)
	}
	return true, nil
}
