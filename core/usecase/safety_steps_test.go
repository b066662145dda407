package usecase_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
)

// step is one op with its arguments, drawn once so a sequence can be replayed and shrunk.
type step struct {
	Op                      op
	Runtime, Shoot, Plan, N int
	D                       time.Duration
	On                      bool
	// Side is the kubeconfig step that happens right after (nil: none).
	Side *step
}

func (s step) String() string {
	out := fmt.Sprintf("%s(rt=%s shoot=%s plan=%s n=%d d=%s on=%v)", opNames[s.Op], modelIDs[s.Runtime], modelShoots[s.Shoot],
		modelPlans[s.Plan], s.N, s.D, s.On)
	if s.Side != nil {
		out += fmt.Sprintf(" + %s(rt=%s shoot=%s n=%d on=%v)", opNames[s.Side.Op], modelIDs[s.Side.Runtime], modelShoots[s.Side.Shoot],
			s.Side.N, s.Side.On)
	}
	return out
}

// randomStep draws a step; reconciles, reaps and Gardener's progress are the most frequent, as in reality.
func randomStep(r *rand.Rand) step {
	weights := map[op]int{opCreate: 4, opRecreateSame: 5, opUpdate: 2, opDelete: 5, opReconcile: 18, opReap: 10, opGardener: 8,
		opFail: 2, opSync: 6, opTimePasses: 5, opSkew: 2, opRestore: 2, opRequestRestore: 1, opRelabel: 2, opBrake: 1,
		opResetBreaker: 1, opForeign: 1, opPredecessor: 1, opKubeconfig: 4, opFaults: 1, opLag: 4, opMassDelete: 1, opEditRecord: 1,
		opForge: 2}
	o := draw(r, weights)
	// Durations land before and after the windows (24h, 72h) and within a clock skew of their end.
	durations := []time.Duration{time.Minute, 30 * time.Minute, time.Hour, 22 * time.Hour, 25 * time.Hour, 70 * time.Hour,
		73 * time.Hour, 8 * 24 * time.Hour}
	skews := []time.Duration{0, 0, time.Minute, 3 * time.Hour, -3 * time.Hour}
	s := step{Op: o, Runtime: r.IntN(len(modelIDs)), Shoot: r.IntN(len(modelShoots)), Plan: r.IntN(len(modelPlans)),
		N: r.IntN(100), D: durations[r.IntN(len(durations))], On: r.IntN(2) == 0}
	if o == opSkew {
		s.D = skews[r.IntN(len(skews))]
	}
	return s
}

// randomSideStep draws, from its own stream, the kubeconfig step that happens next to a step (nil: none). A stream
// of its own keeps the Runtime steps of a seed what they were before GardenerClusters joined the model.
func randomSideStep(r *rand.Rand) *step {
	if r.IntN(10) >= 3 {
		return nil
	}
	o := draw(r, map[op]int{opGCCreate: 3, opGCHostile: 2, opGCReconcile: 8, opGCForce: 1, opGCDelete: 2, opSecretPlant: 2})
	return &step{Op: o, Runtime: r.IntN(len(modelIDs)), Shoot: r.IntN(len(modelShoots)), N: r.IntN(100), On: r.IntN(2) == 0}
}

// draw picks an op with the given weights.
func draw(r *rand.Rand, weights map[op]int) op {
	total := 0
	for _, w := range weights {
		total += w
	}
	n := r.IntN(total)
	o := op(0)
	for o = 0; o < numOps; o++ {
		if n < weights[o] {
			break
		}
		n -= weights[o]
	}
	return o
}

func (w *world) existingRuntimes() []string {
	var ids []string
	for _, id := range modelIDs {
		if _, ok := w.runtimes[id]; ok {
			ids = append(ids, id)
		}
	}
	return ids
}

func (w *world) putRuntime(rt *kcpRuntime) {
	w.runtimes[rt.id] = rt
	w.kcp.Put(fake.RestoreDocument{Name: rt.id, Namespace: modelNamespace, Shoot: rt.shoot, Plan: rt.plan})
}

// adoptRestored adds Runtimes a restore created in the registry to the model's KCP.
func (w *world) adoptRestored() {
	for _, stored := range w.kcp.List() {
		if _, ok := w.runtimes[stored.Name]; !ok {
			w.runtimes[stored.Name] = &kcpRuntime{id: stored.Name, shoot: stored.Shoot, plan: stored.Plan, generation: 1}
		}
	}
}

// drain lets every pending deletion and restore finish: faults, lag, skew and the brake off, the breaker reset,
// time past the privacy cap, every Runtime reconciled, every shoot reaped and finished by Gardener.
func (w *world) drain() {
	ctx := contextFor()
	w.faults = false
	w.garden.LagCache(false)
	w.operator.skew = 0
	w.guard.SetFrozen(false)
	for round := 0; round < 6; round++ {
		w.guard.ResetBreaker()
		w.truth.Step(8 * 24 * time.Hour)
		for _, id := range modelIDs {
			w.reconcile(id)
			w.reconcile(id)
		}
		for _, name := range w.garden.Shoots() {
			for range 3 {
				if _, err := w.reaper.Reap(ctx, name, w.operator.Now()); err != nil && !errors.Is(err, ports.ErrConflict) {
					break
				}
			}
			w.adoptRestored()
			w.garden.FinishDeletion(name)
		}
	}
}

func modelConfig() shoot.Config {
	return shoot.Config{Project: "kyma", DefaultKubernetesVersion: "1.33",
		DefaultMachineImage: shoot.MachineImage{Name: "gardenlinux", Version: "1592.1.0"},
		CloudProfiles:       map[shoot.Provider]string{shoot.AWS: "aws"}}
}

// skewedClock is the operator's clock: the true time plus a skew that a step may change.
type skewedClock struct {
	base *fake.Clock
	skew time.Duration
}

func (c *skewedClock) Now() time.Time { return c.base.Now().Add(c.skew) }
