package catalogue

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Apply creates every object of the catalogue in the garden. Objects that already exist are left as
// they are, so Apply can run against a garden that was seeded before (idempotent).
func Apply(ctx context.Context, c client.Client, cat Catalogue) error {
	objs, err := cat.Objects()
	if err != nil {
		return err
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("seed %T %s: %w", o, client.ObjectKeyFromObject(o), err)
		}
	}
	return nil
}
