package usecase_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

// cacheWorld is a KCP, a garden and one runtime, all in memory, with the registry cache sync.
type cacheWorld struct {
	ref      ports.RuntimeRef
	kcp      *fake.RegistryCacheRuntimes
	runtime  *fake.RegistryCacheSource
	garden   *fake.RegistryCacheGarden
	ledger   *fake.RegistryCacheLedger
	sync     *usecase.RegistryCacheSync
	now      time.Time
	lastSync usecase.RegistryCacheResult
}

func newCacheWorld(t *testing.T) *cacheWorld {
	t.Helper()
	w := &cacheWorld{ref: ports.RuntimeRef{Namespace: modelNamespace, RuntimeID: "rt-1"}, kcp: fake.NewRegistryCacheRuntimes(),
		runtime: fake.NewRegistryCacheSource("rt-1"), garden: fake.NewRegistryCacheGarden(), ledger: fake.NewRegistryCacheLedger(), now: reapStart}
	w.sync = &usecase.RegistryCacheSync{Runtimes: w.kcp, Source: w.runtime, Garden: w.garden, Ledger: w.ledger,
		Resolver: fake.Resolver{Unresolvable: map[string]string{"nx.example": "no such host"}}, Interval: time.Hour}
	w.kcp.Set(w.ref, ports.RegistryCacheRuntime{ShootName: "c-1", Provisioned: true})
	w.runtime.PutKyma("rt-1", "istio", registrycache.ModuleName)
	return w
}

func (w *cacheWorld) pass(t *testing.T) usecase.RegistryCacheResult {
	t.Helper()
	res, err := w.sync.Sync(context.Background(), w.ref, w.now)
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	w.lastSync = res
	// The ledger in the KCP is how the sync finds its copies (it never lists the garden): after every pass it
	// knows every copy of the runtime.
	recorded, _ := w.ledger.Copies(context.Background(), w.ref, ports.ReadLive)
	var names []string
	for _, c := range recorded {
		names = append(names, c.Name)
	}
	for _, n := range w.garden.Copies("rt-1") {
		if !slices.Contains(names, n) {
			t.Errorf("garden copy %s is not recorded in the KCP (recorded: %v): it could never be collected", n, names)
		}
	}
	return res
}

// gardenerApplies plays the Runtime controller and Gardener: the shoot gets the Runtime's caches and is reconciled.
func (w *cacheWorld) gardenerApplies(t *testing.T) {
	t.Helper()
	rt, _ := w.kcp.Get(context.Background(), w.ref)
	v := registrycache.ShootView{Reconciled: true}
	for _, e := range rt.Entries {
		v.Caches = append(v.Caches, e.Cache)
		if e.Cache.CredentialsSecret != "" {
			v.ReferencedSecrets = append(v.ReferencedSecrets, e.Cache.CredentialsSecret)
		}
	}
	w.garden.SetShoot("c-1", v)
}

func (w *cacheWorld) entries() []registrycache.Entry {
	rt, _ := w.kcp.Get(context.Background(), w.ref)
	return rt.Entries
}

func (w *cacheWorld) gardenSecrets() []string { return w.garden.Copies("rt-1") }

var robot = map[string][]byte{"username": []byte("robot"), "password": []byte("pw-UNIQUE-4711")}

func cacheConfig(name, upstream, secret string) registrycache.Config {
	return registrycache.Config{Namespace: "team", Name: name, CreatedAt: reapStart, Cache: shoot.RegistryCache{Upstream: upstream}, SecretName: secret}
}

