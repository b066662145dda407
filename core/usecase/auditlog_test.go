package usecase_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

func poolTenant(name string) auditlog.Tenant {
	return auditlog.Tenant{Name: name, State: auditlog.StateSiemApproved, Regions: []string{"eu-central-1", "eu-west-1"},
		TenantID: "tid-" + name, ServiceURL: "https://auditlog.example/" + name, SecretName: name + "-write",
		ReadCredentials: auditlog.SecretRef{Namespace: modelNamespace, Name: name + "-read"}}
}

func claimReq(id string) auditlog.Request {
	return auditlog.Request{RuntimeID: id, Region: "eu-central-1", Enabled: true}
}

// TestAuditLogClaimConcurrently: 50 runtimes claim from a pool of 40 at the same time: 40 get distinct tenants,
// 10 wait with AuditLogPoolEmpty, and every tenant serves at most one runtime.
func TestAuditLogClaimConcurrently(t *testing.T) {
	var tenants []auditlog.Tenant
	for i := range 40 {
		tenants = append(tenants, poolTenant(fmt.Sprintf("tenant-%02d", i)))
	}
	pool := fake.NewAuditLogPool(tenants...)
	c := &usecase.AuditLogClaimer{Pool: pool}
	results := claimAll(t, c, 50)
	checkClaims(t, pool, results, 40, 10)
}

// claimAll lets n runtimes claim concurrently, each retrying while it lost races (ClaimingAuditLog), as the
// controller's requeue would.
func claimAll(t *testing.T, c *usecase.AuditLogClaimer, n int) map[string]usecase.AuditLogClaim {
	t.Helper()
	var mu sync.Mutex
	out := map[string]usecase.AuditLogClaim{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("runtime-%02d", i)
			for {
				res, err := c.Claim(context.Background(), claimReq(id), reapStart)
				if err != nil {
					t.Errorf("%s: %v", id, err)
					return
				}
				if res.Wait != nil && res.Wait.Reason == lifecycle.ReasonClaimingAuditLog {
					continue
				}
				mu.Lock()
				out[id] = res
				mu.Unlock()
				return
			}
		}()
	}
	wg.Wait()
	return out
}

func checkClaims(t *testing.T, pool ports.AuditLogPool, results map[string]usecase.AuditLogClaim, wantClaimed, wantWaiting int) {
	t.Helper()
	claimed, waiting := 0, 0
	byTenant := map[string]string{}
	for id, r := range results {
		switch {
		case r.Tenant != nil:
			claimed++
			if other, dup := byTenant[r.Tenant.Name]; dup {
				t.Errorf("tenant %s claimed by %s and %s", r.Tenant.Name, other, id)
			}
			byTenant[r.Tenant.Name] = id
		case r.Wait != nil && r.Wait.Reason == lifecycle.ReasonAuditLogPoolEmpty:
			waiting++
		default:
			t.Errorf("%s: neither a tenant nor waiting for the pool: %+v", id, r)
		}
	}
	if claimed != wantClaimed || waiting != wantWaiting {
		t.Errorf("%d claimed, %d waiting; want %d and %d", claimed, waiting, wantClaimed, wantWaiting)
	}
	stored, err := pool.List(context.Background(), ports.ReadLive)
	if err != nil {
		t.Fatal(err)
	}
	assigned := map[string]string{}
	for _, tn := range stored {
		switch {
		case tn.ReservedFor != "" && tn.AssignedTo == "":
			t.Errorf("tenant %s left reserved for %s", tn.Name, tn.ReservedFor)
		case tn.AssignedTo == "":
			continue
		}
		if prev, dup := assigned[tn.AssignedTo]; dup {
			t.Errorf("runtime %s holds %s and %s", tn.AssignedTo, prev, tn.Name)
		}
		assigned[tn.AssignedTo] = tn.Name
		if byTenant[tn.Name] != tn.AssignedTo {
			t.Errorf("tenant %s is assigned to %s in the pool but %q was told it holds it", tn.Name, tn.AssignedTo, byTenant[tn.Name])
		}
	}
	if len(assigned) != wantClaimed {
		t.Errorf("%d tenants assigned in the pool, want %d", len(assigned), wantClaimed)
	}
}

