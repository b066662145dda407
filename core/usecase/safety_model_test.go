package usecase_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

// The safety model: KEB, people, Gardener and the operator's use cases act on the in-memory fakes in random
// order; the property test (safety_property_test.go) checks the safety invariants after every step.

var (
	modelIDs    = []string{"rt-a", "rt-b", "rt-c", "rt-d", "rt-e"}
	modelShoots = []string{"c-one", "c-two", "c-three", "c-four", "c-five"}
	modelPlans  = []string{"trial", "aws", "azure"}
)

const modelNamespace = "kcp-system"

func modelPolicy() deletion.Policy {
	return deletion.Policy{DefaultWindow: 72 * time.Hour, PlanWindows: map[string]time.Duration{"trial": 0, "azure": 24 * time.Hour},
		MaxWindow: 7 * 24 * time.Hour, ForceDeletionAfter: 2 * time.Hour, Budget: deletion.Budget{Limit: 2, Per: time.Hour}}
}

// op is one thing that happens.
type op int

const (
	opCreate op = iota
	opRecreateSame
	opUpdate
	opDelete
	opReconcile
	opReap
	opGardener
	opFail
	opSync
	opTimePasses
	opSkew
	opRestore
	opRequestRestore
	opRelabel
	opBrake
	opResetBreaker
	opForeign
	opPredecessor
	opKubeconfig
	opFaults
	opLag
	opMassDelete
	opEditRecord
	opGCCreate
	opGCHostile
	opGCReconcile
	opGCForce
	opGCDelete
	opSecretPlant
	opForge
	numOps
)

var opNames = [...]string{"Create", "RecreateSame", "Update", "Delete", "Reconcile", "Reap", "Gardener", "Fail", "SyncCache",
	"TimePasses", "Skew", "Restore", "RequestRestore", "Relabel", "Brake", "ResetBreaker", "Foreign", "Predecessor",
	"Kubeconfig", "Faults", "LagCache", "MassDelete", "EditRecord", "GCCreate", "GCHostile", "GCReconcile", "GCForce", "GCDelete",
	"SecretPlant", "Forge"}

// kcpRuntime is a Runtime CR in the model's KCP.
type kcpRuntime struct {
	id, shoot, plan string
	generation      int64
	deleting        bool
	everReady       bool
	configured      usecase.RecordedConfiguration
}

// world is one run of the model.
type world struct {
	truth    *fake.Clock // the garden's and the API servers' time
	operator *skewedClock
	garden   *fake.Garden
	kcp      *fake.Runtimes
	access   *fake.AccessObjects
	guard    *fake.DeletionGuard
	records  *fake.DeletionRecords
	// bindings are KEB's credentials bindings of one global account (tenant "ga"); runtimes of the account share
	// them as KEB assigns them (see modelBinding).
	bindings *fake.CredentialsBindings
	rng      *rand.Rand
	faults   bool

	provision *usecase.Provisioner
	teardown  *usecase.Teardown
	reaper    *usecase.Reaper
	restorer  *usecase.Restorer
	kubeconfigs

	runtimes map[string]*kcpRuntime
	gone     map[string]kcpRuntime // runtimes KEB deleted, for a re-create with the same ID
	foreign  map[string]string     // foreign shoot -> its UID
	preds    map[string]string     // predecessor shoot UID -> the runtime ID it was created for
	// longest is, per shoot UID, the window of the plan its runtime had when the operator created (or adopted) the
	// shoot: relabelling the plan must never shorten the window below it.
	longest map[string]time.Duration
	// owner is, per shoot UID, the runtime the operator created, adopted or took the shoot back for: a shoot whose
	// owner is a Runtime in the KCP is that Runtime's cluster, whatever records someone wrote on it.
	owner map[string]string
	// forged are the shoot UIDs someone wrote a deletion record on (opForge): a person resolves those.
	forged map[string]bool
	// readyWhenDeleted is, per shoot UID, whether the runtime deleting it was ever Ready (a never-healthy cluster is
	// deleted at once, whatever its plan).
	readyWhenDeleted map[string]bool
}

