package usecase_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/usecase"
)

// TestAuditLogInvalidTenantNeverReachesAShoot: a tenant whose service URL is not https (or whose Secret name is
// not a Secret name) is never handed out: a new runtime waits with AuditLogPoolEmpty and no shoot is created. A
// runtime that holds one (claimed while its values were accepted) waits with the stable reason
// AuditLogTenantInvalid: it keeps its claim and status.auditLogCR, and its shoot keeps the values it has.
func TestAuditLogInvalidTenantNeverReachesAShoot(t *testing.T) {
	bad := poolTenant("a")
	bad.ServiceURL = "http://auditlog.example/a"
	w := newKeeperWorld(bad)
	p := &usecase.Provisioner{Shoots: w.garden, Seeds: w.garden, Access: fake.NewAccessObjects(), Configurator: fake.NewRuntimeConfigurator(),
		Guard: &fake.DeletionGuard{}, Config: modelConfig(), Policy: modelPolicy(), AuditLogs: w.claimer}
	ctx := context.Background()

	fresh := &kcpRuntime{id: "rt-new", shoot: "c-new", plan: "aws", generation: 1}
	req := usecase.RuntimeRequest{Runtime: fresh.spec(), Namespace: modelNamespace, Plan: "aws", Labels: map[string]string{}, AuditLogAccess: true}
	res, err := p.Provision(ctx, req, reapStart)
	if err != nil {
		t.Fatal(err)
	}
	if res.Decision.Reason != lifecycle.ReasonAuditLogPoolEmpty || res.AuditLogCR != "" {
		t.Errorf("a pool of one http tenant: %s, auditLogCR %q; want AuditLogPoolEmpty and no tenant", res.Decision.Reason, res.AuditLogCR)
	}
	if _, ok := w.garden.Spec("c-new"); ok {
		t.Error("a shoot was created with no usable tenant")
	}
	if a, _ := w.pool.Tenant("a"); a.ReservedFor != "" || a.AssignedTo != "" {
		t.Errorf("the http tenant was handed out: %+v", a)
	}

	// A runtime holding tenant b, whose values turn out wrong after its shoot got them.
	w.pool.Put(poolTenant("b"))
	rt := &kcpRuntime{id: "rt-1", shoot: "c-1", plan: "aws", generation: 1}
	req = usecase.RuntimeRequest{Runtime: rt.spec(), Namespace: modelNamespace, Plan: "aws", Labels: map[string]string{}, AuditLogAccess: true}
	if res, err = p.Provision(ctx, req, reapStart); err != nil || res.AuditLogCR != "b" {
		t.Fatalf("claim b: %+v, %v", res.Decision, err)
	}
	if _, ok := w.garden.Spec("c-1"); !ok {
		t.Fatalf("no shoot: %s %s", res.Decision.Reason, res.Decision.Message)
	}
	writes := len(w.garden.Writes())
	held, _ := w.pool.Tenant("b")
	held.ServiceURL, held.SecretName = "https://user:pw@auditlog.example/b", "Not_A_Secret"
	w.pool.Put(held)
	rt.generation = 2 // a change the operator would apply
	req.Runtime = rt.spec()
	res, err = p.Provision(ctx, req, reapStart.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	d := res.Decision
	if d.State != lifecycle.StatePending || d.Reason != lifecycle.ReasonAuditLogTenantInvalid || d.RequeueAfter == 0 {
		t.Errorf("decision %s %s (requeue %s), want Pending %s with a recheck", d.State, d.Reason, d.RequeueAfter, lifecycle.ReasonAuditLogTenantInvalid)
	}
	if !strings.Contains(d.Message, "serviceURL") || !strings.Contains(d.Message, "gardenerSecretName") || strings.Contains(d.Message, "pw@") {
		t.Errorf("message %q: want both problems named, never the password", d.Message)
	}
	if res.AuditLogCR != "b" {
		t.Errorf("status.auditLogCR %q, want b kept", res.AuditLogCR)
	}
	after, _ := w.garden.Spec("c-1")
	if c, ok := auditLogConfig(after); !ok || c.ServiceURL != "https://auditlog.example/b" {
		t.Errorf("shoot audit log extension %+v, want the values it had", c)
	}
	if n := len(w.garden.Writes()) - writes; n != 0 {
		t.Errorf("%d writes to the garden while the runtime's tenant is invalid, want none: %+v", n, w.garden.Writes()[writes:])
	}
}