// TestRegistryCacheSyncLifecycle follows one cache with credentials from creation through rotation to removal.
func TestRegistryCacheSyncLifecycle(t *testing.T) {
	w := newCacheWorld(t)
	key := registrycache.Key{Namespace: "team", Name: "docker"}
	w.runtime.PutSecret("rt-1", registrycache.Key{Namespace: "team", Name: "rc"}, robot)
	w.runtime.PutConfig("rt-1", cacheConfig("docker", "docker.io", "rc"))

	res := w.pass(t)
	if res.Caches != 1 || res.SecretsCreated != 1 || len(res.Events) != 1 {
		t.Fatalf("first sync: %+v", res)
	}
	first := w.gardenSecrets()
	if len(first) != 1 || w.entries()[0].Cache.CredentialsSecret != first[0] {
		t.Fatalf("garden copies %v, entries %+v: the entry must name the copy", first, w.entries())
	}
	if s, _ := w.garden.Secret(first[0]); string(s.Data["password"]) != "pw-UNIQUE-4711" || s.ShootName != "c-1" || s.CacheUID == "" {
		t.Errorf("garden copy %+v", s)
	}
	if st := w.runtime.Status("rt-1", key); st.Reason != registrycache.ReasonPending {
		t.Errorf("before the shoot has it: %+v, want Pending", st)
	}
	w.gardenerApplies(t)
	w.pass(t)
	if st := w.runtime.Status("rt-1", key); st.Reason != registrycache.ReasonApplied || st.State != registrycache.StateReady {
		t.Errorf("after Gardener applied it: %+v, want Applied/Ready", st)
	}
	writes := w.runtime.StatusWrites
	if res := w.pass(t); len(res.Events) != 0 || w.runtime.StatusWrites != writes || res.SecretsCreated != 0 {
		t.Errorf("an unchanged runtime must write nothing: %+v, %d status writes", res, w.runtime.StatusWrites-writes)
	}

	// Rotation: a new copy, the spec follows; the old copy stays while the shoot still uses it.
	w.runtime.PutSecret("rt-1", registrycache.Key{Namespace: "team", Name: "rc"}, map[string][]byte{"username": []byte("robot"), "password": []byte("rotated")})
	w.pass(t)
	if got := w.gardenSecrets(); len(got) != 2 {
		t.Fatalf("after rotation: copies %v, want old and new while the shoot uses the old", got)
	}
	w.gardenerApplies(t)
	w.pass(t)
	if got := w.gardenSecrets(); len(got) != 1 || got[0] == first[0] {
		t.Fatalf("after the shoot switched: copies %v, want only the new one", got)
	}

	// Removal: the spec loses the cache at once, the copy goes once the shoot dropped it.
	w.runtime.DeleteConfig("rt-1", key)
	w.pass(t)
	if len(w.entries()) != 0 {
		t.Fatalf("entries after removal: %+v", w.entries())
	}
	if len(w.gardenSecrets()) != 1 {
		t.Fatal("the copy must stay while the shoot references it")
	}
	w.gardenerApplies(t)
	w.pass(t)
	if got := w.gardenSecrets(); len(got) != 0 {
		t.Fatalf("copies after the shoot dropped the cache: %v", got)
	}
}

// TestRegistryCacheSyncBadInputKeepsOthersWorking: every kind of bad object gets its reason; the good one is applied.
func TestRegistryCacheSyncBadInputKeepsOthersWorking(t *testing.T) {
	w := newCacheWorld(t)
	w.runtime.PutSecret("rt-1", registrycache.Key{Namespace: "team", Name: "half"}, map[string][]byte{"username": []byte("u")})
	size := cacheConfig("size", "ghcr.io", "")
	size.Cache.VolumeSize = "lots"
	older := cacheConfig("first", "quay.io", "")
	older.CreatedAt = reapStart.Add(-time.Hour)
	for _, c := range []registrycache.Config{cacheConfig("good", "gcr.io", ""), size, cacheConfig("dns", "nx.example", ""),
		cacheConfig("nosecret", "docker.io", "missing"), cacheConfig("half", "registry.k8s.io", "half"), older,
		cacheConfig("dup", "quay.io", "")} {
		w.runtime.PutConfig("rt-1", c)
	}
	w.pass(t)
	want := map[string]registrycache.Reason{"good": registrycache.ReasonPending, "first": registrycache.ReasonPending,
		"size": registrycache.ReasonInvalidVolumeSize, "dns": registrycache.ReasonUpstreamUnreachable,
		"nosecret": registrycache.ReasonSecretMissing, "half": registrycache.ReasonSecretInvalid, "dup": registrycache.ReasonDuplicateUpstream}
	for name, reason := range want {
		if st := w.runtime.Status("rt-1", registrycache.Key{Namespace: "team", Name: name}); st.Reason != reason {
			t.Errorf("%s: %+v, want %s", name, st, reason)
		}
	}
	var upstreams []string
	for _, e := range w.entries() {
		upstreams = append(upstreams, e.Cache.Upstream)
	}
	if fmt.Sprint(upstreams) != "[quay.io gcr.io]" {
		t.Errorf("applied upstreams %v, want the older quay.io and gcr.io (entries ordered by name)", upstreams)
	}
}

