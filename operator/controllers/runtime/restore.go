package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// ErrNoRestoreDocument: the shoot carries no record of its Runtime (marked by an older operator or edited).
var ErrNoRestoreDocument = errors.New("shoot has no recorded Runtime to restore")

// Restore brings back the Runtime of a shoot waiting for deletion: it recreates the Runtime from the document
// recorded on the shoot, with the restore annotation, so the Runtime controller cancels the deletion, wakes the
// shoot and provisions access again. Idempotent: an existing Runtime of the same name is annotated instead. This
// is what `kim restore <shoot>` and the restore annotation on the shoot do.
func Restore(ctx context.Context, shoots ports.Shoots, kcp client.Client, shootName string) error {
	s, err := shoots.Get(ctx, shootName)
	if err != nil {
		return fmt.Errorf("restore shoot %s: %w", shootName, err)
	}
	if err := deletion.Restorable(s); err != nil {
		return fmt.Errorf("restore shoot %s: %w", shootName, err)
	}
	doc, err := shoots.RestoreSpec(ctx, shootName)
	if err != nil {
		return fmt.Errorf("restore shoot %s: %w", shootName, err)
	}
	if len(doc) == 0 {
		return fmt.Errorf("restore shoot %s: %w", shootName, ErrNoRestoreDocument)
	}
	rt := &imv1.Runtime{}
	if err := json.Unmarshal(doc, rt); err != nil {
		return fmt.Errorf("restore shoot %s: decode recorded Runtime: %w", shootName, err)
	}
	metav1.SetMetaDataAnnotation(&rt.ObjectMeta, AnnotationRestore, "true")
	err = kcp.Create(ctx, rt)
	if apierrors.IsAlreadyExists(err) {
		existing := &imv1.Runtime{}
		if err := kcp.Get(ctx, client.ObjectKeyFromObject(rt), existing); err != nil {
			return fmt.Errorf("restore shoot %s: %w", shootName, err)
		}
		before := existing.DeepCopy()
		metav1.SetMetaDataAnnotation(&existing.ObjectMeta, AnnotationRestore, "true")
		err = kcp.Patch(ctx, existing, client.MergeFrom(before))
	}
	if err != nil {
		return fmt.Errorf("restore shoot %s: create Runtime %s: %w", shootName, rt.Name, err)
	}
	return nil
}