// TestAuditLogCrashBetweenReserveAndClaim: the reservation a crash leaves behind is resumed by the runtime, or given
// back when the runtime is gone or already holds another tenant.
func TestAuditLogCrashBetweenReserveAndClaim(t *testing.T) {
	crash := errors.New("operator killed")
	for _, tc := range []struct {
		reason string
		// after runs once the claim crashed with reserved held by rt-1; other is the second tenant.
		after func(t *testing.T, w *keeperWorld, reserved, other string)
	}{
		{"the runtime resumes its own reservation", func(t *testing.T, w *keeperWorld, reserved, _ string) {
			res, err := w.claimer.Claim(context.Background(), claimReq("rt-1"), reapStart)
			if err != nil || res.Tenant == nil || res.Tenant.Name != reserved {
				t.Fatalf("resumed claim %+v, %v; want tenant %s", res, err, reserved)
			}
			if w.pool.Writes["Reserve"] != 1 {
				t.Errorf("%d reservations, want the one before the crash only", w.pool.Writes["Reserve"])
			}
		}},
		{"the keeper gives back the reservation of a runtime that is gone", func(t *testing.T, w *keeperWorld, reserved, _ string) {
			w.runtimes.Delete("rt-1")
			w.keep(t, reserved)
			if tn, _ := w.pool.Tenant(reserved); tn.ReservedFor != "" || tn.AssignedTo != "" {
				t.Errorf("tenant %s after recovery: %+v, want free", reserved, tn)
			}
		}},
		{"the keeper gives back a stray reservation of a runtime that holds another tenant", func(t *testing.T, w *keeperWorld, reserved, other string) {
			o, _ := w.pool.Tenant(other)
			if _, err := w.pool.Claim(context.Background(), o, "rt-1", reapStart); err != nil {
				t.Fatal(err)
			}
			w.keep(t, reserved)
			if tn, _ := w.pool.Tenant(reserved); tn.ReservedFor != "" {
				t.Errorf("tenant %s after recovery: %+v, want free", reserved, tn)
			}
		}},
		{"the keeper leaves the reservation of a runtime that is still claiming", func(t *testing.T, w *keeperWorld, reserved, _ string) {
			w.keep(t, reserved)
			if tn, _ := w.pool.Tenant(reserved); tn.ReservedFor != "rt-1" {
				t.Errorf("tenant %s: %+v, want still reserved for rt-1", reserved, tn)
			}
		}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			w := newKeeperWorld(poolTenant("a"), poolTenant("b"))
			w.runtimes.Set("rt-1", ports.AuditLogOwner{Enabled: true, ShootName: "c-rt-1"})
			w.pool.Err = func(method string) error {
				if method == "Claim" {
					return crash
				}
				return nil
			}
			if _, err := w.claimer.Claim(context.Background(), claimReq("rt-1"), reapStart); !errors.Is(err, crash) {
				t.Fatalf("claim: %v, want the crash", err)
			}
			w.pool.Err = nil
			reserved, other := "a", "b"
			if tn, _ := w.pool.Tenant("b"); tn.ReservedFor == "rt-1" {
				reserved, other = "b", "a"
			}
			if tn, _ := w.pool.Tenant(reserved); tn.ReservedFor != "rt-1" || tn.AssignedTo != "" {
				t.Fatalf("after the crash tenant %s is %+v, want reserved for rt-1 and not claimed", reserved, tn)
			}
			tc.after(t, w, reserved, other)
		})
	}
}

type keeperWorld struct {
	pool     *fake.AuditLogPool
	runtimes *fake.AuditLogRuntimes
	garden   *fake.Garden
	kcp      *fake.KCPSecrets
	writer   *fake.RuntimeSecrets
	claimer  *usecase.AuditLogClaimer
	keeper   *usecase.AuditLogKeeper
}

