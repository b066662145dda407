package gardener

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/stretchr/testify/require"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/internal/mapping"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/test/sandbox/gardenlet"
	"github.com/kyma-project/kim/test/testenv/goldenshoots"
)

// reapplyLive applies a to an existing shoot as the provisioning use case does, pinned to the shoot observed (read
// live here); the simulated gardenlet may change the shoot in between, which is a conflict to retry.
func reapplyLive(t *testing.T, adapter *Shoots, a ports.ShootApply) (shootstate.Shoot, error) {
	t.Helper()
	return contract.UntilNoConflict(func() (shootstate.Shoot, error) {
		cur, err := adapter.Get(t.Context(), a.Spec.Name, ports.ReadLive)
		if err != nil {
			return shootstate.Shoot{}, err
		}
		a.Precondition = ports.Precondition{UID: cur.UID, ResourceVersion: cur.ResourceVersion}
		return adapter.Apply(t.Context(), a)
	})
}

// TestShootsContractIntegration runs the Shoots contract against the real adapter and the real
// gardener-apiserver, with specs generated from the golden aws Runtime.
func TestShootsContractIntegration(t *testing.T) {
	env := GardenBox(t)
	cfg, err := config.Load("testdata/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rt := loadRuntime(t, "testdata/runtimes/aws.yaml")
	generate := func(t *testing.T, name string) shoot.Spec {
		r := rt.DeepCopy()
		r.Spec.Shoot.Name = name // the DNS domain and the authentication ConfigMap follow the shoot name
		spec, err := shoot.Generate(mapping.Runtime(r), cfg.ShootConfig())
		if err != nil {
			t.Fatalf("generate %s: %v", name, err)
		}
		return spec
	}
	c := env.GardenClient
	ns := env.Catalogue.ProjectNamespace()
	contract.RunShootsContract(t, func(t *testing.T) contract.ShootsFixture {
		adapter := &Shoots{Client: c, Live: c, Namespace: ns, RuntimeNamespace: "kcp-system"}
		return contract.ShootsFixture{
			Shoots: adapter, Lister: adapter,
			Spec:       func(name string) shoot.Spec { return generate(t, name) },
			PutForeign: func(t *testing.T, name string) { createUnmarked(t, adapter, generate(t, name), "") },
			PutPredecessor: func(t *testing.T, name, runtimeID string) {
				createUnmarked(t, adapter, generate(t, name), runtimeID)
			},
			PutProvisioned: func(t *testing.T, name, runtimeID string) {
				createProvisioned(t, adapter, generate(t, name), runtimeID)
			},
			WorkerNames: func(t *testing.T, name string) []string {
				var names []string
				for _, w := range getShoot(t, c, ns, name).Spec.Provider.Workers {
					names = append(names, w.Name)
				}
				return names
			},
			Drift: func(t *testing.T, name string) {
				s := getShoot(t, c, ns, name)
				patch := client.MergeFrom(s.DeepCopy())
				s.Spec.Provider.Workers[0].Maximum++
				if err := c.Patch(t.Context(), s, patch, client.FieldOwner("someone-else")); err != nil {
					t.Fatalf("change shoot %s: %v", name, err)
				}
			},
			Fail: func(t *testing.T, name string) { failShoot(t, c, ns, name) },
		}
	})
}

// TestShootsInSyncAuthConfigMapIntegration: the structured-authentication ConfigMap decides which identity
// providers the cluster trusts; a changed one is drift like a changed shoot field.
func TestShootsInSyncAuthConfigMapIntegration(t *testing.T) {
	env := GardenBox(t)
	rt := loadRuntime(t, "testdata/runtimes/aws-acl-multi-oidc.yaml")
	rt.Spec.Shoot.Name = "is-authcm"
	spec, err := shoot.Generate(mapping.Runtime(rt), goldenshoots.Config(t, "aws-acl-multi-oidc"))
	if err != nil || spec.Authentication == nil {
		t.Fatalf("generate: %v (authentication %v)", err, spec.Authentication)
	}
	c := env.GardenClient
	adapter := &Shoots{Client: c, Live: c, Namespace: env.Catalogue.ProjectNamespace(), RuntimeNamespace: "kcp-system"}
	a := ports.ShootApply{Spec: spec, RuntimeID: rt.Name, RuntimeGeneration: 1, SpecHash: "h"}
	if _, err := adapter.Apply(t.Context(), a); err != nil {
		t.Fatalf("apply: %v", err)
	}
	inSync := func() bool {
		got, err := adapter.InSync(t.Context(), a)
		if err != nil {
			t.Fatalf("InSync: %v", err)
		}
		return got.InSync
	}
	if !inSync() {
		t.Fatal("not in sync right after apply")
	}
	cm := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: adapter.Namespace, Name: spec.Authentication.ConfigMapName}
	if err := c.Get(t.Context(), key, cm); err != nil {
		t.Fatal(err)
	}
	if ns, name, ok := shoot.RuntimeOf(cm.Labels, cm.Annotations); !ok || ns != "kcp-system" || name != rt.Name {
		t.Errorf("ConfigMap does not lead back to its Runtime: %s/%s %v", ns, name, ok)
	}
	patch := client.MergeFrom(cm.DeepCopy())
	cm.Data[translate.AuthenticationConfigKey] += "\n# changed by someone else\n"
	if err := c.Patch(t.Context(), cm, patch); err != nil {
		t.Fatal(err)
	}
	if inSync() {
		t.Error("in sync although the authentication ConfigMap was changed")
	}
	if _, err := reapplyLive(t, adapter, a); err != nil {
		t.Fatalf("re-apply: %v", err)
	}
	if !inSync() {
		t.Error("not in sync after re-apply")
	}
}

