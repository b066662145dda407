package plans

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/sandbox/gardenbox"
	"github.com/kyma-project/kim/test/sandbox/gardenlet"
	"github.com/kyma-project/kim/test/sandbox/runtimeapi"
	"github.com/kyma-project/kim/test/testenv"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// timeout bounds a provisioning or an update of all plans at once (one shared runtime API server; the simulated
// Gardener takes a second per operation).
const timeout = 4 * time.Minute

func TestMain(m *testing.M) { testenv.Main(m) }

// TestKEBPlansReachReadyIntegration creates one Runtime per KEB plan (keb.Plans: KEB bf89c5d51's plans for their
// default regions, trial and free on each of their providers) in one garden-in-a-box seeded with the default
// catalogue, all at once, and waits until each is Ready with a working kubeconfig and its shoot carries KEB's
// machine type and zones; then changes the machine type as KEB's update does for a customer's change (plans whose
// schema offers one) and waits until each is Ready again with the new type (issue 45). The shared runtime API
// server keeps it cheap: nothing here needs runtimes isolated from each other.
func TestKEBPlansReachReadyIntegration(t *testing.T) {
	env := testenv.Garden(t, testenv.GardenOptions{RuntimeAPIServers: runtimeapi.ModeShared,
		Gardenlet: gardenlet.Options{CreateDuration: time.Second, ReconcileDuration: time.Second, DeleteDuration: time.Second,
			ProgressInterval: 500 * time.Millisecond}})
	ctx := context.Background()
	if err := env.KCPClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: keb.Namespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	opts := testenv.Options(env.Catalogue.Project)
	opts.ConfigFile = testenv.WriteConfigWith(t, nil)
	testenv.RunOperator(t, env.KCP, env.Garden, opts)

	runtimes := make([]*imv1.Runtime, len(keb.Plans))
	for i, p := range keb.Plans {
		rt, err := keb.PlanRuntime(p, fmt.Sprintf("4e450000-0000-4000-8000-%012d", i), fmt.Sprintf("c-45%04d", i))
		if err != nil {
			t.Fatal(err)
		}
		if err := env.KCPClient.Create(ctx, rt); err != nil {
			t.Fatalf("%s: KEB's Runtime refused at admission: %v", p, err)
		}
		runtimes[i] = rt
	}
	forEachPlan(t, "Provision", func(t *testing.T, p keb.Plan, rt *imv1.Runtime) {
		got := waitReady(t, env, rt.Name, 1)
		checkKubeconfig(t, env, rt.Name)
		checkShootWorker(t, env, got, p.MachineType)
	}, runtimes)
	if t.Failed() {
		return
	}
	forEachPlan(t, "ChangeMachineType", func(t *testing.T, p keb.Plan, rt *imv1.Runtime) {
		if p.UpdatedMachineType == "" {
			t.Skipf("%s: KEB's schema offers no machine type for this plan", p)
		}
		gen := testenv.UpdateRuntime(t, env.KCPClient, client.ObjectKeyFromObject(rt), func(rt *imv1.Runtime) { rt.Spec.Shoot.Provider.Workers[0].Machine.Type = p.UpdatedMachineType })
		got := waitReady(t, env, rt.Name, gen)
		checkShootWorker(t, env, got, p.UpdatedMachineType)
	}, runtimes)
}

// forEachPlan runs check for every plan at the same time, as subtests named by the plan's key.
func forEachPlan(t *testing.T, name string, check func(t *testing.T, p keb.Plan, rt *imv1.Runtime), runtimes []*imv1.Runtime) {
	t.Run(name, func(t *testing.T) {
		var wg sync.WaitGroup
		for i, p := range keb.Plans {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.Run(p.Key(), func(t *testing.T) { check(t, p, runtimes[i]) })
			}()
		}
		wg.Wait()
	})
}

func runtimeOf(t *testing.T, env *gardenbox.Env, name string) *imv1.Runtime {
	rt := &imv1.Runtime{}
	if err := env.KCPClient.Get(context.Background(), client.ObjectKey{Namespace: keb.Namespace, Name: name}, rt); err != nil {
		t.Fatalf("get runtime %s: %v", name, err)
	}
	return rt
}