func newKeeperWorld(tenants ...auditlog.Tenant) *keeperWorld {
	w := &keeperWorld{pool: fake.NewAuditLogPool(tenants...), runtimes: fake.NewAuditLogRuntimes(),
		garden: fake.NewGarden(fake.NewClock(reapStart)), kcp: fake.NewKCPSecrets(), writer: fake.NewRuntimeSecrets("rt-1")}
	w.claimer = &usecase.AuditLogClaimer{Pool: w.pool}
	w.keeper = &usecase.AuditLogKeeper{Pool: w.pool, Runtimes: w.runtimes, Shoots: w.garden, ShootList: w.garden, Credentials: w.kcp, Writer: w.writer,
		CredentialsPolicy: auditlog.CredentialsPolicy{Namespace: modelNamespace, OperatorSecrets: []string{"kim-gardener-kubeconfig"}}}
	return w
}

func (w *keeperWorld) keep(t *testing.T, name string) usecase.KeepResult {
	t.Helper()
	res, err := w.keeper.Keep(context.Background(), name, reapStart)
	if err != nil {
		t.Fatalf("keep %s: %v", name, err)
	}
	return res
}

// TestAuditLogReleasedOnlyWhenTheClusterIsGone walks a runtime with a dedicated tenant through provisioning, deletion,
// the grace window and the shoot's deletion, with the Provisioner, the Teardown and the Reaper of the use cases.
func TestAuditLogReleasedOnlyWhenTheClusterIsGone(t *testing.T) {
	w := newKeeperWorld(poolTenant("a"))
	clock := fake.NewClock(reapStart)
	w.garden = fake.NewGarden(clock)
	w.keeper.Shoots, w.keeper.ShootList = w.garden, w.garden
	access := fake.NewAccessObjects()
	cfg := modelConfig()
	cfg.AuditLog = shoot.AuditLogConfig{SecretName: "shared-auditlog", PolicyConfigMapName: "audit-policy"}
	p := &usecase.Provisioner{Shoots: w.garden, Seeds: w.garden, Access: access, Configurator: fake.NewRuntimeConfigurator(),
		Guard: &fake.DeletionGuard{}, Config: cfg, Policy: modelPolicy(), AuditLogs: w.claimer}
	rt := &kcpRuntime{id: "rt-1", shoot: "c-1", plan: "aws", generation: 1}
	req := usecase.RuntimeRequest{Runtime: rt.spec(), Namespace: modelNamespace, Plan: "aws", Labels: map[string]string{}, AuditLogAccess: true}
	res, err := p.Provision(context.Background(), req, clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if res.AuditLogCR != "a" {
		t.Fatalf("status.auditLogCR %q, want a", res.AuditLogCR)
	}
	spec, ok := w.garden.Spec("c-1")
	if !ok {
		t.Fatalf("no shoot created: %s %s", res.Decision.Reason, res.Decision.Message)
	}
	if c, ok := auditLogConfig(spec); !ok || c.TenantID != "tid-a" || c.ServiceURL != "https://auditlog.example/a" {
		t.Errorf("shoot audit log extension %+v, want the dedicated tenant a", c)
	}
	// The previous infrastructure manager's condition of a dedicated tenant.
	if c := conditionOf(res, lifecycle.ConditionCustomAuditLogConfigured); c == nil || c.Reason != lifecycle.ReasonCustomAuditLogConfigured ||
		!strings.Contains(c.Message, " a") {
		t.Errorf("condition %s: %+v", lifecycle.ConditionCustomAuditLogConfigured, c)
	}

	w.runtimes.Set("rt-1", ports.AuditLogOwner{Enabled: true, Provisioned: true, ShootName: "c-1"})
	w.kcp.SetLabelled(auditlog.SecretRef{Namespace: modelNamespace, Name: "a-read"}, map[string]string{auditlog.LabelReadCredentials: "a"},
		map[string][]byte{"clientSecret": []byte("read-only")})
	w.keep(t, "a")
	if d, ok := w.writer.Secret("rt-1", usecase.AuditLogCredentialsNamespace, usecase.AuditLogCredentialsName); !ok || string(d["clientSecret"]) != "read-only" {
		t.Errorf("read credentials in the runtime: %v %v", d, ok)
	}

	// The Runtime is deleted: the shoot is marked and kept for the window; the tenant stays with it.
	records := fake.NewDeletionRecords()
	td := &usecase.Teardown{Shoots: w.garden, Access: access, Records: records, Policy: modelPolicy()}
	if _, err := td.Run(context.Background(), usecase.TeardownRequest{RuntimeID: "rt-1", Namespace: modelNamespace, ShootName: "c-1",
		Plan: "aws", EverReady: true, RestoreDocument: []byte("{}")}, clock.Now()); err != nil {
		t.Fatal(err)
	}
	w.runtimes.Delete("rt-1")
	if r := w.keep(t, "a"); r.Decision.Action != auditlog.KeepNone {
		t.Fatalf("inside the window: %+v, want the tenant kept", r.Decision)
	}
	// A runtime restored inside the window finds its tenant again.
	if again, err := w.claimer.Claim(context.Background(), claimReq("rt-1"), clock.Now()); err != nil || again.Tenant == nil || again.Tenant.Name != "a" {
		t.Fatalf("restored runtime: %+v %v; want tenant a", again, err)
	}
	// The reaper deletes the shoot after the window; while Gardener deletes it the tenant still stays.
	policy := modelPolicy()
	reaper := &usecase.Reaper{Shoots: w.garden, Runtimes: fake.NewRuntimes(), Records: records, Guard: &fake.DeletionGuard{},
		Clock: &fake.ServerClock{Clock: clock}, Policy: policy,
		Restorer: &usecase.Restorer{Shoots: w.garden, Runtimes: fake.NewRuntimes(), Policy: policy, DefaultNamespace: modelNamespace}}
	clock.Step(policy.DefaultWindow + time.Minute)
	if r, err := reaper.Reap(context.Background(), "c-1", clock.Now()); err != nil || !r.Deleted {
		t.Fatalf("reaper after the window: %+v, %v", r.Decision, err)
	}
	if r := w.keep(t, "a"); r.Decision.Action != auditlog.KeepNone {
		t.Fatalf("while Gardener deletes the shoot: %+v, want the tenant kept", r.Decision)
	}
	if !w.garden.FinishDeletion("c-1") {
		t.Fatal("the garden did not finish the deletion")
	}
	// The audit log manager accepts spec.orphaned only on an Assigned tenant: not written before it shows one.
	if r := w.keep(t, "a"); r.Decision.Action != auditlog.KeepNone || r.Decision.RequeueAfter == 0 {
		t.Fatalf("shoot gone, tenant still SiemApproved: %+v, want kept with a recheck", r.Decision)
	}
	w.pool.SetState("a", auditlog.StateAssigned)
	if r := w.keep(t, "a"); r.Decision.Action != auditlog.KeepRelease {
		t.Fatalf("after the shoot is gone: %+v, want released", r.Decision)
	}
	if tn, _ := w.pool.Tenant("a"); !tn.Orphaned || tn.AssignedTo != "rt-1" {
		t.Errorf("released tenant %+v: want orphaned, still naming its runtime", tn)
	}
	if again, _ := w.claimer.Claim(context.Background(), claimReq("rt-2"), clock.Now()); again.Tenant != nil {
		t.Errorf("an orphaned tenant was handed to another runtime: %+v", again.Tenant)
	}
}

// TestAuditLogAdoptsTheTenantOfThePreviousManager: a runtime whose tenant the previous infrastructure manager
// claimed (labels and spec.assignedToRuntimeID, the audit log manager shows it Assigned, status.auditLogCR never
// set) keeps exactly that tenant on its existing shoot, with or without auditLogAccessEnabled, and nothing is
// written to the pool.
func TestAuditLogAdoptsTheTenantOfThePreviousManager(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		t.Run(fmt.Sprintf("auditLogAccessEnabled=%v", enabled), func(t *testing.T) {
			prev := poolTenant("b")
			prev.State, prev.AssignedTo, prev.ReservedFor, prev.ReservedAt = auditlog.StateAssigned, "rt-1", "rt-1", reapStart.Add(-24*time.Hour)
			w := newKeeperWorld(poolTenant("a"), prev, poolTenant("c"))
			p := &usecase.Provisioner{Shoots: w.garden, Seeds: w.garden, Access: fake.NewAccessObjects(), Configurator: fake.NewRuntimeConfigurator(),
				Guard: &fake.DeletionGuard{}, Config: modelConfig(), Policy: modelPolicy(), AuditLogs: w.claimer}
			rt := &kcpRuntime{id: "rt-1", shoot: "c-1", plan: "aws", generation: 1}
			req := usecase.RuntimeRequest{Runtime: rt.spec(), Namespace: modelNamespace, Plan: "aws", Labels: map[string]string{}, AuditLogAccess: enabled}
			res, err := p.Provision(context.Background(), req, reapStart)
			if err != nil {
				t.Fatal(err)
			}
			if res.AuditLogCR != "b" {
				t.Fatalf("status.auditLogCR %q (%s: %s), want the adopted tenant b", res.AuditLogCR, res.Decision.Reason, res.Decision.Message)
			}
			spec, ok := w.garden.Spec("c-1")
			if !ok {
				t.Fatalf("no shoot: %s %s", res.Decision.Reason, res.Decision.Message)
			}
			if c, ok := auditLogConfig(spec); !ok || c.TenantID != "tid-b" || c.ServiceURL != "https://auditlog.example/b" {
				t.Errorf("shoot audit log extension %+v, want the adopted tenant b", c)
			}
			if n := w.pool.Writes["Reserve"] + w.pool.Writes["Claim"] + w.pool.Writes["Unreserve"] + w.pool.Writes["Release"]; n != 0 {
				t.Errorf("%d writes to the pool (%v), want none", n, w.pool.Writes)
			}
		})
	}
}