func TestRegistryCacheSyncModuleDisabledAndRuntimeGone(t *testing.T) {
	w := newCacheWorld(t)
	w.runtime.PutSecret("rt-1", registrycache.Key{Namespace: "team", Name: "rc"}, robot)
	w.runtime.PutConfig("rt-1", cacheConfig("docker", "docker.io", "rc"))
	w.pass(t)
	w.gardenerApplies(t)

	// The customer disables the module: the caches go from the spec, the copy after the shoot dropped it.
	w.runtime.PutKyma("rt-1", "istio")
	if res := w.pass(t); res.Outcome != usecase.SyncDisabled || len(w.entries()) != 0 || len(w.gardenSecrets()) != 1 {
		t.Fatalf("module disabled: %+v, entries %v, copies %v", res, w.entries(), w.gardenSecrets())
	}

	// Enabled again, then the Runtime goes: the copy stays while the shoot (waiting for deletion) uses it.
	w.runtime.PutKyma("rt-1", registrycache.ModuleName)
	w.pass(t)
	w.gardenerApplies(t)
	w.kcp.Delete(w.ref)
	if res := w.pass(t); res.Outcome != usecase.SyncCollected || len(w.gardenSecrets()) != 1 || res.RequeueAfter == 0 {
		t.Fatalf("runtime gone, shoot left: %+v, copies %v; want the copy kept and a later look", res, w.gardenSecrets())
	}
	w.garden.RemoveShoot("c-1")
	if w.pass(t); len(w.gardenSecrets()) != 0 {
		t.Fatalf("runtime and shoot gone: copies %v", w.gardenSecrets())
	}
}

// TestRegistryCacheSyncNeverOverwritesAnotherManager: KEB owning spec.imageRegistryCache is reported, not fought.
func TestRegistryCacheSyncNeverOverwritesAnotherManager(t *testing.T) {
	w := newCacheWorld(t)
	keb := []registrycache.Entry{{Name: "keb", Namespace: "x", Cache: shoot.RegistryCache{Upstream: "docker.io"}}}
	rt, _ := w.kcp.Get(context.Background(), w.ref)
	rt.Entries = keb
	w.kcp.Set(w.ref, rt)
	w.kcp.OwnedByOthers[w.ref] = true
	w.runtime.PutConfig("rt-1", cacheConfig("mine", "quay.io", ""))
	if res := w.pass(t); res.Outcome != usecase.SyncConflict {
		t.Fatalf("outcome %s, want %s", res.Outcome, usecase.SyncConflict)
	}
	if !registrycache.EntriesEqual(w.entries(), keb) {
		t.Errorf("the other manager's entries were changed: %+v", w.entries())
	}
	if st := w.runtime.Status("rt-1", registrycache.Key{Namespace: "team", Name: "mine"}); st.Reason != registrycache.ReasonRuntimeSpecConflict {
		t.Errorf("status %+v, want %s", st, registrycache.ReasonRuntimeSpecConflict)
	}
}

func TestRegistryCacheSyncSkipsRuntimesNotReady(t *testing.T) {
	w := newCacheWorld(t)
	w.kcp.Set(w.ref, ports.RegistryCacheRuntime{ShootName: "c-1"})
	w.runtime.Unreachable["rt-1"] = true // a runtime not provisioned is not even asked
	if res := w.pass(t); res.Outcome != usecase.SyncWaiting {
		t.Errorf("outcome %s, want %s", res.Outcome, usecase.SyncWaiting)
	}
	w.kcp.Set(w.ref, ports.RegistryCacheRuntime{ShootName: "c-1", Provisioned: true})
	res, err := w.sync.Sync(context.Background(), w.ref, w.now)
	if err == nil || res.Outcome != usecase.SyncUnreachable {
		t.Errorf("unreachable runtime: %+v, %v; want an error and outcome %s", res, err, usecase.SyncUnreachable)
	}
}

