package gardener

import (
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/internal/mapping"
	"github.com/kyma-project/kim/operator/config"
)

// TestMigrationAdoptionIntegration: the dry run predicts what the operator's first write after adopting a
// predecessor's shoot stores, and that write leaves a shoot that holds every value unchanged (same generation: no
// reconciliation by Gardener); a shoot that lacks a value is reported with the field and the new generation.
func TestMigrationAdoptionIntegration(t *testing.T) {
	env := GardenBox(t)
	cfg, err := config.Load("testdata/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := env.GardenClient
	ns := env.Catalogue.ProjectNamespace()
	adapter := &Shoots{Client: c, Live: c, Namespace: ns, RuntimeNamespace: "kcp-system"}
	rt := loadRuntime(t, "testdata/runtimes/gcp.yaml")
	generate := func(name string) shoot.Spec {
		r := rt.DeepCopy()
		r.Spec.Shoot.Name = name
		spec, err := shoot.Generate(mapping.Runtime(r), cfg.ShootConfig())
		if err != nil {
			t.Fatal(err)
		}
		spec.Namespace = ns
		return spec
	}
	apply := func(spec shoot.Spec) ports.ShootApply {
		return ports.ShootApply{Spec: spec, RuntimeID: rt.Name, RuntimeGeneration: 1, SpecHash: spec.Hash()}
	}
	// A shoot that lacks the kubelet feature gates the configuration asks for.
	lacking := generate("mig-lack")
	createUnmarked(t, adapter, lacking, rt.Name)
	s := getShoot(t, c, ns, "mig-lack")
	patch := client.MergeFrom(s.DeepCopy())
	s.Spec.Kubernetes.Kubelet = nil
	if err := c.Patch(t.Context(), s, patch); err != nil {
		t.Fatal(err)
	}
	// A migration meets settled shoots: wait until the simulated gardenlet is done with the shoot (it writes the
	// status of an operation in progress many times a second, more often than a dry run pinned to one version of
	// the shoot can follow).
	settled := func(name string) {
		t.Helper()
		require.Eventually(t, func() bool {
			s := getShoot(t, c, ns, name)
			op := s.Status.LastOperation
			return op != nil && op.State == gardencorev1beta1.LastOperationStateSucceeded && s.Status.ObservedGeneration == s.Generation
		}, 60*time.Second, 200*time.Millisecond, "shoot %s settled", name)
	}
	settled("mig-lack")
	diffs, err := adapter.DryRunAdoption(t.Context(), getShoot(t, c, ns, "mig-lack"), apply(lacking))
	if err != nil {
		t.Fatal(err)
	}
	if !hasPath(diffs, ".spec.kubernetes.kubelet") || !hasPath(diffs, ".metadata.generation") {
		t.Errorf("dry run of a shoot lacking the kubelet settings: %v; want the kubelet and a new generation", diffs)
	}

	spec := generate("mig-same")
	createUnmarked(t, adapter, spec, rt.Name)
	settled("mig-same")
	before := getShoot(t, c, ns, "mig-same")
	diffs, err = adapter.DryRunAdoption(t.Context(), before, apply(spec))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		if !strings.HasPrefix(d.Path, ".metadata.labels.") && !strings.HasPrefix(d.Path, ".metadata.annotations.") || d.Have != nil {
			t.Errorf("dry run of a shoot holding every value: %s; want only labels and annotations it lacks", d)
		}
	}
	if _, err := adapter.Adopt(t.Context(), "mig-same", rt.Name, "gcp"); err != nil {
		t.Fatal(err)
	}
	if _, err := reapplyLive(t, adapter, apply(spec)); err != nil {
		t.Fatalf("first apply after adoption: %v", err)
	}
	after := getShoot(t, c, ns, "mig-same")
	if after.Generation != before.Generation || after.UID != before.UID {
		t.Errorf("first apply after adoption: generation %d -> %d; want unchanged", before.Generation, after.Generation)
	}
	if after.Annotations[AnnotationSpecHash] != spec.Hash() || !Observe(after).OwnedBy(rt.Name) {
		t.Errorf("the marks were not recorded: %v", after.Annotations)
	}
	// A real change is applied as always (server-side apply, a new generation).
	spec.Workers[0].Maximum++
	if _, err := reapplyLive(t, adapter, apply(spec)); err != nil {
		t.Fatal(err)
	}
	changed := getShoot(t, c, ns, "mig-same")
	if changed.Generation == after.Generation || !appliedByOperator(changed) || changed.Spec.Provider.Workers[0].Maximum != spec.Workers[0].Maximum {
		t.Errorf("a change after adoption: generation %d -> %d, maximum %d; want applied", after.Generation, changed.Generation, changed.Spec.Provider.Workers[0].Maximum)
	}
}

func hasPath(diffs []Difference, prefix string) bool {
	for _, d := range diffs {
		if strings.HasPrefix(d.Path, prefix) {
			return true
		}
	}
	return false
}