func newWorld(seed uint64) *world {
	truth := fake.NewClock(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	w := &world{truth: truth, operator: &skewedClock{base: truth}, garden: fake.NewGarden(truth), kcp: fake.NewRuntimes(),
		access: fake.NewAccessObjects(), guard: &fake.DeletionGuard{}, records: fake.NewDeletionRecords(),
		rng:      rand.New(rand.NewPCG(seed, seed^0x5eed)),
		runtimes: map[string]*kcpRuntime{}, gone: map[string]kcpRuntime{}, foreign: map[string]string{}, preds: map[string]string{},
		longest: map[string]time.Duration{}, readyWhenDeleted: map[string]bool{}, owner: map[string]string{}, forged: map[string]bool{}}
	policy := modelPolicy()
	w.bindings = fake.NewCredentialsBindings(w.garden)
	for _, name := range modelShoots {
		w.bindings.Create(modelBinding(name), map[string]string{"tenantName": "ga"})
	}
	w.provision = &usecase.Provisioner{Shoots: w.garden, Seeds: w.garden, Access: w.access, Configurator: fake.NewRuntimeConfigurator(),
		Guard: w.guard, Config: modelConfig(), Policy: policy, Bindings: w.bindings, Records: w.records,
		Clock: &fake.ServerClock{Clock: truth}}
	w.teardown = &usecase.Teardown{Shoots: w.garden, Access: w.access, Records: w.records, Policy: policy,
		Clock: &fake.ServerClock{Clock: truth}, Bindings: w.bindings}
	w.restorer = &usecase.Restorer{Shoots: w.garden, Runtimes: w.kcp, Policy: policy, DefaultNamespace: modelNamespace}
	w.reaper = &usecase.Reaper{Shoots: w.garden, Runtimes: w.kcp, Records: w.records, Namespace: modelNamespace, Guard: w.guard,
		Clock:    &fake.ServerClock{Clock: truth},
		Restorer: w.restorer, Policy: policy, Bindings: w.bindings}
	w.kubeconfigs = newKubeconfigs(w.garden, truth)
	w.bindings.Err = func(method string) error {
		if w.faults && method != "Get" && w.rng.IntN(4) == 0 {
			return fmt.Errorf("%s: injected: %w", method, ports.ErrTransient)
		}
		return nil
	}
	w.garden.Err = func(method string) error {
		if w.faults && method != "Get" && w.rng.IntN(4) == 0 {
			return fmt.Errorf("%s: injected: %w", method, ports.ErrTransient)
		}
		return nil
	}
	return w
}

// modelBinding is the credentials binding KEB assigned to the instance of a shoot name (kept across suspensions).
// KEB gives every runtime of a global account the binding it selects with tenantName=<GA>,!dirty, so siblings
// share one: c-one and c-two share cb-1, c-three and c-four cb-2; c-five has its own (a single runtime).
func modelBinding(shootName string) string {
	switch shootName {
	case "c-one", "c-two":
		return "cb-1"
	case "c-three", "c-four":
		return "cb-2"
	}
	return "cb-" + shootName
}

// spec is the domain Runtime KEB asks for.
func (rt *kcpRuntime) spec() shoot.Runtime {
	return shoot.Runtime{ID: rt.id, Generation: rt.generation, GlobalAccountID: "ga", SubaccountID: "sa", Name: rt.shoot,
		Purpose: "evaluation", PlatformRegion: "cf-eu10", Region: "eu-west-1", CredentialsBinding: modelBinding(rt.shoot),
		KubernetesVersion: "1.33", Provider: shoot.AWS,
		Workers: []shoot.Worker{{Name: "cpu-worker-0", MachineType: "m6i.large", Minimum: 1, Maximum: 3 + int32(rt.generation%3),
			VolumeType: "gp3", VolumeSize: "80Gi", Zones: []string{"eu-west-1a"}}},
		Networking: shoot.Networking{Type: "calico", Pods: "10.96.0.0/13", Nodes: "10.250.0.0/16", Services: "10.104.0.0/13"}}
}

// apply performs one step. Errors of the use cases are part of life (faults, conflicts) and not failures of the model.
func (w *world) apply(s step) {
	id, shootName, plan := modelIDs[s.Runtime], modelShoots[s.Shoot], modelPlans[s.Plan]
	// Most reconciles, reaps and Gardener steps act on something that exists, as the controllers' queues do.
	if s.N < 80 {
		switch s.Op {
		case opReconcile, opKubeconfig:
			if ids := w.existingRuntimes(); len(ids) > 0 {
				id = ids[s.N%len(ids)]
			}
		case opReap, opGardener, opFail, opRequestRestore, opRestore, opEditRecord, opForge:
			if names := w.garden.Shoots(); len(names) > 0 {
				shootName = names[s.N%len(names)]
			}
		}
	}
	ctx := contextFor()
	w.actor = ""
	switch s.Op {
	case opCreate:
		if _, ok := w.runtimes[id]; !ok {
			w.putRuntime(&kcpRuntime{id: id, shoot: shootName, plan: plan, generation: 1})
		}
	case opRecreateSame:
		if old, ok := w.gone[id]; ok {
			if _, live := w.runtimes[id]; !live {
				old.deleting, old.everReady, old.configured, old.generation = false, false, usecase.RecordedConfiguration{}, 1
				w.putRuntime(&old)
			}
		}
	case opUpdate:
		if rt, ok := w.runtimes[id]; ok && !rt.deleting {
			rt.generation++
		}
	case opDelete:
		if rt, ok := w.runtimes[id]; ok {
			rt.deleting = true
		}
	case opReconcile:
		w.reconcile(id)
	case opReap:
		_, _ = w.reaper.Reap(ctx, shootName, w.operator.Now())
		w.adoptRestored()
	case opGardener:
		if !w.garden.FinishDeletion(shootName) {
			w.garden.Succeed(shootName)
		}
	case opFail:
		code := shootstate.ErrInfraQuotaExceeded
		if s.On { // a deletion stuck on a code Gardener accepts force-deletion for
			code = shootstate.ErrCleanupClusterResources
		}
		w.garden.Fail(shootName, "cloud says no", code)
	case opSync:
		w.garden.SyncCache()
		w.clusters.sync()
	case opTimePasses:
		w.truth.Step(s.D)
	case opSkew:
		w.operator.skew = s.D
	case opRestore:
		_, _ = w.restorer.Restore(ctx, shootName, w.operator.Now(), s.On)
		w.adoptRestored()
	case opRequestRestore:
		_ = w.garden.RequestRestore(ctx, shootName)
	case opRelabel:
		if rt, ok := w.runtimes[id]; ok {
			rt.plan = plan
		}
	case opBrake:
		w.guard.SetFrozen(s.On)
	case opResetBreaker:
		w.guard.ResetBreaker()
	case opForeign:
		if got, _ := w.garden.Get(ctx, shootName, ports.ReadLive); !got.Exists {
			w.garden.PutForeign(shootName)
			got, _ = w.garden.Get(ctx, shootName, ports.ReadLive)
			w.foreign[shootName] = got.UID
		}
	case opPredecessor:
		if got, _ := w.garden.Get(ctx, shootName, ports.ReadLive); !got.Exists {
			rt := kcpRuntime{id: id, shoot: shootName, generation: 1}
			spec, err := shoot.Generate(rt.spec(), modelConfig())
			if err == nil {
				w.garden.PutPredecessor(spec, id)
				got, _ := w.garden.Get(ctx, shootName, ports.ReadLive)
				w.preds[got.UID] = id
			}
		}
	case opKubeconfig:
		if _, ok := w.access.GardenerCluster(modelNamespace, id); ok {
			w.access.SetKubeconfig(modelNamespace, id)
		}
	case opFaults:
		w.faults = s.On
	case opLag:
		w.garden.LagCache(s.On)
		w.clusters.lag = s.On
	case opEditRecord: // someone moves the due time of a deletion record to its mark (or a stale copy comes back)
		w.garden.EditRecord(shootName, func(pd *shootstate.PendingDeletion) { pd.DueAt = pd.MarkedAt })
	case opForge:
		w.forge(s, shootName)
	case opMassDelete: // a KEB bug deletes every Runtime
		for _, rt := range w.runtimes {
			rt.deleting = true
		}
	}
	if s.Side != nil {
		w.applyKubeconfig(*s.Side, w.operator.Now())
	}
}

// reconcile plays the Runtime controller for one Runtime.
func (w *world) reconcile(id string) {
	rt, ok := w.runtimes[id]
	if !ok {
		return
	}
	ctx := contextFor()
	now := w.operator.Now()
	if rt.deleting {
		if s, _ := w.garden.Get(ctx, rt.shoot, ports.ReadLive); s.Exists {
			w.readyWhenDeleted[s.UID] = rt.everReady
		}
		doc := fake.RestoreDocument{Name: rt.id, Namespace: modelNamespace, Shoot: rt.shoot, Plan: rt.plan}.Encode()
		res, err := w.teardown.Run(ctx, usecase.TeardownRequest{RuntimeID: id, Namespace: modelNamespace, ShootName: rt.shoot,
			Plan: rt.plan, EverReady: rt.everReady, RestoreDocument: doc, CredentialsBinding: modelBinding(rt.shoot)}, now)
		if err == nil && res.Release {
			delete(w.runtimes, id)
			w.kcp.Remove(id)
			w.gone[id] = *rt
		}
		return
	}
	res, err := w.provision.Provision(ctx, usecase.RuntimeRequest{Runtime: rt.spec(), Namespace: modelNamespace, UID: "uid-" + id,
		Labels: map[string]string{}, Plan: rt.plan, Configured: rt.configured}, now)
	// A shoot still waiting for deletion under this ID was not taken back (yet): it keeps the window of the
	// deletion, not the plan of the runtime that has not reclaimed it.
	if s, _ := w.garden.Get(ctx, rt.shoot, ports.ReadLive); s.OwnedBy(id) && s.Marks.PendingDeletion == nil {
		w.owner[s.UID] = id
		if _, seen := w.longest[s.UID]; !seen { // created, adopted or taken back just now, for the runtime's plan now
			w.longest[s.UID] = modelPolicy().Window(rt.plan)
		}
	}
	if err != nil {
		return
	}
	if res.Decision.State == "Ready" {
		rt.everReady = true
	}
	rt.configured = res.Configured
}

// forge plays someone who can write the shoots of the project: on a shoot (with On, the shoot of a Runtime that
// exists), a deletion record consistent in itself that makes it due at once: window 0, marked a week ago, naming a
// runtime of the model (live, deleted or never seen).
func (w *world) forge(s step, shootName string) {
	if s.On {
		ids := w.existingRuntimes()
		if len(ids) == 0 {
			return
		}
		shootName = w.runtimes[ids[s.N%len(ids)]].shoot
	}
	got, _ := w.garden.Get(contextFor(), shootName, ports.ReadLive)
	if !got.Exists || !got.Marks.Managed {
		return
	}
	at := w.truth.Now().Add(-7 * 24 * time.Hour)
	if w.garden.ForgeRecord(shootName, shootstate.PendingDeletion{RuntimeID: modelIDs[s.Runtime], RuntimeNamespace: modelNamespace,
		Plan: "trial", MarkedAt: at, DueAt: at}) {
		w.forged[got.UID] = true
	}
}
