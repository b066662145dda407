// Package kube implements the Kubernetes-side ports: the GardenerCluster and kubeconfig Secret of a runtime in KCP
// and the access configuration inside a runtime cluster.
package kube

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// AccessObjects implements ports.AccessObjects on the KCP cluster.
type AccessObjects struct {
	// Client reads from the manager's cache and writes to KCP.
	Client client.Client
}

var _ ports.AccessObjects = (*AccessObjects)(nil)

func transient(op string, err error) error {
	return fmt.Errorf("%s: %w: %w", op, ports.ErrTransient, err)
}

// InSync implements ports.AccessObjects.
func (a *AccessObjects) InSync(ctx context.Context, spec ports.GardenerClusterSpec) (bool, error) {
	gc := &imv1.GardenerCluster{}
	err := a.Client.Get(ctx, client.ObjectKey{Namespace: spec.Namespace, Name: spec.RuntimeID}, gc)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, transient("get GardenerCluster "+spec.RuntimeID, err)
	}
	for k, v := range spec.Labels {
		if gc.Labels[k] != v {
			return false, nil
		}
	}
	return gc.DeletionTimestamp == nil && gc.Spec.Shoot.Name == spec.ShootName &&
		gc.Spec.Kubeconfig.Secret.Name == spec.SecretName && gc.Spec.Kubeconfig.Secret.Key == spec.SecretKey &&
		gc.Spec.Kubeconfig.Secret.Namespace == spec.Namespace &&
		(spec.SKRDomain == "" || gc.Annotations[imv1.AnnotationSKRDomain] == spec.SKRDomain), nil
}

// Ensure implements ports.AccessObjects.
func (a *AccessObjects) Ensure(ctx context.Context, spec ports.GardenerClusterSpec) error {
	gc := &imv1.GardenerCluster{ObjectMeta: metav1.ObjectMeta{Namespace: spec.Namespace, Name: spec.RuntimeID}}
	err := a.Client.Get(ctx, client.ObjectKeyFromObject(gc), gc)
	if err != nil && !apierrors.IsNotFound(err) {
		return transient("get GardenerCluster "+spec.RuntimeID, err)
	}
	create := apierrors.IsNotFound(err)
	// A merge patch of only what the spec sets: labels others added are kept, and a cache that has not yet seen
	// someone else's write causes no conflict (an update from it would, on every label KEB or an SRE adds).
	patch := client.MergeFrom(gc.DeepCopy())
	if gc.Labels == nil {
		gc.Labels = map[string]string{}
	}
	maps.Copy(gc.Labels, spec.Labels)
	if create {
		for k, v := range spec.InitialLabels {
			if _, set := gc.Labels[k]; !set {
				gc.Labels[k] = v
			}
		}
	}
	if spec.SKRDomain != "" {
		metav1.SetMetaDataAnnotation(&gc.ObjectMeta, imv1.AnnotationSKRDomain, spec.SKRDomain)
	}
	gc.Spec.Shoot.Name = spec.ShootName
	gc.Spec.Kubeconfig.Secret = imv1.Secret{Name: spec.SecretName, Namespace: spec.Namespace, Key: spec.SecretKey}
	if create && spec.OwnerUID != "" {
		ctrl := true
		gc.OwnerReferences = []metav1.OwnerReference{{APIVersion: imv1.GroupVersion.String(), Kind: "Runtime",
			Name: spec.RuntimeID, UID: typesUID(spec.OwnerUID), Controller: &ctrl}}
	}
	if create {
		err = a.Client.Create(ctx, gc)
	} else {
		err = a.Client.Patch(ctx, gc, patch)
	}
	if err != nil {
		return transient("write GardenerCluster "+spec.RuntimeID, err)
	}
	return nil
}

// KubeconfigReady implements ports.AccessObjects.
func (a *AccessObjects) KubeconfigReady(ctx context.Context, namespace, runtimeID string, now time.Time) (ports.KubeconfigState, error) {
	s := &corev1.Secret{}
	err := a.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: kubeconfig.SecretName(runtimeID)}, s)
	if apierrors.IsNotFound(err) {
		return ports.KubeconfigMissing, nil
	}
	if err != nil {
		return ports.KubeconfigMissing, transient("get kubeconfig Secret of "+runtimeID, err)
	}
	if !hasData(s, kubeconfig.SecretKey, true) {
		return ports.KubeconfigMissing, nil
	}
	recorded, ok := s.Annotations[kubeconfig.AnnotationExpiresAt]
	if !ok {
		return ports.KubeconfigUnrecorded, nil
	}
	if expires, err := time.Parse(time.RFC3339, recorded); err == nil && now.Before(expires) {
		return ports.KubeconfigValid, nil
	}
	return ports.KubeconfigMissing, nil
}

// Remove implements ports.AccessObjects.
func (a *AccessObjects) Remove(ctx context.Context, namespace, runtimeID string) (bool, error) {
	objs := []client.Object{
		&imv1.GardenerCluster{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: runtimeID}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: kubeconfig.SecretName(runtimeID)}},
	}
	gone := true
	for _, o := range objs {
		err := a.Client.Get(ctx, client.ObjectKeyFromObject(o), o)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return false, transient("get "+o.GetName(), err)
		}
		gone = false
		if o.GetDeletionTimestamp() != nil {
			continue
		}
		if err := a.Client.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			return false, transient("delete "+o.GetName(), err)
		}
	}
	return gone, nil
}
