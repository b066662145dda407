package contract

import (
	"testing"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
)

// checkInside asserts that the runtime holds d: namespace, ConfigMap, exactly the desired operator's OpenIDConnect
// resources and admin bindings (as the domain's plans see them: nothing left to write).
func checkInside(t *testing.T, f RuntimeConfiguratorFixture, d runtimeconfig.Desired) {
	t.Helper()
	ctx := t.Context()
	if ok, err := f.Inside.Namespace(ctx, runtimeconfig.Namespace); err != nil || !ok {
		t.Errorf("namespace %s missing: %v", runtimeconfig.Namespace, err)
	}
	data, labels, found, err := f.Inside.ConfigMap(ctx, runtimeconfig.Namespace, runtimeconfig.ProvisioningInfoName)
	if err != nil || !found || data[runtimeconfig.ProvisioningInfoKey] != d.ProvisioningInfo ||
		labels[runtimeconfig.LabelManagedBy] != runtimeconfig.ManagedByValue {
		t.Errorf("ConfigMap %s: found %v, labels %v, data %q, error %v; want the desired document", runtimeconfig.ProvisioningInfoName,
			found, labels, data[runtimeconfig.ProvisioningInfoKey], err)
	}
	oidc, err := f.Inside.OIDC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.ManageOIDC {
		if plan := runtimeconfig.PlanOIDC(oidc, d.OIDC); !plan.Empty() {
			t.Errorf("OpenIDConnect resources differ from the desired ones: would still apply %+v and delete %v (have %+v)", plan.Apply, plan.Delete, oidc)
		}
	} else if len(oidc) != 0 {
		t.Errorf("OpenIDConnect resources written although the runtime does not manage them: %+v", oidc)
	}
	bindings, err := f.Inside.Bindings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if plan := runtimeconfig.PlanBindings(bindings, d.Administrators); !plan.Empty() {
		t.Errorf("admin bindings differ from the desired ones: plan %+v (have %+v)", plan, bindings)
	}
}

func hasOIDC(t *testing.T, f RuntimeConfiguratorFixture, name string) bool {
	t.Helper()
	list, err := f.Inside.OIDC(t.Context())
	must(t, err)
	for _, o := range list {
		if o.Name == name {
			return true
		}
	}
	return false
}

func hasBinding(t *testing.T, f RuntimeConfiguratorFixture, name string) bool {
	t.Helper()
	list, err := f.Inside.Bindings(t.Context())
	must(t, err)
	for _, b := range list {
		if b.Name == name {
			return true
		}
	}
	return false
}