// TestRegistryCacheCredentialsNeverLeak: the credentials are in the garden copy and nowhere else the sync writes.
func TestRegistryCacheCredentialsNeverLeak(t *testing.T) {
	w := newCacheWorld(t)
	w.runtime.PutSecret("rt-1", registrycache.Key{Namespace: "team", Name: "rc"}, robot)
	w.runtime.PutSecret("rt-1", registrycache.Key{Namespace: "team", Name: "bad"}, map[string][]byte{"username": robot["password"]})
	w.runtime.PutConfig("rt-1", cacheConfig("docker", "docker.io", "rc"))
	w.runtime.PutConfig("rt-1", cacheConfig("quay", "quay.io", "bad"))
	res := w.pass(t)
	leak := string(robot["password"])
	var seen []string
	for _, e := range res.Events {
		seen = append(seen, e.Message)
	}
	for _, k := range []string{"docker", "quay"} {
		st := w.runtime.Status("rt-1", registrycache.Key{Namespace: "team", Name: k})
		seen = append(seen, st.Message, string(st.Reason))
	}
	seen = append(seen, fmt.Sprintf("%+v", w.entries()))
	for _, s := range seen {
		if strings.Contains(s, leak) {
			t.Errorf("credentials leaked into %q", s)
		}
	}
}

// TestRegistryCacheSyncLeavesOthersEntriesWithTheModuleOff: caches KEB sent in the Runtime are not the module's;
// a runtime without the module keeps them and gets no event every sync.
func TestRegistryCacheSyncLeavesOthersEntriesWithTheModuleOff(t *testing.T) {
	w := newCacheWorld(t)
	keb := []registrycache.Entry{{Name: "keb", Namespace: "x", Cache: shoot.RegistryCache{Upstream: "docker.io"}}}
	w.kcp.Set(w.ref, ports.RegistryCacheRuntime{ShootName: "c-1", Provisioned: true, Entries: keb})
	w.runtime.PutKyma("rt-1", "istio")
	applies := w.kcp.Applies
	if res := w.pass(t); res.Outcome != usecase.SyncDisabled || len(res.Events) != 0 || w.kcp.Applies != applies ||
		!registrycache.EntriesEqual(w.entries(), keb) {
		t.Errorf("module off, KEB's entries: %+v, %d applies, entries %+v", res, w.kcp.Applies-applies, w.entries())
	}
}

// TestRegistryCacheSyncNeverUsesASquattedCopy: a Secret already under the name of a copy that is not the copy (other
// labels or data: someone placed it first) is never referenced and never deleted; the cache that needs it is
// refused with a stable reason and an event, the runtime's other caches are applied.
func TestRegistryCacheSyncNeverUsesASquattedCopy(t *testing.T) {
	w := newCacheWorld(t)
	w.runtime.PutSecret("rt-1", registrycache.Key{Namespace: "team", Name: "rc"}, robot)
	docker := cacheConfig("docker", "docker.io", "rc")
	docker.UID = "uid-docker"
	w.runtime.PutConfig("rt-1", docker)
	w.runtime.PutConfig("rt-1", cacheConfig("quay", "quay.io", ""))
	squatted := registrycache.SecretName("rt-1", "uid-docker", robot)
	w.garden.PutSquatter(squatted)

	res := w.pass(t)
	if st := w.runtime.Status("rt-1", registrycache.Key{Namespace: "team", Name: "docker"}); st.Reason != registrycache.ReasonSecretCopyConflict {
		t.Errorf("cache whose copy is squatted: %+v, want %s", st, registrycache.ReasonSecretCopyConflict)
	}
	if st := w.runtime.Status("rt-1", registrycache.Key{Namespace: "team", Name: "quay"}); st.Reason != registrycache.ReasonPending {
		t.Errorf("the other cache: %+v, want Pending (applied)", st)
	}
	if len(w.entries()) != 1 || w.entries()[0].Cache.Upstream != "quay.io" {
		t.Errorf("entries %+v: want only quay.io, never the squatted Secret", w.entries())
	}
	if !slices.ContainsFunc(res.Events, func(e usecase.Event) bool { return e.Reason == usecase.EventRegistryCredentialsSquatted && e.Warning }) {
		t.Errorf("events %+v: want a warning %s", res.Events, usecase.EventRegistryCredentialsSquatted)
	}
	if recorded, _ := w.ledger.Copies(context.Background(), w.ref, ports.ReadLive); len(recorded) != 0 {
		t.Errorf("the squatted name is recorded as the runtime's copy (it would be deleted): %+v", recorded)
	}
	w.gardenerApplies(t)
	w.pass(t)
	if !w.garden.Exists(squatted) {
		t.Error("the squatted Secret was deleted")
	}
}