// TestAuditLogWithdrawnReservationIsGivenBack: a tenant the audit log manager marked UnrecoverableError after the
// runtime reserved it is given back and another free tenant is claimed in the same pass.
func TestAuditLogWithdrawnReservationIsGivenBack(t *testing.T) {
	bad := poolTenant("a")
	bad.ReservedFor, bad.State = "rt-1", auditlog.StateUnrecoverableError
	w := newKeeperWorld(bad, poolTenant("b"))
	res, err := w.claimer.Claim(context.Background(), claimReq("rt-1"), reapStart)
	if err != nil || res.Tenant == nil || res.Tenant.Name != "b" {
		t.Fatalf("claim %+v, %v; want tenant b", res, err)
	}
	if a, _ := w.pool.Tenant("a"); a.ReservedFor != "" || a.AssignedTo != "" {
		t.Errorf("withdrawn tenant %+v, want given back", a)
	}
}

// TestAuditLogExistingRuntimeClaimsAtOnce: a runtime whose cluster exists already reserves and claims in one write,
// as the previous manager does when auditLogAccessEnabled is switched on later.
func TestAuditLogExistingRuntimeClaimsAtOnce(t *testing.T) {
	w := newKeeperWorld(poolTenant("a"))
	res, err := w.claimer.Claim(context.Background(), auditlog.Request{RuntimeID: "rt-1", Region: "eu-west-1", Enabled: true, Existing: true}, reapStart)
	if err != nil || res.Tenant == nil || res.Tenant.Name != "a" {
		t.Fatalf("claim %+v, %v; want tenant a", res, err)
	}
	tn, _ := w.pool.Tenant("a")
	if w.pool.Writes["Reserve"] != 0 || w.pool.Writes["Claim"] != 1 || tn.AssignedTo != "rt-1" || tn.ReservedFor != "rt-1" || !tn.ReservedAt.Equal(reapStart) {
		t.Errorf("writes %v, stored %+v; want one write with the assignment and both labels", w.pool.Writes, tn)
	}
}

