package usecase_test

import (
	"context"
	"testing"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

// cachedLedger is the KCP record of the copies as the operator reads it: ReadCached from a cache that may lag
// (stale, when set, is what it shows), ReadLive from the API server, counted.
type cachedLedger struct {
	*fake.RegistryCacheLedger
	stale     []registrycache.GardenSecret
	liveReads int
}

func (l *cachedLedger) Copies(ctx context.Context, ref ports.RuntimeRef, mode ports.ReadMode) ([]registrycache.GardenSecret, error) {
	if mode == ports.ReadLive {
		l.liveReads++
	} else if l.stale != nil {
		return l.stale, nil
	}
	return l.RegistryCacheLedger.Copies(ctx, ref, mode)
}

func newCachedLedgerWorld(t *testing.T) (*cacheWorld, *cachedLedger) {
	t.Helper()
	w := newCacheWorld(t)
	l := &cachedLedger{RegistryCacheLedger: w.ledger}
	w.sync.Ledger = l
	return w, l
}

// TestRegistryCacheSyncReadsTheRecordFromTheCache (issue 29): a sync of a runtime without the module and without
// copies (every new runtime's first sync, when it becomes provisioned) reads the record of its copies from the
// cache: nothing to collect costs no KCP request.
func TestRegistryCacheSyncReadsTheRecordFromTheCache(t *testing.T) {
	w, l := newCachedLedgerWorld(t)
	w.runtime.PutKyma("rt-1") // lifecycle-manager installed, no registry-cache module
	if res := w.pass(t); res.Outcome != usecase.SyncDisabled {
		t.Fatalf("sync: %+v", res)
	}
	if l.liveReads != 0 {
		t.Errorf("the record was read from the API server %d times, want 0", l.liveReads)
	}
}

// TestRegistryCacheCollectionConfirmsTheCacheLive: a cache that still shows a copy the record no longer holds (it
// was collected and forgotten a moment ago) deletes nothing: candidates are confirmed on the live record first. A
// copy the live record holds is collected.
func TestRegistryCacheCollectionConfirmsTheCacheLive(t *testing.T) {
	w, l := newCachedLedgerWorld(t)
	w.runtime.PutSecret("rt-1", registrycache.Key{Namespace: "team", Name: "rc"}, robot)
	w.runtime.PutConfig("rt-1", cacheConfig("docker", "docker.io", "rc"))
	w.pass(t)
	w.gardenerApplies(t)
	copies := w.gardenSecrets()
	if len(copies) != 1 {
		t.Fatalf("garden copies %v, want one", copies)
	}
	recorded, _ := w.ledger.Copies(context.Background(), w.ref, ports.ReadLive)

	// The module is disabled and the shoot dropped the cache: the copy is garbage, but the record no longer
	// names it (forgotten by another pass) while the cache still does.
	w.runtime.PutKyma("rt-1")
	w.garden.SetShoot("c-1", registrycache.ShootView{Reconciled: true})
	if err := w.ledger.Forget(context.Background(), w.ref, copies); err != nil {
		t.Fatal(err)
	}
	l.stale = recorded
	before := l.liveReads
	if res, err := w.sync.Sync(context.Background(), w.ref, w.now); err != nil || res.SecretsDeleted != 0 || len(w.gardenSecrets()) != 1 {
		t.Fatalf("stale cache: %+v, err %v, copies %v; want nothing deleted", res, err, w.gardenSecrets())
	}
	if l.liveReads == before {
		t.Error("candidates from the cache were not confirmed live")
	}

	// Recorded live too: collected.
	if err := w.ledger.Record(context.Background(), w.ref, recorded); err != nil {
		t.Fatal(err)
	}
	if res := w.pass(t); res.SecretsDeleted != 1 || len(w.gardenSecrets()) != 0 {
		t.Fatalf("garbage on the live record: %+v, copies %v; want it collected", res, w.gardenSecrets())
	}
}