// TestRegistryCacheCopiesOfAGoneRuntimeAreCollectedFromTheLedger: the copies are found again through the KCP
// record alone (no list of the garden), also for a runtime deleted while nothing synced it (the sweep).
func TestRegistryCacheCopiesOfAGoneRuntimeAreCollectedFromTheLedger(t *testing.T) {
	w := newCacheWorld(t)
	w.runtime.PutSecret("rt-1", registrycache.Key{Namespace: "team", Name: "rc"}, robot)
	w.runtime.PutConfig("rt-1", cacheConfig("docker", "docker.io", "rc"))
	w.pass(t)
	if ids, _ := w.ledger.Runtimes(context.Background(), modelNamespace); fmt.Sprint(ids) != "[rt-1]" {
		t.Fatalf("runtimes with records: %v", ids)
	}
	w.kcp.Delete(w.ref)
	w.pass(t)
	if len(w.gardenSecrets()) != 0 {
		t.Fatalf("copies of a gone runtime without a shoot: %v", w.gardenSecrets())
	}
	if ids, _ := w.ledger.Runtimes(context.Background(), modelNamespace); len(ids) != 0 {
		t.Errorf("the empty record of a gone runtime stays: %v", ids)
	}
}

// TestRegistryCacheSyncOverLimitKeepsWhatIsApplied: a runtime whose objects exceed the source's limits applies none
// of them and loses nothing: the Runtime keeps its caches, no garden copy is collected, the objects read report the
// limit, the Runtime gets a warning, and the sync is no failure (no error, the periodic requeue). Back within the
// limit, the runtime is synced as before.
func TestRegistryCacheSyncOverLimitKeepsWhatIsApplied(t *testing.T) {
	w := newCacheWorld(t)
	w.runtime.Limits = registrycache.Limits{MaxConfigs: 2}
	w.runtime.PutSecret("rt-1", registrycache.Key{Namespace: "team", Name: "rc"}, robot)
	w.runtime.PutConfig("rt-1", cacheConfig("docker", "docker.io", "rc"))
	w.runtime.PutConfig("rt-1", cacheConfig("quay", "quay.io", ""))
	w.pass(t)
	w.gardenerApplies(t)
	w.pass(t)
	applied, copies := w.entries(), w.gardenSecrets()
	if len(applied) != 2 || len(copies) != 1 {
		t.Fatalf("before: entries %+v, copies %v", applied, copies)
	}

	// A third object, and the secret of the first rotated: over the limit nothing of it is evaluated.
	w.runtime.PutConfig("rt-1", cacheConfig("ghcr", "ghcr.io", ""))
	w.runtime.PutSecret("rt-1", registrycache.Key{Namespace: "team", Name: "rc"}, map[string][]byte{"username": []byte("robot"), "password": []byte("rotated")})
	res, err := w.sync.Sync(context.Background(), w.ref, w.now)
	if err != nil {
		t.Fatalf("over the limit is the customer's to fix, not a failed sync: %v", err)
	}
	if res.Outcome != usecase.SyncOverLimit || res.RequeueAfter != w.sync.Interval || res.SecretsCreated != 0 || res.SecretsDeleted != 0 {
		t.Errorf("result %+v", res)
	}
	if !registrycache.EntriesEqual(w.entries(), applied) {
		t.Errorf("entries changed over the limit: %+v, want %+v", w.entries(), applied)
	}
	if got := w.gardenSecrets(); fmt.Sprint(got) != fmt.Sprint(copies) {
		t.Errorf("garden copies %v, want %v unchanged", got, copies)
	}
	if len(res.Events) != 1 || !res.Events[0].Warning || res.Events[0].Reason != usecase.EventRegistryCacheOverLimit ||
		!strings.Contains(res.Events[0].Message, registrycache.KeyMaxConfigs) || !strings.Contains(res.Events[0].Message, "more than 2") {
		t.Errorf("events %+v, want one warning naming the limit and its key", res.Events)
	}
	read := 0
	for _, name := range []string{"docker", "ghcr", "quay"} {
		st := w.runtime.Status("rt-1", registrycache.Key{Namespace: "team", Name: name})
		if st.Reason == registrycache.ReasonTooManyConfigs {
			read++
			if st.State != registrycache.StateError || !strings.Contains(st.Message, registrycache.KeyMaxConfigs) ||
				!strings.Contains(st.Message, "keep working") {
				t.Errorf("%s: %+v", name, st)
			}
		}
	}
	if read != 2 {
		t.Errorf("%d objects report the limit, want the 2 read", read)
	}
	writes := w.runtime.StatusWrites
	if _, err := w.sync.Sync(context.Background(), w.ref, w.now); err != nil || w.runtime.StatusWrites != writes {
		t.Errorf("a second sync over the limit: %v, %d status writes, want none", err, w.runtime.StatusWrites-writes)
	}

	w.runtime.DeleteConfig("rt-1", registrycache.Key{Namespace: "team", Name: "ghcr"})
	if res := w.pass(t); res.Outcome != usecase.SyncSynced || res.SecretsCreated != 1 {
		t.Errorf("back within the limit: %+v, want synced with the rotated copy", res)
	}
	if st := w.runtime.Status("rt-1", registrycache.Key{Namespace: "team", Name: "quay"}); st.Reason != registrycache.ReasonApplied {
		t.Errorf("quay back within the limit: %+v, want Applied", st)
	}
}

