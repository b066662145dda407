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

	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
)

// MarkForDeletion implements ports.ShootDeletion.
func (c *Shoots) MarkForDeletion(ctx context.Context, name string, m ports.DeletionMark) (shootstate.Shoot, error) {
	s, err := c.mutate(ctx, "mark", name, m.Precondition, func(s *gardencorev1beta1.Shoot) error {
		r := m.Record
		if owner := s.Annotations[shoot.AnnotationRuntimeID]; owner != r.RuntimeID {
			return fmt.Errorf("it belongs to runtime %q, not %q: %w", owner, r.RuntimeID, ports.ErrShootNotManaged)
		}
		for k, v := range map[string]string{AnnotationDeletionRuntimeID: r.RuntimeID, AnnotationDeletionPlan: r.Plan,
			AnnotationDeletionMarkedAt: formatTime(r.MarkedAt), AnnotationDeletionDueAt: formatTime(r.DueAt),
			AnnotationDeletionWindow: r.Window.String(), AnnotationDeletionRuntimeNamespace: r.RuntimeNamespace} {
			metav1.SetMetaDataAnnotation(&s.ObjectMeta, k, v)
		}
		if len(m.RestoreSpec) > 0 {
			metav1.SetMetaDataAnnotation(&s.ObjectMeta, AnnotationRestoreSpec, string(m.RestoreSpec))
		} else {
			delete(s.Annotations, AnnotationRestoreSpec)
		}
		if m.Hibernate {
			enabled := true
			if s.Spec.Hibernation == nil {
				s.Spec.Hibernation = &gardencorev1beta1.Hibernation{}
			}
			s.Spec.Hibernation.Enabled = &enabled
		}
		return nil
	})
	if err != nil {
		return shootstate.Shoot{}, err
	}
	return live(s), nil
}

// CancelDeletion implements ports.ShootDeletion.
func (c *Shoots) CancelDeletion(ctx context.Context, name, runtimeID, plan string, pre ports.Precondition) (shootstate.Shoot, error) {
	s, err := c.mutate(ctx, "cancel deletion of", name, pre, func(s *gardencorev1beta1.Shoot) error {
		if owner := s.Annotations[AnnotationDeletionRuntimeID]; owner != "" && owner != runtimeID {
			return fmt.Errorf("its deletion record names runtime %q, not %q: %w", owner, runtimeID, ports.ErrShootNotManaged)
		}
		if s.DeletionTimestamp != nil {
			return fmt.Errorf("gardener deletes it already: %w", ports.ErrConflict)
		}
		if recorded := s.Annotations[AnnotationDeletionPlan]; recorded != "" {
			// The record's plan is the one with the longest window the runtime had: taking the cluster back keeps it.
			metav1.SetMetaDataAnnotation(&s.ObjectMeta, AnnotationPlan, recorded)
		}
		if plan != "" { // computed by the caller from the observation the precondition names
			metav1.SetMetaDataAnnotation(&s.ObjectMeta, AnnotationPlan, plan)
		}
		for _, k := range deletionAnnotations {
			delete(s.Annotations, k)
		}
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, shoot.AnnotationRuntimeID, runtimeID)
		if s.Spec.Hibernation != nil && s.Spec.Hibernation.Enabled != nil && *s.Spec.Hibernation.Enabled {
			disabled := false
			s.Spec.Hibernation.Enabled = &disabled
		}
		return nil
	})
	if err != nil {
		return shootstate.Shoot{}, err
	}
	return live(s), nil
}

// RestoreSpec implements ports.ShootDeletion.
func (c *Shoots) RestoreSpec(ctx context.Context, name string) ([]byte, error) {
	s, err := c.read(ctx, name, ports.ReadLive)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, fmt.Errorf("restore spec of shoot %s: %w", name, ports.ErrShootNotFound)
	}
	if s.Labels[wire.LabelManagedBy] != wire.ManagedByValue {
		return nil, fmt.Errorf("restore spec of shoot %s: %w", name, ports.ErrShootNotManaged)
	}
	return []byte(s.Annotations[AnnotationRestoreSpec]), nil
}

// RequestRestore implements ports.ShootDeletion.
func (c *Shoots) RequestRestore(ctx context.Context, name string) error {
	_, err := c.mutate(ctx, "request restore of", name, ports.Precondition{}, func(s *gardencorev1beta1.Shoot) error {
		if s.Annotations[AnnotationDeletionRuntimeID] == "" {
			return fmt.Errorf("it is not waiting for deletion: %w", ports.ErrConflict)
		}
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, wire.AnnotationRestore, "true")
		return nil
	})
	return err
}

// Delete implements ports.ShootDeletion: Gardener refuses to delete a shoot without the confirmation annotation.
// The confirmation is written only on the observed UID and version (optimistic locking). The delete that follows
// carries the UID and the version the confirmation produced; should Gardener touch the shoot in between, the
// delete is repeated on a fresh read only while that read still shows the same deletion (record, confirmation, no
// restore request), so a restore or an edit in between is never overrun.
func (c *Shoots) Delete(ctx context.Context, name string, pre ports.Precondition) error {
	s, err := c.mutate(ctx, "confirm deletion of", name, pre, func(s *gardencorev1beta1.Shoot) error {
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, v1beta1constants.ConfirmationDeletion, "true")
		return nil
	})
	if errors.Is(err, ports.ErrShootNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	record := s.Annotations[AnnotationDeletionRuntimeID] + "/" + s.Annotations[AnnotationDeletionDueAt]
	for attempt := 0; ; attempt++ {
		err = c.Client.Delete(ctx, s, client.Preconditions{UID: &s.UID, ResourceVersion: &s.ResourceVersion})
		c.count("delete", client.IgnoreNotFound(err))
		if !apierrors.IsConflict(err) || attempt == 2 {
			break
		}
		if s, err = c.read(ctx, name, ports.ReadLive); err != nil || s == nil {
			return err
		}
		same := string(s.UID) == pre.UID || pre.UID == ""
		if !same || s.Annotations[AnnotationDeletionRuntimeID]+"/"+s.Annotations[AnnotationDeletionDueAt] != record ||
			s.Annotations[v1beta1constants.ConfirmationDeletion] != "true" || s.Annotations[wire.AnnotationRestore] == "true" {
			return fmt.Errorf("delete shoot %s: it changed after the deletion was confirmed: %w", name, ports.ErrConflict)
		}
	}
	if apierrors.IsNotFound(err) {
		err = nil
	}
	return classify("delete shoot "+name, err)
}

// ForceDelete implements ports.ShootDeletion.
func (c *Shoots) ForceDelete(ctx context.Context, name string, pre ports.Precondition) error {
	_, err := c.mutate(ctx, "force-delete", name, pre, func(s *gardencorev1beta1.Shoot) error {
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, v1beta1constants.AnnotationConfirmationForceDeletion, "true")
		return nil
	})
	return err
}