// TestShootsInSyncAfterGardenerIntegration: Gardener changes shoots itself (the scheduler binds a seed, which
// bumps the generation; defaulting adds fields; a "major.minor" version is completed). None of that is drift:
// for every golden Runtime, the shoot the adapter applied is still in sync with the update the operator
// generates after Gardener finished creating it. A wrong answer here means re-applying every shoot on every
// reconcile.
func TestShootsInSyncAfterGardenerIntegration(t *testing.T) {
	env := GardenBox(t)
	files, err := filepath.Glob("testdata/runtimes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden runtimes: %v", err)
	}
	c := env.GardenClient
	ns := env.Catalogue.ProjectNamespace()
	adapter := &Shoots{Client: c, Live: c, Namespace: ns, RuntimeNamespace: "kcp-system"}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rt := loadRuntime(t, f)
			rt.Spec.Shoot.Name = "is-" + strings.ReplaceAll(name, "-", "")
			if len(rt.Spec.Shoot.Name) > 14 {
				rt.Spec.Shoot.Name = rt.Spec.Shoot.Name[:14]
			}
			spec, err := shoot.Generate(mapping.Runtime(rt), goldenshoots.Config(t, name))
			if err != nil {
				if _, statErr := os.Stat("testdata/shoots/" + name + ".error"); statErr == nil {
					t.Skipf("no shoot for this runtime (an .error golden): %v", err)
				}
				t.Fatal(err)
			}
			a := ports.ShootApply{Spec: spec, RuntimeID: rt.Name, RuntimeGeneration: 1, SpecHash: "h"}
			if _, err := adapter.Apply(t.Context(), a); err != nil {
				t.Fatalf("apply: %v", err)
			}
			applied := getShoot(t, c, ns, spec.Name).Generation
			require.Eventually(t, func() bool {
				op := getShoot(t, c, ns, spec.Name).Status.LastOperation
				return op != nil && op.Type == gardencorev1beta1.LastOperationTypeCreate && op.State == gardencorev1beta1.LastOperationStateSucceeded
			}, 2*time.Minute, 200*time.Millisecond, "Gardener finished creating")
			if s := getShoot(t, c, ns, spec.Name); s.Spec.SeedName == nil || s.Generation == applied {
				// Some golden runtimes ask for seeds the catalogue lacks; the others prove the point.
				t.Logf("no generation bump by a seed binding (seed %v, generation %d)", s.Spec.SeedName, s.Generation)
			}
			cur, err := adapter.Current(t.Context(), spec.Name)
			if err != nil || cur == nil {
				t.Fatalf("current: %v, %v", cur, err)
			}
			update, err := shoot.GenerateUpdate(mapping.Runtime(rt), goldenshoots.Config(t, name), *cur)
			if err != nil {
				t.Fatalf("generate update: %v", err)
			}
			a.Spec = update
			got, err := adapter.InSync(t.Context(), a)
			if err != nil || !got.InSync {
				t.Errorf("InSync after Gardener created the shoot = %+v, %v; want true", got, err)
				logDifferences(t, adapter, a)
			}
		})
	}
}

// adoptRetrying adopts the shoot name for runtimeID as the use cases do: the gardenlet writes a shoot it reconciles
// every second, and an adoption that keeps meeting those writes on a loaded machine is tried again on the next pass.
func adoptRetrying(t *testing.T, adapter *Shoots, name, runtimeID, plan string) (shootstate.Shoot, error) {
	return contract.UntilNoConflict(func() (shootstate.Shoot, error) { return adapter.Adopt(t.Context(), name, runtimeID, plan) })
}

