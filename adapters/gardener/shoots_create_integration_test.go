package gardener

import (
	"maps"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/internal/mapping"
	"github.com/kyma-project/kim/test/sandbox/gardenbox"
	"github.com/kyma-project/kim/test/testenv/goldenshoots"
)

// countingShoots returns the adapter on the garden-in-a-box with its requests counted by verb ("verb/error" for
// failed ones).
func countingShoots(env *gardenbox.Env) (*Shoots, func() map[string]int) {
	var mu sync.Mutex
	counts := map[string]int{}
	c := env.GardenClient
	adapter := &Shoots{Client: c, Live: c, Namespace: env.Catalogue.ProjectNamespace(), RuntimeNamespace: "kcp-system",
		Observe: func(verb string, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				verb += "/error"
			}
			counts[verb]++
		}}
	return adapter, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(counts)
	}
}

// TestShootCreateRequestsIntegration pins what creating a shoot costs in Gardener requests (P1, issue 14): the
// ConfigMap's apply, the create, the apply, one patch handing the create's fields to the apply manager and the
// ConfigMap's owner patch. The hand-over works on the apply's answer: a live read happens only after a conflict
// with the simulated gardenlet, which writes the new shoot meanwhile. Afterwards only the apply manager owns fields.
func TestShootCreateRequestsIntegration(t *testing.T) {
	env := GardenBox(t)
	rt := loadRuntime(t, "testdata/runtimes/aws-acl-multi-oidc.yaml")
	rt.Spec.Shoot.Name = "cr-requests"
	spec, err := shoot.Generate(mapping.Runtime(rt), goldenshoots.Config(t, "aws-acl-multi-oidc"))
	if err != nil || spec.Authentication == nil {
		t.Fatalf("generate: %v (authentication %v)", err, spec.Authentication)
	}
	adapter, requests := countingShoots(env)
	c, ns := env.GardenClient, adapter.Namespace
	if _, err := adapter.Apply(t.Context(), ports.ShootApply{Spec: spec, RuntimeID: rt.Name, RuntimeGeneration: 1, SpecHash: "h"}); err != nil {
		t.Fatalf("create: %v", err)
	}
	counts := requests()
	t.Logf("requests of the create: %v", counts)
	if counts["create"] != 1 || counts["apply"] != 2 || counts["patch"] != 2 {
		t.Errorf("requests %v: want one create, two applies (ConfigMap, shoot), two patches (hand-over, ConfigMap owner)", counts)
	}
	if counts["get"] != counts["patch/error"] {
		t.Errorf("requests %v: a live read without a conflict before it", counts)
	}
	s := getShoot(t, c, ns, "cr-requests")
	for _, e := range s.ManagedFields {
		if e.Manager == createManager || (e.Manager == FieldManager && e.Operation != metav1.ManagedFieldsOperationApply) {
			t.Errorf("managedFields entry %s/%s left after the create: later applies could not remove its fields", e.Manager, e.Operation)
		}
	}
}

// TestShootCreateHandOverFallbackIntegration: when the create's managedFields entry is no longer where the apply's
// answer had it (another writer's entry sorted before it), the guarded JSON patch fails without changing anything and
// the hand-over reads the shoot live and removes the entry by name.
func TestShootCreateHandOverFallbackIntegration(t *testing.T) {
	env := GardenBox(t)
	adapter, requests := countingShoots(env)
	rt := loadRuntime(t, "testdata/runtimes/aws.yaml")
	rt.Spec.Shoot.Name = "cr-fallback"
	spec, err := shoot.Generate(mapping.Runtime(rt), goldenshoots.Config(t, "aws"))
	if err != nil {
		t.Fatal(err)
	}
	createUnmarked(t, adapter, spec, "")
	s := getShoot(t, env.GardenClient, adapter.Namespace, "cr-fallback")
	patch := client.MergeFrom(s.DeepCopy())
	s.Annotations = map[string]string{"created-by": "the create manager"}
	if err := env.GardenClient.Patch(t.Context(), s, patch, client.FieldOwner(createManager)); err != nil {
		t.Fatal(err)
	}
	// The answer as a caller might hold it: the entry one position further down than it is.
	stale := s.DeepCopy()
	stale.ManagedFields = append([]metav1.ManagedFieldsEntry{{Manager: "someone-else", Operation: metav1.ManagedFieldsOperationUpdate}}, stale.ManagedFields...)
	if err := adapter.dropManager(t.Context(), stale, createManager); err != nil {
		t.Fatalf("hand-over: %v", err)
	}
	// The gardenlet writes the new shoot meanwhile: a conflict of the live-read patch costs another read.
	if counts := requests(); counts["patch/error"] < 1 || counts["get"] != counts["patch/error"] || counts["patch"] != 1 {
		t.Errorf("requests %v: want the guarded patch refused, then a live read per refusal and one patch", counts)
	}
	for _, e := range getShoot(t, env.GardenClient, adapter.Namespace, "cr-fallback").ManagedFields {
		if e.Manager == createManager {
			t.Errorf("entry of %s still there: %+v", createManager, e)
		}
	}
}