// TestRegistryCacheSyncModuleChoiceFromTheRuntime: the runtime's own Kyma resource decides. A Kyma CRD without
// the Kyma resource (or a runtime that does not answer) is no decision: the caches stay; only a runtime without the
// Kyma CRD, or a Kyma resource without the module, disables it.
func TestRegistryCacheSyncModuleChoiceFromTheRuntime(t *testing.T) {
	w := newCacheWorld(t)
	w.runtime.PutConfig("rt-1", cacheConfig("docker", "docker.io", ""))
	if res := w.pass(t); res.Outcome != usecase.SyncSynced || len(w.entries()) != 1 {
		t.Fatalf("module enabled in the runtime: %+v, entries %v", res, w.entries())
	}
	w.runtime.DeleteKyma("rt-1")
	res, err := w.sync.Sync(context.Background(), w.ref, w.now)
	if err == nil || res.Outcome != usecase.SyncError || len(w.entries()) != 1 {
		t.Errorf("Kyma resource missing: %+v, %v, entries %v; want an error and the cache kept", res, err, w.entries())
	}
	w.runtime.Unreachable["rt-1"] = true
	res, err = w.sync.Sync(context.Background(), w.ref, w.now)
	if err == nil || res.Outcome != usecase.SyncUnreachable || len(w.entries()) != 1 {
		t.Errorf("runtime unreachable: %+v, %v, entries %v; want an error and the cache kept", res, err, w.entries())
	}
	w.runtime.Unreachable["rt-1"] = false
	w.runtime.RemoveKymaCRD("rt-1")
	if res := w.pass(t); res.Outcome != usecase.SyncDisabled || len(w.entries()) != 0 {
		t.Errorf("no Kyma CRD in the runtime: %+v, entries %v; want disabled, the operator's entries removed", res, w.entries())
	}
}