// createUnmarked creates the shoot of spec without the operator's marks, as someone else would; with runtimeID,
// as the previous infrastructure manager did (only the runtime-id annotation).
func createUnmarked(t *testing.T, adapter *Shoots, spec shoot.Spec, runtimeID string) {
	t.Helper()
	createUnmarkedAs(t, adapter, spec, runtimeID, nil)
}

// createUnmarkedAs is createUnmarked with the shoot changed by change before it is created.
func createUnmarkedAs(t *testing.T, adapter *Shoots, spec shoot.Spec, runtimeID string, change func(*gardencorev1beta1.Shoot)) {
	t.Helper()
	spec.Namespace = adapter.Namespace
	if err := adapter.applyAuthConfigMap(t.Context(), ports.ShootApply{Spec: spec}); err != nil {
		t.Fatal(err)
	}
	s, err := translate.ToShoot(spec)
	if err != nil {
		t.Fatal(err)
	}
	s.Labels, s.Annotations = nil, nil
	if runtimeID != "" {
		s.Annotations = map[string]string{shoot.AnnotationRuntimeID: runtimeID}
	}
	if change != nil {
		change(s)
	}
	if err := adapter.Client.Create(t.Context(), s); err != nil {
		t.Fatalf("create shoot %s: %v", spec.Name, err)
	}
}

// createProvisioned creates a shoot as the provisioner did: its runtime-id and licence-type annotations only.
func createProvisioned(t *testing.T, adapter *Shoots, spec shoot.Spec, runtimeID string) {
	t.Helper()
	createUnmarked(t, adapter, spec, "")
	s := getShoot(t, adapter.Client, adapter.Namespace, spec.Name)
	patch := client.MergeFrom(s.DeepCopy())
	s.Annotations = map[string]string{translate.AnnotationProvisionerRuntimeID: runtimeID, translate.AnnotationProvisionerLicenceType: "PARTNER"}
	if err := adapter.Client.Patch(t.Context(), s, patch); err != nil {
		t.Fatalf("annotate shoot %s as the provisioner did: %v", spec.Name, err)
	}
}

func logDifferences(t *testing.T, adapter *Shoots, a ports.ShootApply) {
	t.Helper()
	current, err := adapter.get(t.Context(), a.Spec.Name)
	if err != nil || current == nil {
		return
	}
	desired, err := adapter.desired(a, current)
	if err != nil {
		t.Logf("desired: %v", err)
		return
	}
	want, err := toApplyObject(desired)
	if err != nil {
		return
	}
	have, err := toJSONMap(current)
	if err != nil {
		return
	}
	for _, d := range shootDifferences(want.Object, have) {
		t.Logf("differs: %s", d)
	}
}

func loadRuntime(t *testing.T, path string) *imv1.Runtime {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rt := &imv1.Runtime{}
	if err := yaml.UnmarshalStrict(data, rt); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rt
}

func getShoot(t *testing.T, c client.Client, ns, name string) *gardencorev1beta1.Shoot {
	t.Helper()
	s := &gardencorev1beta1.Shoot{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
		t.Fatalf("get shoot %s: %v", name, err)
	}
	return s
}

// TestSeedsContractIntegration runs the Seeds contract against the real adapter on the sandbox's seeds.
func TestSeedsContractIntegration(t *testing.T) {
	env := GardenBox(t)
	var seeds gardencorev1beta1.SeedList
	require.NoError(t, env.GardenClient.List(t.Context(), &seeds))
	require.NotEmpty(t, seeds.Items, "the sandbox catalogue has seeds")
	first := seeds.Items[0]
	adapter := &Shoots{Client: env.GardenClient, Live: env.GardenClient, Namespace: env.Catalogue.ProjectNamespace()}
	fixtures := 0
	contract.RunSeedsContract(t, func(t *testing.T) contract.SeedsFixture {
		fixtures++
		return contract.SeedsFixture{Seeds: adapter,
			Available: [2]string{first.Spec.Provider.Type, first.Spec.Provider.Region},
			None:      [2]string{first.Spec.Provider.Type, fmt.Sprintf("nowhere-%d", fixtures)},
			Seed:      first.Name, SeedRegion: first.Spec.Provider.Region,
			AddHidden: func(t *testing.T, provider, region string) {
				hidden := first.DeepCopy()
				hidden.ObjectMeta = metav1.ObjectMeta{Name: "hidden-" + region, Labels: map[string]string{"seed.gardener.cloud/region": region}}
				hidden.Spec.Provider.Type, hidden.Spec.Provider.Region = provider, region
				hidden.Spec.Settings.Scheduling.Visible = false
				require.NoError(t, env.GardenClient.Create(t.Context(), hidden))
			}}
	})
}

