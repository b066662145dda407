package auditlog

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var now = time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)

func tenant(name string, mut ...func(*Tenant)) Tenant {
	t := Tenant{Name: name, Version: "1", State: StateSiemApproved, Regions: []string{"eu-central-1", "eu-west-1"},
		TenantID: "tid-" + name, ServiceURL: "https://auditlog.example/" + name, SecretName: name + "-write",
		ReadCredentials: SecretRef{Namespace: "kcp-system", Name: name + "-read"}}
	for _, m := range mut {
		m(&t)
	}
	return t
}

func assigned(id string) func(*Tenant) {
	return func(t *Tenant) { t.AssignedTo, t.State = id, StateAssigned }
}
func reserved(id string) func(*Tenant) { return func(t *Tenant) { t.ReservedFor = id } }

func TestDecideClaim(t *testing.T) {
	req := Request{RuntimeID: "rt-1", Region: "eu-central-1", Enabled: true}
	existing := req
	existing.Existing = true
	state := func(s State) func(*Tenant) { return func(t *Tenant) { t.State = s } }
	for _, tc := range []struct {
		reason     string
		req        Request
		pool       []Tenant
		wantAction Action
		wantTenant string // Tenant of the action, or the claimed tenant for ActionNone
		wantEmpty  bool
	}{
		{reason: "an existing claim is kept and nothing is written", req: req,
			pool:       []Tenant{tenant("a"), tenant("b", assigned("rt-1"))},
			wantTenant: "b"},
		{reason: "a claim is kept after switching auditLogAccessEnabled off (one-way)", req: Request{RuntimeID: "rt-1"},
			pool:       []Tenant{tenant("b", assigned("rt-1"))},
			wantTenant: "b"},
		{reason: "a runtime that does not ask and holds nothing gets nothing", req: Request{RuntimeID: "rt-1"},
			pool: []Tenant{tenant("a")}},
		{reason: "a reservation of the runtime is resumed: claimed, not a second one reserved", req: req,
			pool:       []Tenant{tenant("a"), tenant("b", reserved("rt-1"))},
			wantAction: ActionClaim, wantTenant: "b"},
		{reason: "a reservation of a tenant withdrawn since (UnrecoverableError) is given back, not claimed", req: req,
			pool:       []Tenant{tenant("a"), tenant("b", reserved("rt-1"), state(StateUnrecoverableError))},
			wantAction: ActionUnreserve, wantTenant: "b"},
		{reason: "a reservation next to a claim (interrupted claim) is given back", req: req,
			pool:       []Tenant{tenant("a", reserved("rt-1")), tenant("b", assigned("rt-1"))},
			wantAction: ActionUnreserve, wantTenant: "a"},
		{reason: "a free tenant is reserved", req: req,
			pool:       []Tenant{tenant("a", assigned("rt-2")), tenant("b", reserved("rt-3")), tenant("c")},
			wantAction: ActionReserve, wantTenant: "c"},
		{reason: "orphaned, unusable and foreign-region tenants are not free", req: req,
			pool: []Tenant{tenant("a", func(t *Tenant) { t.Orphaned = true }), tenant("b", func(t *Tenant) { t.TenantID = "" }),
				tenant("c", func(t *Tenant) { t.Regions = []string{"us-east-1"} }), tenant("d", func(t *Tenant) { t.Regions = nil }),
				tenant("e", func(t *Tenant) { t.ServiceURL = "" }), tenant("f", func(t *Tenant) { t.SecretName = "" })},
			wantEmpty: true},
		{reason: "only RegistrationReady and SiemApproved tenants are handed out", req: req,
			pool: []Tenant{tenant("a", state(StatePending)), tenant("b", state(StateAssigned)), tenant("c", state(StateOrphaned)),
				tenant("d", state(StatePendingDelete)), tenant("e", state(StateUnrecoverableError)), tenant("f", state(""))},
			wantEmpty: true},
		{reason: "a RegistrationReady tenant is free", req: req,
			pool:       []Tenant{tenant("a", state(StateRegistrationReady))},
			wantAction: ActionReserve, wantTenant: "a"},
		{reason: "a tenant is free for any region it lists", req: Request{RuntimeID: "rt-1", Region: "eu-west-1", Enabled: true},
			pool:       []Tenant{tenant("a", func(t *Tenant) { t.Regions = []string{"us-east-1"} }), tenant("b")},
			wantAction: ActionReserve, wantTenant: "b"},
		{reason: "a runtime whose cluster exists claims at once (reservation and assignment in one write)", req: existing,
			pool:       []Tenant{tenant("a", assigned("rt-2")), tenant("b")},
			wantAction: ActionClaim, wantTenant: "b"},
		{reason: "adoption: a tenant the previous manager claimed (labels and assignment, Assigned) is kept", req: existing,
			pool:       []Tenant{tenant("a"), tenant("b", assigned("rt-1"), reserved("rt-1"))},
			wantTenant: "b"},
		{reason: "adoption: kept even when the runtime stopped asking", req: Request{RuntimeID: "rt-1", Region: "eu-central-1"},
			pool:       []Tenant{tenant("b", assigned("rt-1"), reserved("rt-1"))},
			wantTenant: "b"},
		{reason: "an orphaned tenant of the runtime is not its claim", req: req,
			pool: []Tenant{tenant("a", assigned("rt-1"), func(t *Tenant) { t.Orphaned = true })}, wantEmpty: true},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			d := DecideClaim(tc.req, tc.pool)
			if d.Action != tc.wantAction || d.PoolEmpty != tc.wantEmpty {
				t.Fatalf("decision %+v, want action %q empty %v", d, tc.wantAction, tc.wantEmpty)
			}
			got := d.Tenant.Name
			if d.Action == ActionNone && d.Claimed != nil {
				got = d.Claimed.Name
			}
			if got != tc.wantTenant {
				t.Errorf("tenant %q, want %q", got, tc.wantTenant)
			}
		})
	}
}