// waitReady waits until the Runtime is Ready for generation gen at least.
func waitReady(t *testing.T, env *gardenbox.Env, name string, gen int64) *imv1.Runtime {
	var rt *imv1.Runtime
	testenv.Eventually(t, timeout, "runtime "+name+" Ready", func() (bool, string) {
		rt = runtimeOf(t, env, name)
		seen := fmt.Sprintf("%s (generation %d, observed %d)", rt.Status.State, rt.Generation, rt.Status.ObservedGeneration)
		for _, c := range rt.Status.Conditions {
			seen += fmt.Sprintf("; %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
		}
		// Failed stays until the spec changes (a refused shoot, an invalid spec): no need to wait for the timeout.
		if rt.Status.State == imv1.RuntimeStateFailed && rt.Status.ObservedGeneration >= gen {
			t.Fatalf("runtime %s Failed: %s", name, seen)
		}
		return rt.Status.State == imv1.RuntimeStateReady && rt.Status.ObservedGeneration >= gen && rt.Generation == rt.Status.ObservedGeneration, seen
	})
	return rt
}

// checkKubeconfig: the kubeconfig Secret KEB and lifecycle-manager read holds a kubeconfig of the contract's shape.
func checkKubeconfig(t *testing.T, env *gardenbox.Env, runtimeID string) {
	s := &corev1.Secret{}
	key := client.ObjectKey{Namespace: keb.Namespace, Name: kubeconfig.SecretName(runtimeID)}
	if err := env.KCPClient.Get(context.Background(), key, s); err != nil {
		t.Fatalf("kubeconfig Secret of Ready runtime: %v", err)
	}
	kc, err := clientcmd.Load(s.Data[kubeconfig.SecretKey])
	if err != nil {
		t.Fatalf("kubeconfig does not parse: %v", err)
	}
	cur := kc.Contexts[kc.CurrentContext]
	if cur == nil || kc.Clusters[cur.Cluster] == nil || kc.Clusters[cur.Cluster].Server == "" ||
		len(kc.Clusters[cur.Cluster].CertificateAuthorityData) == 0 {
		t.Errorf("kubeconfig lacks current-context, server or CA data (docs/keb-contract.md)")
	}
}

// checkShootWorker: the shoot of the Ready runtime was reconciled with the pool's machine type and KEB's zones, in
// the cloud profile of the provider.
func checkShootWorker(t *testing.T, env *gardenbox.Env, rt *imv1.Runtime, machineType string) {
	s := &gardencorev1beta1.Shoot{}
	key := client.ObjectKey{Namespace: env.Catalogue.ProjectNamespace(), Name: rt.Spec.Shoot.Name}
	if err := env.GardenClient.Get(context.Background(), key, s); err != nil {
		t.Fatalf("shoot of Ready runtime: %v", err)
	}
	if s.Status.LastOperation == nil || s.Status.LastOperation.State != gardencorev1beta1.LastOperationStateSucceeded {
		t.Errorf("runtime Ready but shoot %s not reconciled: %+v", s.Name, s.Status.LastOperation)
	}
	i := slices.IndexFunc(s.Spec.Provider.Workers, func(w gardencorev1beta1.Worker) bool { return w.Name == "cpu-worker-0" })
	if i < 0 {
		t.Fatalf("shoot %s has no pool cpu-worker-0", s.Name)
	}
	w := s.Spec.Provider.Workers[i]
	if w.Machine.Type != machineType {
		t.Errorf("shoot %s: machine type %s, want %s", s.Name, w.Machine.Type, machineType)
	}
	if want := rt.Spec.Shoot.Provider.Workers[0].Zones; !slices.Equal(w.Zones, want) {
		t.Errorf("shoot %s: zones %v, want KEB's %v", s.Name, w.Zones, want)
	}
	if p, _ := env.Catalogue.Provider(rt.Spec.Shoot.Provider.Type); s.Spec.CloudProfile == nil || s.Spec.CloudProfile.Name != p.CloudProfile {
		t.Errorf("shoot %s: cloud profile %+v, want %s", s.Name, s.Spec.CloudProfile, p.CloudProfile)
	}
}