// failShoot makes the simulated gardenlet fail the shoot's next reconciliation (a fault it reads from annotations)
// and starts one: a status written by the test would race with the gardenlet's own.
func failShoot(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	require.Eventually(t, func() bool {
		op := getShoot(t, c, ns, name).Status.LastOperation
		return op != nil && op.State == gardencorev1beta1.LastOperationStateSucceeded
	}, time.Minute, 100*time.Millisecond, "shoot %s created", name)
	s := getShoot(t, c, ns, name)
	patch := client.MergeFrom(s.DeepCopy())
	metav1.SetMetaDataAnnotation(&s.ObjectMeta, gardenlet.AnnotationFailWith, string(gardencorev1beta1.ErrorInfraQuotaExceeded))
	metav1.SetMetaDataAnnotation(&s.ObjectMeta, gardenlet.AnnotationFailOperation, string(gardencorev1beta1.LastOperationTypeReconcile))
	metav1.SetMetaDataAnnotation(&s.ObjectMeta, "gardener.cloud/operation", "reconcile")
	if err := c.Patch(t.Context(), s, patch, client.FieldOwner("someone-else")); err != nil {
		t.Fatalf("inject a failure into shoot %s: %v", name, err)
	}
	require.Eventually(t, func() bool {
		s := getShoot(t, c, ns, name)
		op := s.Status.LastOperation
		return op != nil && op.State == gardencorev1beta1.LastOperationStateFailed && s.Status.ObservedGeneration == s.Generation
	}, time.Minute, 100*time.Millisecond, "shoot %s Failed", name)
}

// TestStaleRegistryCacheResourcesGoIntegration: a shoot the previous infrastructure manager created keeps a
// `reg-cache-*` credential resource of a cache the Runtime no longer has. Adopting it and applying a spec it already
// holds records only the marks (a server-side apply would make Gardener reconcile the cluster for nothing), and that
// path kept the stale entry forever; the previous manager dropped stale ones on every update, and so must this.
func TestStaleRegistryCacheResourcesGoIntegration(t *testing.T) {
	env := GardenBox(t)
	rt := loadRuntime(t, "testdata/runtimes/aws.yaml")
	rt.Spec.Shoot.Name = "stale-rc"
	cfg, err := config.Load("testdata/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := shoot.Generate(mapping.Runtime(rt), cfg.ShootConfig())
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	c, ns := env.GardenClient, env.Catalogue.ProjectNamespace()
	adapter := &Shoots{Client: c, Live: c, Namespace: ns, RuntimeNamespace: "kcp-system"}
	const id = "9f1c0000-0000-4000-8000-0000000057a1"
	createUnmarked(t, adapter, spec, id)
	// Gardener admits references to existing Secrets only.
	if err := c.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "reg-cache-0f3a", Namespace: ns}}); err != nil {
		t.Fatalf("create Secret: %v", err)
	}
	s := getShoot(t, c, ns, spec.Name)
	patch := client.MergeFrom(s.DeepCopy())
	s.Spec.Resources = append(s.Spec.Resources, gardencorev1beta1.NamedResourceReference{Name: "reg-cache-0f3a",
		ResourceRef: autoscalingv1.CrossVersionObjectReference{Kind: "Secret", Name: "reg-cache-0f3a", APIVersion: "v1"}})
	if err := c.Patch(t.Context(), s, patch, client.FieldOwner("previous-manager")); err != nil {
		t.Fatalf("add a registry-cache resource as the previous manager: %v", err)
	}
	if _, err := adoptRetrying(t, adapter, spec.Name, id, "aws"); err != nil {
		t.Fatalf("adopt: %v", err)
	}
	generation := getShoot(t, c, ns, spec.Name).Generation
	// The sandbox's gardenlet writes the shoot meanwhile: apply pinned to a fresh read, as callers do.
	fixture := contract.ShootsFixture{Shoots: adapter}
	if err := contract.Reapply(t, fixture, ports.ShootApply{Spec: spec, RuntimeID: id, RuntimeGeneration: 1}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	after := getShoot(t, c, ns, spec.Name)
	for _, r := range after.Spec.Resources {
		if r.Name == "reg-cache-0f3a" {
			t.Errorf("resources after apply %+v: want the stale reg-cache-0f3a removed", after.Spec.Resources)
		}
	}
	if appliedByOperator(after) {
		t.Logf("the apply was a server-side apply (generation %d -> %d), not only the marks", generation, after.Generation)
	}
}