// TestAuditLogPoolEmptyWaitsWithAStableReason: the Runtime's provisioning waits (no shoot) with AuditLogPoolEmpty.
func TestAuditLogPoolEmptyWaitsWithAStableReason(t *testing.T) {
	w := newKeeperWorld()
	p := &usecase.Provisioner{Shoots: w.garden, Seeds: w.garden, Access: fake.NewAccessObjects(), Configurator: fake.NewRuntimeConfigurator(),
		Guard: &fake.DeletionGuard{}, Config: modelConfig(), Policy: modelPolicy(), AuditLogs: w.claimer}
	rt := &kcpRuntime{id: "rt-1", shoot: "c-1", plan: "aws", generation: 1}
	req := usecase.RuntimeRequest{Runtime: rt.spec(), Namespace: modelNamespace, Plan: "aws", Labels: map[string]string{}, AuditLogAccess: true}
	res, err := p.Provision(context.Background(), req, reapStart)
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Decision; d.State != lifecycle.StatePending || d.Reason != lifecycle.ReasonAuditLogPoolEmpty || d.RequeueAfter == 0 {
		t.Errorf("decision %s %s (requeue %s), want Pending %s with a recheck", d.State, d.Reason, d.RequeueAfter, lifecycle.ReasonAuditLogPoolEmpty)
	}
	if c := conditionOf(res, lifecycle.ConditionProvisioned); c == nil || c.Status || c.Reason != lifecycle.ReasonCustomAuditLogError {
		t.Errorf("condition %s: %+v, want false %s as the previous manager reported it", lifecycle.ConditionProvisioned, c, lifecycle.ReasonCustomAuditLogError)
	}
	if _, ok := w.garden.Spec("c-1"); ok {
		t.Error("a shoot was created while the runtime waits for its tenant")
	}
	w.pool.Put(poolTenant("late"))
	if res, _ := p.Provision(context.Background(), req, reapStart.Add(time.Minute)); res.AuditLogCR != "late" {
		t.Errorf("after the pool got a tenant: auditLogCR %q (%s)", res.AuditLogCR, res.Decision.Reason)
	}
}

