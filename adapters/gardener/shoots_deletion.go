package gardener

import (
	"context"
	"errors"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/cluster"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
)

// MarkForDeletion implements ports.Shoots.
func (c *Shoots) MarkForDeletion(ctx context.Context, name string, m ports.DeletionMark) (cluster.Shoot, error) {
	s, err := c.mutate(ctx, "mark", name, func(s *gardencorev1beta1.Shoot) {
		r := m.Record
		for k, v := range map[string]string{AnnotationDeletionRuntimeID: r.RuntimeID, AnnotationDeletionPlan: r.Plan,
			AnnotationDeletionMarkedAt: formatTime(r.MarkedAt), AnnotationDeletionDueAt: formatTime(r.DueAt),
			AnnotationRestoreSpec: string(m.RestoreSpec)} {
			metav1.SetMetaDataAnnotation(&s.ObjectMeta, k, v)
		}
		if m.Hibernate {
			enabled := true
			if s.Spec.Hibernation == nil {
				s.Spec.Hibernation = &gardencorev1beta1.Hibernation{}
			}
			s.Spec.Hibernation.Enabled = &enabled
		}
	})
	if err != nil {
		return cluster.Shoot{}, err
	}
	return Observe(s), nil
}

// CancelDeletion implements ports.Shoots.
func (c *Shoots) CancelDeletion(ctx context.Context, name, runtimeID string) (cluster.Shoot, error) {
	s, err := c.mutate(ctx, "cancel deletion of", name, func(s *gardencorev1beta1.Shoot) {
		for _, k := range deletionAnnotations {
			delete(s.Annotations, k)
		}
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, shoot.AnnotationRuntimeID, runtimeID)
		if s.Spec.Hibernation != nil && s.Spec.Hibernation.Enabled != nil && *s.Spec.Hibernation.Enabled {
			disabled := false
			s.Spec.Hibernation.Enabled = &disabled
		}
	})
	if err != nil {
		return cluster.Shoot{}, err
	}
	return Observe(s), nil
}

// RestoreSpec implements ports.Shoots.
func (c *Shoots) RestoreSpec(ctx context.Context, name string) ([]byte, error) {
	s, err := c.get(ctx, name)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, fmt.Errorf("restore spec of shoot %s: %w", name, ports.ErrShootNotFound)
	}
	if s.Labels[LabelManagedBy] != ManagedByValue {
		return nil, fmt.Errorf("restore spec of shoot %s: %w", name, ports.ErrShootNotManaged)
	}
	return []byte(s.Annotations[AnnotationRestoreSpec]), nil
}

// RequestRestore implements ports.Shoots.
func (c *Shoots) RequestRestore(ctx context.Context, name string) error {
	_, err := c.mutate(ctx, "request restore of", name, func(s *gardencorev1beta1.Shoot) {
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, AnnotationRestore, "true")
	})
	return err
}

// Delete implements ports.Shoots: Gardener refuses to delete a shoot without the confirmation annotation.
func (c *Shoots) Delete(ctx context.Context, name string) error {
	s, err := c.mutate(ctx, "confirm deletion of", name, func(s *gardencorev1beta1.Shoot) {
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, v1beta1constants.ConfirmationDeletion, "true")
	})
	if errors.Is(err, ports.ErrShootNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	err = c.Client.Delete(ctx, s, client.Preconditions{UID: &s.UID})
	if apierrors.IsNotFound(err) {
		err = nil
	}
	return c.record("delete", classify("delete shoot "+name, err))
}

// ForceDelete implements ports.Shoots.
func (c *Shoots) ForceDelete(ctx context.Context, name string) error {
	_, err := c.mutate(ctx, "force-delete", name, func(s *gardencorev1beta1.Shoot) {
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, v1beta1constants.AnnotationConfirmationForceDeletion, "true")
	})
	return err
}
