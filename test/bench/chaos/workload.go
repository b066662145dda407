package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/bench/harness"
	"github.com/kyma-project/kim/test/sandbox/gardenbox"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// workload is KEB during the chaos: it creates N Runtimes (the production plan mix), then changes their workers,
// deletes them and creates them again (same runtime ID and shoot), and logs what it did and when.
type workload struct {
	env   *gardenbox.Env
	plans []*imv1.Runtime
	n     int
	grace time.Duration
	rnd   *rand.Rand

	mu        sync.Mutex
	history   []runtimeEvent
	live      map[int]bool
	deletedAt map[int]time.Time
	ops       map[string]int
}

func newWorkload(env *gardenbox.Env, n int, grace time.Duration, seed uint64) (*workload, error) {
	w := &workload{env: env, n: n, grace: grace, rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		live: map[int]bool{}, deletedAt: map[int]time.Time{}, ops: map[string]int{}}
	paths := []string{filepath.Join(keb.RepoRoot(), "operator", "api", "v1", "testdata", "keb-runtime-trial.yaml"),
		keb.GoldenRuntimePath("aws"), keb.GoldenRuntimePath("azure"), keb.GoldenRuntimePath("gcp")}
	for _, p := range paths {
		rt, err := keb.ReadRuntime(p)
		if err != nil {
			return nil, err
		}
		w.plans = append(w.plans, rt)
	}
	return w, nil
}

func (w *workload) runtime(i int) *imv1.Runtime {
	return keb.WithIdentity(w.plans[i%len(w.plans)], keb.RuntimeID(i), keb.ShootName(i))
}

// createAll creates every Runtime.
func (w *workload) createAll(ctx context.Context) error {
	return harness.Parallel(ctx, w.n, 8, func(ctx context.Context, i int) error { return w.create(ctx, i, "create") })
}

func (w *workload) create(ctx context.Context, i int, op string) error {
	if err := w.env.KCPClient.Create(ctx, w.runtime(i)); err != nil {
		return fmt.Errorf("%s runtime %d: %w", op, i, err)
	}
	w.record(i, true, time.Now(), op)
	return nil
}

func (w *workload) record(i int, created bool, at time.Time, op string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.history = append(w.history, runtimeEvent{ID: keb.RuntimeID(i), Created: created, At: at})
	w.live[i] = created
	if !created {
		w.deletedAt[i] = at
	}
	w.ops[op]++
}

// run does one random step every interval until ctx ends. Errors of single steps (conflicts, a Runtime not
// gone yet) are counted, not fatal: KEB retries too.
func (w *workload) run(ctx context.Context, interval time.Duration) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
		if err := w.step(ctx); err != nil && ctx.Err() == nil {
			w.mu.Lock()
			w.ops["skipped"]++
			w.mu.Unlock()
		}
	}
}

// step picks a Runtime: a live one gets a worker change or, when Ready, is deleted; a deleted one is created again
// either early in its window (its cluster is restored) or once its shoot is gone (a new cluster). Nothing is
// created again near the end of a window, where the reaper's live check and KEB's create would race.
func (w *workload) step(ctx context.Context) error {
	w.mu.Lock()
	i := w.rnd.IntN(w.n)
	live, deletedAt, roll, workers := w.live[i], w.deletedAt[i], w.rnd.Float64(), int32(3+w.rnd.IntN(20))
	w.mu.Unlock()
	rt := &imv1.Runtime{}
	key := client.ObjectKey{Namespace: keb.Namespace, Name: keb.RuntimeID(i)}
	if !live {
		if time.Since(deletedAt) < w.grace/3 {
			return w.create(ctx, i, "re-create (restore)")
		}
		err := w.env.GardenClient.Get(ctx, client.ObjectKey{Namespace: w.env.Catalogue.ProjectNamespace(), Name: keb.ShootName(i)}, &gardencorev1beta1.Shoot{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("runtime %d: shoot still there (%w)", i, err)
		}
		if err := w.env.KCPClient.Get(ctx, key, rt); !apierrors.IsNotFound(err) {
			return fmt.Errorf("runtime %d: not gone yet (%w)", i, err)
		}
		return w.create(ctx, i, "re-create (new cluster)")
	}
	if err := w.env.KCPClient.Get(ctx, key, rt); err != nil {
		return err
	}
	if roll < 0.35 && rt.Status.State == imv1.RuntimeStateReady {
		at := time.Now()
		if err := w.env.KCPClient.Delete(ctx, rt); err != nil {
			return err
		}
		w.record(i, false, at, "delete")
		return nil
	}
	rt.Spec.Shoot.Provider.Workers[0].Maximum = max(workers, rt.Spec.Shoot.Provider.Workers[0].Minimum)
	if err := w.env.KCPClient.Update(ctx, rt); err != nil {
		return err
	}
	w.mu.Lock()
	w.ops["update workers"]++
	w.mu.Unlock()
	return nil
}

func (w *workload) snapshot() ([]runtimeEvent, map[string]int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ops := map[string]int{}
	for k, v := range w.ops {
		ops[k] = v
	}
	return append([]runtimeEvent(nil), w.history...), ops
}