// conditionOf is the condition of type typ the status of res reports besides Ready; nil when none.
func conditionOf(res usecase.ProvisionResult, typ string) *lifecycle.Condition {
	for _, c := range lifecycle.Conditions(res.Input, res.Configuration) {
		if c.Type == typ {
			return &c
		}
	}
	return nil
}

func auditLogConfig(s shoot.Spec) (shoot.AuditLogExtensionConfig, bool) {
	for _, e := range s.Extensions {
		if c, ok := e.Config.(shoot.AuditLogExtensionConfig); ok && e.Type == shoot.ExtensionAuditLog {
			return c, true
		}
	}
	return shoot.AuditLogExtensionConfig{}, false
}

// stalePool answers cached reads with a snapshot taken earlier, as an informer that has not seen the latest writes.
type stalePool struct {
	ports.AuditLogPool
	cached []auditlog.Tenant
}

func (p *stalePool) List(ctx context.Context, mode ports.ReadMode) ([]auditlog.Tenant, error) {
	if mode == ports.ReadCached {
		return p.cached, nil
	}
	return p.AuditLogPool.List(ctx, mode)
}

// TestAuditLogClaimDecidesWritesLive: a cache that has not yet seen the runtime's existing claim (here the previous
// manager's assignment) must not make it reserve a second tenant: every write is decided on a live read (found on
// garden-in-a-box, where the adopted runtime took a free tenant and another runtime waited for the pool).
func TestAuditLogClaimDecidesWritesLive(t *testing.T) {
	pool := fake.NewAuditLogPool(poolTenant("a"), poolTenant("b"))
	before, err := pool.List(context.Background(), ports.ReadLive)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(before, func(t auditlog.Tenant) bool { return t.Name == "b" })
	if _, err := pool.Claim(context.Background(), before[i], "rt-1", reapStart); err != nil {
		t.Fatal(err)
	}
	// The cache shows b as the audit log manager first wrote it (Assigned, no assignment yet), so only a looks free.
	before[i].State = auditlog.StateAssigned
	writes := pool.Writes["Reserve"] + pool.Writes["Claim"]
	c := &usecase.AuditLogClaimer{Pool: &stalePool{AuditLogPool: pool, cached: before}}
	res, err := c.Claim(context.Background(), claimReq("rt-1"), reapStart)
	if err != nil {
		t.Fatal(err)
	}
	if res.Tenant == nil || res.Tenant.Name != "b" {
		t.Fatalf("claim %+v, want the runtime's existing tenant b", res)
	}
	if n := pool.Writes["Reserve"] + pool.Writes["Claim"] - writes; n != 0 {
		t.Errorf("%d writes to the pool (%v) on a stale cache, want none", n, pool.Writes)
	}
}
