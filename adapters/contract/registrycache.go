package contract

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
)

// RegistryCacheSourceFixture is one runtime with the means to write objects into it as the customer would.
type RegistryCacheSourceFixture struct {
	Source    ports.RegistryCacheSource
	RuntimeID string
	// Namespace is where the customer's objects of the fixture live.
	Namespace string
	// PutConfig creates or updates a RegistryCacheConfig in Namespace with upstream, volume size and secret name.
	PutConfig func(ctx context.Context, name, upstream, volumeSize, secret string) error
	// PutSecret creates a Secret in Namespace.
	PutSecret func(ctx context.Context, name string, data map[string][]byte) error
	// Limited returns Source (the same runtime) with limits.
	Limited func(l registrycache.Limits) ports.RegistryCacheSource
	// PutKyma writes the runtime's Kyma resource kyma-system/default (its CRD installed) with these modules;
	// DeleteKyma deletes the resource, its CRD stays.
	PutKyma    func(ctx context.Context, modules ...string) error
	DeleteKyma func(ctx context.Context) error
	// RemoveKymaCRD removes the Kyma CRD from the runtime; nil where the runtime's API server is shared with
	// other tests that need it (the step is skipped).
	RemoveKymaCRD func(ctx context.Context) error
}

// RunRegistryCacheSourceContract runs the contract of ports.RegistryCacheSource.
func RunRegistryCacheSourceContract(t *testing.T, newFixture func(t *testing.T) RegistryCacheSourceFixture) {
	find := func(t *testing.T, f RegistryCacheSourceFixture, name string) registrycache.Config {
		t.Helper()
		cfgs, err := f.Source.Configs(t.Context(), f.RuntimeID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cfgs {
			if c.Name == name {
				return c
			}
		}
		t.Fatalf("config %s not listed in %+v", name, cfgs)
		return registrycache.Config{}
	}
	t.Run("configs are listed with their spec; a missing secret is not found, not an error", func(t *testing.T) {
		f := newFixture(t)
		if err := f.PutConfig(t.Context(), "docker", "docker.io", "20Gi", "rc-secret"); err != nil {
			t.Fatal(err)
		}
		c := find(t, f, "docker")
		want := shoot.RegistryCache{Upstream: "docker.io", VolumeSize: "20Gi"}
		if c.Namespace != f.Namespace || c.UID == "" || c.Generation == 0 || c.SecretName != "rc-secret" || !registrycache.CacheEqual(c.Cache, want) {
			t.Errorf("config %+v", c)
		}
		cred, err := f.Source.Credentials(t.Context(), f.RuntimeID, registrycache.Key{Namespace: f.Namespace, Name: "rc-secret"})
		if err != nil || cred.Found {
			t.Errorf("missing secret: %+v, %v", cred, err)
		}
		if err := f.PutSecret(t.Context(), "rc-secret", map[string][]byte{"username": []byte("u"), "password": []byte("p")}); err != nil {
			t.Fatal(err)
		}
		cred, err = f.Source.Credentials(t.Context(), f.RuntimeID, registrycache.Key{Namespace: f.Namespace, Name: "rc-secret"})
		if err != nil || !cred.Found || string(cred.Data["password"]) != "p" {
			t.Errorf("secret: %+v, %v", cred, err)
		}
	})
	t.Run("status is written and read back; a stale generation is a conflict", func(t *testing.T) {
		f := newFixture(t)
		if err := f.PutConfig(t.Context(), "quay", "quay.io", "", ""); err != nil {
			t.Fatal(err)
		}
		c := find(t, f, "quay")
		st := registrycache.Status{State: registrycache.StatePending, ConditionStatus: "Unknown", Reason: registrycache.ReasonPending,
			Message: "waiting", ObservedGeneration: c.Generation}
		if err := f.Source.SetStatus(t.Context(), f.RuntimeID, c, st, time.Now()); err != nil {
			t.Fatal(err)
		}
		if got := find(t, f, "quay").Status; got != st {
			t.Errorf("status read back %+v, want %+v", got, st)
		}
		if err := f.PutConfig(t.Context(), "quay", "quay.io", "50Gi", ""); err != nil {
			t.Fatal(err)
		}
		err := f.Source.SetStatus(t.Context(), f.RuntimeID, c, st, time.Now())
		if !errors.Is(err, ports.ErrConflict) {
			t.Errorf("status for an old generation: %v, want ErrConflict", err)
		}
		gone := c
		gone.Name = "deleted-meanwhile"
		if err := f.Source.SetStatus(t.Context(), f.RuntimeID, gone, st, time.Now()); err != nil {
			t.Errorf("status of a deleted object: %v, want no error", err)
		}
	})
	t.Run("more objects than the limit are an OverLimit with at most the limit read", func(t *testing.T) {
		f := newFixture(t)
		for _, name := range []string{"a", "b", "c"} {
			if err := f.PutConfig(t.Context(), name, name+".example.com", "", ""); err != nil {
				t.Fatal(err)
			}
		}
		cfgs, err := f.Limited(registrycache.Limits{MaxConfigs: 2}).Configs(t.Context(), f.RuntimeID)
		var over *registrycache.OverLimit
		if !errors.As(err, &over) || over.Reason != registrycache.ReasonTooManyConfigs || len(cfgs) != 2 {
			t.Errorf("%d configs, err %v: want TooManyConfigs with 2 read", len(cfgs), err)
		}
	})
	t.Run("the module choice is the runtime's own Kyma resource; a missing one is an error, not disabled", func(t *testing.T) {
		f := newFixture(t)
		ctx := t.Context()
		if err := f.DeleteKyma(ctx); err != nil {
			t.Fatal(err)
		}
		if on, err := f.Source.ModuleEnabled(ctx, f.RuntimeID); err == nil {
			t.Errorf("Kyma CRD without the Kyma resource: enabled %v, no error; want an error (never read as disabled)", on)
		}
		if err := f.PutKyma(ctx, "istio", registrycache.ModuleName); err != nil {
			t.Fatal(err)
		}
		if on, err := f.Source.ModuleEnabled(ctx, f.RuntimeID); err != nil || !on {
			t.Errorf("module listed: enabled %v, %v; want enabled", on, err)
		}
		if err := f.PutKyma(ctx, "istio"); err != nil {
			t.Fatal(err)
		}
		if on, err := f.Source.ModuleEnabled(ctx, f.RuntimeID); err != nil || on {
			t.Errorf("module not listed: enabled %v, %v; want disabled", on, err)
		}
		if f.RemoveKymaCRD == nil {
			return
		}
		if err := f.RemoveKymaCRD(ctx); err != nil {
			t.Fatal(err)
		}
		if on, err := f.Source.ModuleEnabled(ctx, f.RuntimeID); err != nil || on {
			t.Errorf("no Kyma CRD: enabled %v, %v; want disabled, no error", on, err)
		}
	})
	t.Run("an unknown runtime is unreachable", func(t *testing.T) {
		f := newFixture(t)
		if _, err := f.Source.Configs(t.Context(), "no-such-runtime"); !errors.Is(err, ports.ErrRuntimeUnreachable) {
			t.Errorf("err %v, want ErrRuntimeUnreachable", err)
		}
		if _, err := f.Source.ModuleEnabled(t.Context(), "no-such-runtime"); !errors.Is(err, ports.ErrRuntimeUnreachable) {
			t.Errorf("module choice: err %v, want ErrRuntimeUnreachable", err)
		}
	})
}

// RegistryCacheGardenFixture is a fresh Gardener project.
type RegistryCacheGardenFixture struct {
	Garden ports.RegistryCacheGarden
	Owners ports.RegistryCredentialOwners
	// ReadSecret returns the data and immutability of a Secret in the project (found false when missing).
	ReadSecret func(ctx context.Context, name string) (data map[string][]byte, immutable, found bool)
	// PutForeignSecret creates a Secret the operator did not write (cloud credentials) under name.
	PutForeignSecret func(ctx context.Context, name string) error
}

// RunRegistryCacheGardenContract runs the contract of ports.RegistryCacheGarden's Secrets and of
// ports.RegistryCredentialOwners (shoots are covered by the adapters' own tests).
func RunRegistryCacheGardenContract(t *testing.T, newFixture func(t *testing.T) RegistryCacheGardenFixture) {
	s1 := registrycache.GardenSecret{Name: registrycache.SecretPrefix + "aaa", RuntimeID: "rt-1", CacheUID: "uid-1", ShootName: "c-1",
		Data: map[string][]byte{"username": []byte("u"), "password": []byte("p")}}
	t.Run("copies are created immutable and idempotently, and confirmed per runtime", func(t *testing.T) {
		f := newFixture(t)
		other := s1
		other.Name, other.RuntimeID = registrycache.SecretPrefix+"bbb", "rt-2"
		for i, s := range []registrycache.GardenSecret{s1, s1, other} {
			created, err := f.Garden.EnsureSecret(t.Context(), s)
			if err != nil {
				t.Fatal(err)
			}
			if created != (i != 1) {
				t.Errorf("ensure %d of %s: created %v", i, s.Name, created)
			}
		}
		if data, immutable, found := f.ReadSecret(t.Context(), s1.Name); !found || !immutable || string(data["password"]) != "p" {
			t.Errorf("copy: %v immutable=%v found=%v", data, immutable, found)
		}
		if err := f.PutForeignSecret(t.Context(), "aws-credentials"); err != nil {
			t.Fatal(err)
		}
		got, err := f.Owners.OwnedCopies(t.Context(), "rt-1", []string{s1.Name, other.Name, "aws-credentials", registrycache.SecretPrefix + "missing"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0] != s1.Name {
			t.Errorf("copies of rt-1 confirmed: %v, want only %s (not rt-2's, not a foreign or missing Secret)", got, s1.Name)
		}
	})
	t.Run("a Secret squatting on a copy's name is refused, never used", func(t *testing.T) {
		f := newFixture(t)
		if err := f.PutForeignSecret(t.Context(), s1.Name); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Garden.EnsureSecret(t.Context(), s1); !errors.Is(err, ports.ErrCopyConflict) {
			t.Errorf("ensure over a squatter: %v, want ErrCopyConflict", err)
		}
		if got, err := f.Owners.OwnedCopies(t.Context(), "rt-1", []string{s1.Name}); err != nil || len(got) != 0 {
			t.Errorf("the squatter is confirmed as the runtime's copy: %v, %v", got, err)
		}
		// The operator's copy of another runtime, or with other data, under the name is no copy for this one either.
		g := newFixture(t)
		theirs := s1
		theirs.RuntimeID = "rt-2"
		if _, err := g.Garden.EnsureSecret(t.Context(), theirs); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Garden.EnsureSecret(t.Context(), s1); !errors.Is(err, ports.ErrCopyConflict) {
			t.Errorf("ensure over another runtime's copy: %v, want ErrCopyConflict", err)
		}
		changed := s1
		changed.RuntimeID, changed.Data = "rt-2", map[string][]byte{"username": []byte("u"), "password": []byte("other")}
		if _, err := g.Garden.EnsureSecret(t.Context(), changed); !errors.Is(err, ports.ErrCopyConflict) {
			t.Errorf("ensure over a copy with other data: %v, want ErrCopyConflict", err)
		}
	})
	t.Run("only copies are deleted; deleting a missing one succeeds", func(t *testing.T) {
		f := newFixture(t)
		if _, err := f.Garden.EnsureSecret(t.Context(), s1); err != nil {
			t.Fatal(err)
		}
		if err := f.PutForeignSecret(t.Context(), "aws-credentials"); err != nil {
			t.Fatal(err)
		}
		if err := f.Garden.DeleteSecret(t.Context(), "aws-credentials"); err == nil {
			t.Error("a Secret without the reg-cache- prefix was deleted")
		}
		if _, _, found := f.ReadSecret(t.Context(), "aws-credentials"); !found {
			t.Error("the foreign Secret is gone")
		}
		for range 2 {
			if err := f.Garden.DeleteSecret(t.Context(), s1.Name); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, found := f.ReadSecret(t.Context(), s1.Name); found {
			t.Error("the deleted copy is still there")
		}
	})
}

// RegistryCacheLedgerFixture is a fresh KCP namespace.
type RegistryCacheLedgerFixture struct {
	Ledger    ports.RegistryCacheLedger
	Namespace string
}

// RunRegistryCacheLedgerContract runs the contract of ports.RegistryCacheLedger.
func RunRegistryCacheLedgerContract(t *testing.T, newFixture func(t *testing.T) RegistryCacheLedgerFixture) {
	t.Run("copies are recorded per runtime, forgotten, and an empty record goes", func(t *testing.T) {
		f := newFixture(t)
		ctx := t.Context()
		rt1, rt2 := ports.RuntimeRef{Namespace: f.Namespace, RuntimeID: "rt-1"}, ports.RuntimeRef{Namespace: f.Namespace, RuntimeID: "rt-2"}
		a := registrycache.GardenSecret{Name: registrycache.SecretPrefix + "a", ShootName: "c-1"}
		b := registrycache.GardenSecret{Name: registrycache.SecretPrefix + "b", ShootName: "c-1"}
		if got, err := f.Ledger.Copies(ctx, rt1, ports.ReadLive); err != nil || len(got) != 0 {
			t.Fatalf("no record: %v, %v", got, err)
		}
		for _, rec := range []struct {
			ref    ports.RuntimeRef
			copies []registrycache.GardenSecret
		}{{rt1, []registrycache.GardenSecret{a}}, {rt1, []registrycache.GardenSecret{a, b}}, {rt2, []registrycache.GardenSecret{b}}} {
			if err := f.Ledger.Record(ctx, rec.ref, rec.copies); err != nil {
				t.Fatal(err)
			}
		}
		got, err := f.Ledger.Copies(ctx, rt1, ports.ReadLive)
		if err != nil || len(got) != 2 || got[0].Name != a.Name || got[1].Name != b.Name || got[0].ShootName != "c-1" || got[0].RuntimeID != "rt-1" {
			t.Fatalf("copies of rt-1: %+v, %v", got, err)
		}
		if ids, err := f.Ledger.Runtimes(ctx, f.Namespace); err != nil || fmt.Sprint(ids) != "[rt-1 rt-2]" {
			t.Errorf("runtimes with records: %v, %v", ids, err)
		}
		if err := f.Ledger.Forget(ctx, rt1, []string{a.Name}); err != nil {
			t.Fatal(err)
		}
		if got, _ := f.Ledger.Copies(ctx, rt1, ports.ReadLive); len(got) != 1 || got[0].Name != b.Name {
			t.Errorf("after forgetting %s: %+v", a.Name, got)
		}
		if err := f.Ledger.Forget(ctx, rt1, []string{b.Name, "reg-cache-never-recorded"}); err != nil {
			t.Fatal(err)
		}
		if ids, _ := f.Ledger.Runtimes(ctx, f.Namespace); fmt.Sprint(ids) != "[rt-2]" {
			t.Errorf("after forgetting all of rt-1: runtimes with records %v, want [rt-2]", ids)
		}
		if err := f.Ledger.Forget(ctx, rt1, []string{b.Name}); err != nil {
			t.Errorf("forgetting without a record: %v", err)
		}
	})
}

// RegistryCacheRuntimesFixture is a KCP with one Runtime.
type RegistryCacheRuntimesFixture struct {
	Runtimes ports.RegistryCacheRuntimes
	Ref      ports.RuntimeRef
	// TakeOver makes another field manager own spec.imageRegistryCache with a value of its own.
	TakeOver func(ctx context.Context) error
}

// RunRegistryCacheRuntimesContract runs the contract of ports.RegistryCacheRuntimes.
func RunRegistryCacheRuntimesContract(t *testing.T, newFixture func(t *testing.T) RegistryCacheRuntimesFixture) {
	tls := false
	entries := []registrycache.Entry{
		{Name: "docker", Namespace: "team", UID: "uid-1", Cache: shoot.RegistryCache{Upstream: "docker.io", VolumeSize: "20Gi",
			GarbageCollectionTTL: "168h", SecretReferenceName: "reg-cache-x", CredentialsSecret: "reg-cache-x", TLS: &tls}},
		{Name: "quay", Namespace: "team", UID: "uid-2", Cache: shoot.RegistryCache{Upstream: "quay.io", HTTPSProxy: "http://proxy:3128"}},
	}
	get := func(t *testing.T, f RegistryCacheRuntimesFixture) ports.RegistryCacheRuntime {
		t.Helper()
		rt, err := f.Runtimes.Get(t.Context(), f.Ref)
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	t.Run("entries are applied, read back and removed", func(t *testing.T) {
		f := newFixture(t)
		if err := f.Runtimes.ApplyEntries(t.Context(), f.Ref, entries); err != nil {
			t.Fatal(err)
		}
		eventually(t, "entries read back, owned by the operator", holds(func() bool {
			rt := get(t, f)
			return registrycache.EntriesEqual(rt.Entries, entries) && rt.Managed
		}))
		if err := f.Runtimes.ApplyEntries(t.Context(), f.Ref, nil); err != nil {
			t.Fatal(err)
		}
		eventually(t, "entries removed", holds(func() bool { rt := get(t, f); return len(rt.Entries) == 0 && !rt.Managed }))
	})
	t.Run("a field another manager owns is never overwritten", func(t *testing.T) {
		f := newFixture(t)
		if err := f.TakeOver(t.Context()); err != nil {
			t.Fatal(err)
		}
		eventually(t, "entries of the other manager", holds(func() bool { rt := get(t, f); return len(rt.Entries) > 0 && !rt.Managed }))
		err := f.Runtimes.ApplyEntries(t.Context(), f.Ref, entries)
		if !errors.Is(err, ports.ErrFieldOwnedByOthers) {
			t.Fatalf("apply over another manager: %v, want ErrFieldOwnedByOthers", err)
		}
	})
	t.Run("a missing runtime does not exist", func(t *testing.T) {
		f := newFixture(t)
		rt, err := f.Runtimes.Get(t.Context(), ports.RuntimeRef{Namespace: f.Ref.Namespace, RuntimeID: "no-such-runtime"})
		if err != nil || rt.Exists {
			t.Errorf("%+v, %v; want not existing, no error", rt, err)
		}
	})
}

// holds turns a condition into eventually's form.
func holds(cond func() bool) func(c *assert.CollectT) {
	return func(c *assert.CollectT) {
		if !cond() {
			c.Errorf("condition not met")
		}
	}
}
