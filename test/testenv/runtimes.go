package testenv

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// UpdateRuntime changes the spec of a Runtime the way KEB does (reads it, changes it, writes the whole object,
// retried on conflicts) and returns the new generation. A missing Runtime fails the test.
func UpdateRuntime(t testing.TB, c client.Client, key client.ObjectKey, change func(*imv1.Runtime)) int64 {
	t.Helper()
	for range 10 {
		rt := &imv1.Runtime{}
		if err := c.Get(context.Background(), key, rt); err != nil {
			t.Fatalf("get runtime %s: %v", key, err)
		}
		change(rt)
		err := c.Update(context.Background(), rt)
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			t.Fatalf("update runtime %s: %v", key, err)
		}
		return rt.Generation
	}
	t.Fatalf("update runtime %s: too many conflicts", key)
	return 0
}
