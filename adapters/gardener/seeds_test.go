package gardener

import (
	"context"
	"errors"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestSeedRegionIsCached: a burst of runtimes on known seeds costs one list; an unknown seed is looked up again
// only after a pause; a failing list does not forget a region seen before.
func TestSeedRegionIsCached(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := gardencorev1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	seed := &gardencorev1beta1.Seed{ObjectMeta: metav1.ObjectMeta{Name: "aws-eu1"},
		Spec: gardencorev1beta1.SeedSpec{Provider: gardencorev1beta1.SeedProvider{Type: "aws", Region: "eu-west-1"}}}
	lists := 0
	var fail error
	live := fake.NewClientBuilder().WithScheme(scheme).WithObjects(seed).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			lists++
			if fail != nil {
				return fail
			}
			return c.List(ctx, list, opts...)
		}}).Build()
	c := &Shoots{Live: live}
	for range 5 {
		if r, err := c.SeedRegion(context.Background(), "aws-eu1"); err != nil || r != "eu-west-1" {
			t.Fatalf("region %q, %v", r, err)
		}
	}
	if r, err := c.SeedRegion(context.Background(), "unknown"); err != nil || r != "" {
		t.Fatalf("unknown seed: %q, %v", r, err)
	}
	if lists != 1 {
		t.Errorf("%d lists, want 1", lists)
	}
	fail = errors.New("garden down")
	c.seeds.listedAt = c.seeds.listedAt.Add(-seedRefresh)
	if r, err := c.SeedRegion(context.Background(), "aws-eu1"); err != nil || r != "eu-west-1" {
		t.Errorf("with the garden down a known region stays: %q, %v", r, err)
	}
	if _, err := c.SeedRegion(context.Background(), "unknown"); err == nil {
		t.Error("an unknown seed with the garden down must be an error")
	}
}
