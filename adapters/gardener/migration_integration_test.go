package gardener

import (
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/internal/mapping"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/test/testenv/goldenshoots"
	"github.com/kyma-project/kim/test/testenv/previous"
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
	if _, err := adoptRetrying(t, adapter, "mig-same", rt.Name, "gcp"); err != nil {
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

// TestAdoptingThePreviousRenderingIntegration: a shoot as the previous manager rendered it (its extension order and
// encodings, the DNS provider list and the credentials resource shoot-dns-service adds, an auditlog extension, a
// registry cache whose credentials are its reg-cache-<uuid> copy while the Runtime's entry still names the Secret in
// the runtime, the networking filter's config without apiVersion/kind) plus a reg-cache-* resource its field manager
// left behind is adopted with exactly one change, the documented one: the stale resource goes. Extensions, spec.dns and every other resource keep their bytes.
func TestAdoptingThePreviousRenderingIntegration(t *testing.T) {
	env := GardenBox(t)
	cfg, err := config.Load("testdata/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := env.GardenClient
	ns := env.Catalogue.ProjectNamespace()
	adapter := &Shoots{Client: c, Live: c, Namespace: ns, RuntimeNamespace: "kcp-system"}
	rt := loadRuntime(t, "testdata/runtimes/aws-registry-cache.yaml")
	rt.Spec.Shoot.Name = "mig-prev"
	// Filtering on, so the networking filter has the config the previous manager wrote without apiVersion/kind.
	rt.Spec.Security.Networking.Filter = imv1.Filter{Egress: imv1.Egress{Enabled: true}, Ingress: &imv1.Ingress{Enabled: true}}
	// The first cache has credentials: the previous manager's shoot references its garden copy reg-cache-<uuid>
	// (resource and Secret of that name), while the Runtime's entry names the Secret in the runtime, as its registry
	// cache controller wrote it.
	const previousCopy = "reg-cache-8c3e1f2a-7b6d-4c5e-a9f0-1b2c3d4e5f60"
	require.NoError(t, c.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: previousCopy, Namespace: ns,
		Labels: map[string]string{"kyma-project.io/runtime-id": rt.Name, "kyma-project.io/registry-cache-id": rt.Spec.ImageRegistryCache[0].UID,
			"app.kubernetes.io/managed-by": "infrastructure-manager"}},
		Data: map[string][]byte{"username": []byte("u"), "password": []byte("p")}}))
	rt.Spec.ImageRegistryCache[0].Config.SecretReferenceName = ptr.To(previousCopy)
	rendered := mapping.Runtime(rt)
	rendered.RegistryCredentialCopies = []string{previousCopy}
	prevSpec, err := shoot.Generate(rendered, cfg.ShootConfig())
	if err != nil {
		t.Fatal(err)
	}
	prevSpec.Namespace = ns
	rt.Spec.ImageRegistryCache[0].Config.SecretReferenceName = ptr.To("creds-in-runtime")
	const stale = "reg-cache-5d7f2a9e-0c4b-4e1a-9f3d-2b6c8e1a7f40"
	require.NoError(t, c.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: stale, Namespace: ns},
		Data: map[string][]byte{"username": []byte("u"), "password": []byte("p")}}))
	createUnmarkedAs(t, adapter, prevSpec, rt.Name, func(s *gardencorev1beta1.Shoot) {
		if err := previous.Render(s); err != nil {
			t.Fatal(err)
		}
		s.Spec.Resources = append(s.Spec.Resources, gardencorev1beta1.NamedResourceReference{Name: stale,
			ResourceRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "v1", Kind: "Secret", Name: stale}})
	})
	require.Eventually(t, func() bool {
		s := getShoot(t, c, ns, "mig-prev")
		op := s.Status.LastOperation
		return op != nil && op.State == gardencorev1beta1.LastOperationStateSucceeded && s.Status.ObservedGeneration == s.Generation
	}, 60*time.Second, 200*time.Millisecond, "shoot settled")
	before := getShoot(t, c, ns, "mig-prev")
	current, err := translate.CurrentFromShoot(before)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := shoot.GenerateUpdate(mapping.Runtime(rt), cfg.ShootConfig(), current)
	if err != nil {
		t.Fatalf("generate the update of the previous rendering: %v", err)
	}
	spec.Namespace = ns
	a := ports.ShootApply{Spec: spec, RuntimeID: rt.Name, RuntimeGeneration: 1, SpecHash: spec.Hash()}
	diffs, err := adapter.DryRunAdoption(t.Context(), before, a)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		if !strings.HasPrefix(d.Path, ".metadata.labels.") && !strings.HasPrefix(d.Path, ".metadata.annotations.") &&
			!strings.HasPrefix(d.Path, ".spec.resources") && d.Path != ".metadata.generation" {
			t.Errorf("dry run of the previous rendering: %s; want only the marks and the stale resource", d)
		}
	}
	if _, err := adoptRetrying(t, adapter, "mig-prev", rt.Name, "aws"); err != nil {
		t.Fatal(err)
	}
	if _, err := reapplyLive(t, adapter, a); err != nil {
		t.Fatalf("first apply after adoption: %v", err)
	}
	after := getShoot(t, c, ns, "mig-prev")
	if diff := cmp.Diff(goldenshoots.ExtensionsText(t, before.Spec.Extensions), goldenshoots.ExtensionsText(t, after.Spec.Extensions)); diff != "" {
		t.Errorf("extensions changed by the adoption (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(before.Spec.DNS, after.Spec.DNS); diff != "" {
		t.Errorf("spec.dns changed by the adoption (-before +after):\n%s", diff)
	}
	want := slices.DeleteFunc(slices.Clone(before.Spec.Resources), func(r gardencorev1beta1.NamedResourceReference) bool { return r.Name == stale })
	if diff := cmp.Diff(want, after.Spec.Resources); diff != "" {
		t.Errorf("spec.resources after the adoption (-want +got):\n%s", diff)
	}
	// Everything else of the spec is as it was: the stale resource is the only change.
	b, g := before.Spec.DeepCopy(), after.Spec.DeepCopy()
	b.Resources, g.Resources = nil, nil
	if diff := cmp.Diff(b, g); diff != "" {
		t.Errorf("spec changed beyond the stale resource (-before +after):\n%s", diff)
	}
}
