package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/bench/harness"
	"github.com/kyma-project/kim/test/sandbox/gardenlet"
	"github.com/kyma-project/kim/test/sandbox/runtimeapi"
	"github.com/kyma-project/kim/test/testenv"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// extraOffset separates the IDs and shoot names of the extra GardenerClusters from those of the Runtimes.
const extraOffset = 0x100000

// fleetWorld is garden-in-a-box for the fleet: one runtime API server shared by all shoots (admin bindings are
// written into it), a simulated gardenlet with short operations.
type fleetWorld struct {
	*harness.World
	runtimes, extra, workers int
	plans                    []*imv1.Runtime
}

func startFleetWorld(ctx context.Context, c config) (*fleetWorld, error) {
	o := testenv.GardenOptions{
		RuntimeAPIServers: runtimeapi.ModeShared,
		Gardenlet: gardenlet.Options{CreateDuration: c.createDuration, ReconcileDuration: time.Second, DeleteDuration: time.Second,
			ProgressInterval: time.Second, MaxConcurrentReconciles: 25},
	}
	if c.seed {
		// The gardener-apiserver's ResourceReferenceManager resolves a new shoot's references (DNS secret,
		// authentication ConfigMap) with live requests through a client at client-go's default 5 QPS: a shoot and a
		// half a second, an hour for 10,000 copies. A seeded fleet is copied from shoots that passed it.
		o.GardenerAPIServerArgs = []string{"--disable-admission-plugins=ResourceReferenceManager"}
	}
	w, err := harness.StartWorld(ctx, o, keb.Namespace)
	if err != nil {
		return nil, err
	}
	fw := &fleetWorld{World: w, runtimes: c.runtimes, extra: c.extra, workers: 16}
	// The plan mix KEB sends: trial, aws, azure, gcp in turn.
	paths := []string{filepath.Join(keb.RepoRoot(), "operator", "api", "v1", "testdata", "keb-runtime-trial.yaml"),
		keb.GoldenRuntimePath("aws"), keb.GoldenRuntimePath("azure"), keb.GoldenRuntimePath("gcp")}
	for _, p := range paths {
		rt, err := keb.ReadRuntime(p)
		if err != nil {
			_ = w.Env.Stop()
			return nil, err
		}
		fw.plans = append(fw.plans, rt)
	}
	return fw, nil
}

// extraShoots are the names of the extra shoots and the runtime IDs of their GardenerClusters.
func (w *fleetWorld) extraShoots() (names, runtimeIDs []string) {
	names, runtimeIDs = make([]string, w.extra), make([]string, w.extra)
	for i := range names {
		names[i], runtimeIDs[i] = keb.ShootName(extraOffset+i), keb.RuntimeID(extraOffset+i)
	}
	return names, runtimeIDs
}

// createRuntimes creates the Runtimes (KEB's plan mix) and the extra GardenerClusters (on the extra shoots) with
// parallel clients, Runtimes and clusters interleaved.
func (w *fleetWorld) createRuntimes(ctx context.Context) error {
	var objs []client.Object
	for i := range max(w.runtimes, w.extra) {
		if i < w.runtimes {
			objs = append(objs, keb.WithIdentity(w.plans[i%len(w.plans)], keb.RuntimeID(i), keb.ShootName(i)))
		}
		if i < w.extra {
			objs = append(objs, keb.GardenerCluster(keb.RuntimeID(extraOffset+i), keb.ShootName(extraOffset+i)))
		}
	}
	return harness.Parallel(ctx, len(objs), w.workers, func(ctx context.Context, i int) error {
		if err := w.Env.KCPClient.Create(ctx, objs[i]); err != nil {
			return fmt.Errorf("create %s: %w", objs[i].GetName(), err)
		}
		return nil
	})
}

// progress is what convergence polling sees.
type progress struct {
	runtimesReady, clustersReady int
	runtimeStates                map[imv1.RuntimeState]int
}

func (w *fleetWorld) progress(ctx context.Context) (progress, error) {
	p := progress{runtimeStates: map[imv1.RuntimeState]int{}}
	var rts imv1.RuntimeList
	if err := w.Env.KCPClient.List(ctx, &rts, client.InNamespace(keb.Namespace)); err != nil {
		return p, fmt.Errorf("list runtimes: %w", err)
	}
	for _, rt := range rts.Items {
		p.runtimeStates[rt.Status.State]++
	}
	p.runtimesReady = p.runtimeStates[imv1.RuntimeStateReady]
	var gcs imv1.GardenerClusterList
	if err := w.Env.KCPClient.List(ctx, &gcs, client.InNamespace(keb.Namespace)); err != nil {
		return p, fmt.Errorf("list gardener clusters: %w", err)
	}
	for _, gc := range gcs.Items {
		if gc.Status.State == imv1.GardenerClusterStateReady {
			p.clustersReady++
		}
	}
	return p, nil
}

// touchShoot is what the simulated gardenlet does to a healthy shoot now and then: it reports its last operation
// again (a status update, no spec change), which every watcher of shoots sees as an event.
func (w *fleetWorld) touchShoot(ctx context.Context, name string, at time.Time) error {
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"lastOperation": map[string]any{
		"lastUpdateTime": metav1.NewTime(at), "description": "Shoot cluster has been successfully reconciled (harness).",
	}}})
	if err != nil {
		return err
	}
	s := &gardencorev1beta1.Shoot{}
	s.Name, s.Namespace = name, w.ShootNamespace
	if err := w.Env.GardenClient.Status().Patch(ctx, s, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("touch shoot %s: %w", name, err)
	}
	return nil
}
