package gardener

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/ports"
)

// Labels of KEB's CredentialsBindings that its deprovisioning step and its pool read (KEB:common/gardener/client.go).
const (
	BindingLabelDirty    = "dirty"
	BindingLabelShared   = "shared"
	BindingLabelInternal = "internal"
)

// CredentialsBindings implements ports.CredentialsBindings on the security.gardener.cloud/v1alpha1
// CredentialsBindings of the project namespace. Reads go to the API server (the bindings belong to KEB's pool, a
// cache would only add lag and a watch permission); the only write is a JSON merge patch of the label dirty that
// carries the observed resourceVersion, so it fails with a conflict instead of overwriting a change made since.
type CredentialsBindings struct {
	// Live reads from the garden API server; Writer patches.
	Live      client.Reader
	Writer    client.Writer
	Namespace string
}

var _ ports.CredentialsBindings = (*CredentialsBindings)(nil)

// bindingError wraps an API error into the port's error classes.
func bindingError(op string, err error) error {
	switch {
	case apierrors.IsConflict(err), apierrors.IsNotFound(err):
		// Not found on a patch: the binding went since it was observed; observe again.
		return fmt.Errorf("%s: %w: %w", op, ports.ErrConflict, err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s: %w: %w", op, ports.ErrForbidden, err)
	}
	return fmt.Errorf("%s: %w: %w", op, ports.ErrTransient, err)
}

// Get implements ports.CredentialsBindings.
func (c *CredentialsBindings) Get(ctx context.Context, name string) (deletion.Binding, error) {
	b := &securityv1alpha1.CredentialsBinding{}
	err := c.Live.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, b)
	switch {
	case apierrors.IsNotFound(err):
		return deletion.Binding{Name: name}, nil
	case err != nil:
		return deletion.Binding{}, bindingError("get credentials binding "+name, err)
	}
	l := b.Labels
	_, dirtyLabelled := l[BindingLabelDirty]
	return deletion.Binding{Name: name, Exists: true, Shared: l[BindingLabelShared] == "true", Internal: l[BindingLabelInternal] == "true",
		Dirty: l[BindingLabelDirty] == "true", DirtyLabelled: dirtyLabelled, ResourceVersion: b.ResourceVersion}, nil
}

// SetDirty implements ports.CredentialsBindings.
func (c *CredentialsBindings) SetDirty(ctx context.Context, name, resourceVersion string) error {
	return c.patchDirty(ctx, name, resourceVersion, "true")
}

// RemoveDirty implements ports.CredentialsBindings.
func (c *CredentialsBindings) RemoveDirty(ctx context.Context, name, resourceVersion string) error {
	return c.patchDirty(ctx, name, resourceVersion, nil)
}

// patchDirty sets the label dirty to value (nil removes it). A merge patch with metadata.resourceVersion is
// refused by the API server with a conflict when the object changed: the precondition.
func (c *CredentialsBindings) patchDirty(ctx context.Context, name, resourceVersion string, value any) error {
	if resourceVersion == "" {
		return fmt.Errorf("patch credentials binding %s: no resourceVersion observed: %w", name, ports.ErrConflict)
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": resourceVersion, "labels": map[string]any{BindingLabelDirty: value}}})
	if err != nil {
		return fmt.Errorf("patch credentials binding %s: %w", name, err)
	}
	obj := &securityv1alpha1.CredentialsBinding{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: name}}
	if err := c.Writer.Patch(ctx, obj, client.RawPatch(types.MergePatchType, body)); err != nil {
		return bindingError("patch the dirty label of credentials binding "+name, err)
	}
	return nil
}

// usedByPageSize bounds one page of the live list of the project's shoots.
const usedByPageSize = 500

// UsedBy implements ports.CredentialsBindings: a paginated live list of the project's shoots.
func (c *CredentialsBindings) UsedBy(ctx context.Context, name, except string) ([]string, error) {
	var out []string
	opts := []client.ListOption{client.InNamespace(c.Namespace), client.Limit(usedByPageSize)}
	for cont := ""; ; {
		list := &gardencorev1beta1.ShootList{}
		if err := c.Live.List(ctx, list, append(opts, client.Continue(cont))...); err != nil {
			return nil, bindingError("list the shoots of "+c.Namespace, err)
		}
		for _, s := range list.Items {
			if s.Name != except && s.Spec.CredentialsBindingName != nil && *s.Spec.CredentialsBindingName == name {
				out = append(out, s.Name)
			}
		}
		if cont = list.Continue; cont == "" {
			break
		}
	}
	slices.Sort(out)
	return out, nil
}