// TestDecideClaimSpreadsConcurrentClaimers: many runtimes deciding on the same pool at once pick different
// tenants most of the time, so a crowd claiming from a pool converges in few rounds.
func TestDecideClaimSpreadsConcurrentClaimers(t *testing.T) {
	var pool []Tenant
	for i := range 40 {
		pool = append(pool, tenant(fmt.Sprintf("t-%02d", i)))
	}
	picked := map[string]int{}
	for i := range 50 {
		d := DecideClaim(Request{RuntimeID: fmt.Sprintf("runtime-%d", i), Region: "eu-central-1", Enabled: true}, pool)
		picked[d.Tenant.Name]++
	}
	if len(picked) < 20 {
		t.Errorf("50 runtimes picked only %d different tenants of 40: they would mostly race for the same ones", len(picked))
	}
}

func TestDecideKeep(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		reason string
		t      Tenant
		o      Owner
		now    time.Time
		want   KeepAction
	}{
		{"a free tenant needs nothing", tenant("a"), Owner{}, now, KeepNone},
		{"an orphaned tenant is left to the landscape", tenant("a", assigned("rt"), func(t *Tenant) { t.Orphaned = true }), Owner{}, now, KeepNone},
		{"a reservation of a runtime holding another tenant is given back", tenant("a", reserved("rt")),
			Owner{RuntimeExists: true, Enabled: true, HoldsOther: "b"}, now, KeepUnreserve},
		{"a reservation of a runtime that is gone is given back", tenant("a", reserved("rt")), Owner{}, now, KeepUnreserve},
		{"a reservation of a runtime that claims is kept", tenant("a", reserved("rt")), Owner{RuntimeExists: true, Enabled: true}, now, KeepNone},
		{"a reservation of a runtime that stopped asking is kept for a while", tenant("a", reserved("rt"), func(t *Tenant) { t.ReservedAt = now.Add(-time.Minute) }),
			Owner{RuntimeExists: true}, now, KeepNone},
		{"... and given back after the timeout", tenant("a", reserved("rt"), func(t *Tenant) { t.ReservedAt = now.Add(-ReservationTimeout) }),
			Owner{RuntimeExists: true}, now, KeepUnreserve},
		{"a claimed tenant of a provisioned runtime gets its read credentials copied", tenant("a", assigned("rt")),
			Owner{RuntimeExists: true, Provisioned: true}, now, KeepCopyCredentials},
		{"not before the runtime is provisioned", tenant("a", assigned("rt")), Owner{RuntimeExists: true}, now, KeepNone},
		{"a claim whose runtime is gone is confirmed against the garden first", tenant("a", assigned("rt")), Owner{}, now, KeepConfirmShoot},
		{"not released before the audit log manager shows it Assigned", tenant("a", assigned("rt"), func(t *Tenant) { t.State = StateSiemApproved }),
			Owner{ShootExists: &no}, now, KeepNone},
		{"the tenant stays while the cluster exists (grace window; a restore keeps it)", tenant("a", assigned("rt")), Owner{ShootExists: &yes}, now, KeepNone},
		{"released once runtime and cluster are gone", tenant("a", assigned("rt")), Owner{ShootExists: &no}, now, KeepRelease},
		{"never released while the runtime exists, whatever the garden says", tenant("a", assigned("rt")), Owner{RuntimeExists: true, Provisioned: true, ShootExists: &no}, now, KeepCopyCredentials},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			d := DecideKeep(tc.t, tc.o, tc.now)
			if d.Action != tc.want {
				t.Errorf("action %q (%s), want %q", d.Action, d.Message, tc.want)
			}
		})
	}
}

func TestCount(t *testing.T) {
	got := Count([]Tenant{tenant("a"), tenant("b", assigned("x")), tenant("c", reserved("y")),
		tenant("d", assigned("z"), func(t *Tenant) { t.Orphaned = true }), tenant("e", func(t *Tenant) { t.ServiceURL = "" }),
		tenant("f", func(t *Tenant) { t.State = StatePending }), tenant("g", assigned("w"), func(t *Tenant) { t.State = StateOrphaned })})
	if diff := cmp.Diff(Stats{Free: 1, Claimed: 1, Reserved: 1, Orphaned: 2, Unusable: 2}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
