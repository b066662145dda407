package gardener

import (
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/internal/mapping"
)

// TestShootCreateRequestsIntegration pins what creating a shoot costs in Gardener requests (P1, issue 14): the
// ConfigMap's apply, the create, the apply, one patch handing the create's fields to the apply manager and the
// ConfigMap's owner patch. The hand-over works on the apply's answer: a live read happens only after a conflict
// with the simulated gardenlet, which writes the new shoot meanwhile. Afterwards only the apply manager owns fields.
func TestShootCreateRequestsIntegration(t *testing.T) {
	env := GardenBox(t)
	rt := loadRuntime(t, "testdata/runtimes/aws-acl-multi-oidc.yaml")
	rt.Spec.Shoot.Name = "cr-requests"
	spec, err := shoot.Generate(mapping.Runtime(rt), goldenConfig(t, "aws-acl-multi-oidc"))
	if err != nil || spec.Authentication == nil {
		t.Fatalf("generate: %v (authentication %v)", err, spec.Authentication)
	}
	var mu sync.Mutex
	counts := map[string]int{}
	c := env.GardenClient
	ns := env.Catalogue.ProjectNamespace()
	adapter := &Shoots{Client: c, Live: c, Namespace: ns, RuntimeNamespace: "kcp-system", Observe: func(verb string, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			verb += "/error"
		}
		counts[verb]++
	}}
	if _, err := adapter.Apply(t.Context(), ports.ShootApply{Spec: spec, RuntimeID: rt.Name, RuntimeGeneration: 1, SpecHash: "h"}); err != nil {
		t.Fatalf("create: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
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
