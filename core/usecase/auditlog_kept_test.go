package usecase_test

import (
	"context"
	"testing"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/usecase"
)

// TestAuditLogKeptWithoutATenantIsReported: a cluster whose region loses its audit log tenant from the landscape's
// configuration keeps its audit log (issue 39.3) and the Runtime says so in the condition AuditLogKept; when the
// tenant is back the condition goes.
func TestAuditLogKeptWithoutATenantIsReported(t *testing.T) {
	clock := fake.NewClock(reapStart)
	garden := fake.NewGarden(clock)
	cfg := modelConfig()
	tenants := map[shoot.Provider]map[string]shoot.AuditLogTenant{shoot.AWS: {"eu-west-1": {TenantID: "t-west", ServiceURL: "https://auditlog.example/west"}}}
	cfg.AuditLog = shoot.AuditLogConfig{Enabled: true, SecretName: "shared-auditlog", PolicyConfigMapName: "audit-policy", Tenants: tenants}
	p := &usecase.Provisioner{Shoots: garden, Seeds: garden, Access: fake.NewAccessObjects(), Configurator: fake.NewRuntimeConfigurator(),
		Guard: &fake.DeletionGuard{}, Config: cfg, Policy: modelPolicy()}
	rt := &kcpRuntime{id: "rt-1", shoot: "c-1", plan: "aws", generation: 1}
	provision := func(step string) usecase.ProvisionResult {
		t.Helper()
		req := usecase.RuntimeRequest{Runtime: rt.spec(), Namespace: modelNamespace, Plan: "aws", Labels: map[string]string{}}
		res, err := p.Provision(context.Background(), req, clock.Now())
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		spec, ok := garden.Spec("c-1")
		if !ok {
			t.Fatalf("%s: no shoot: %s %s", step, res.Decision.Reason, res.Decision.Message)
		}
		if c, ok := auditLogConfig(spec); !ok || c.TenantID != "t-west" {
			t.Errorf("%s: shoot audit log %+v, want tenant t-west kept", step, c)
		}
		return res
	}
	if c := conditionOf(provision("with the tenant"), lifecycle.ConditionAuditLogKept); c != nil {
		t.Errorf("with the tenant configured: %+v", c)
	}

	p.Config.AuditLog.Tenants = map[shoot.Provider]map[string]shoot.AuditLogTenant{}
	rt.generation++ // KEB changes the Runtime: the spec is generated and applied again
	res := provision("without the tenant")
	if c := conditionOf(res, lifecycle.ConditionAuditLogKept); c == nil || !c.Status || c.Reason != lifecycle.ReasonAuditLogTenantMissing {
		t.Errorf("without the tenant: condition %+v, want AuditLogKept true (%s)", c, lifecycle.ReasonAuditLogTenantMissing)
	}

	p.Config.AuditLog.Tenants = tenants
	rt.generation++
	if c := conditionOf(provision("the tenant back"), lifecycle.ConditionAuditLogKept); c != nil {
		t.Errorf("with the tenant back: %+v", c)
	}
}
