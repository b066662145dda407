package kymaruntime

import (
	"context"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/shoot"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

func readyMessage(rt *imv1.Runtime) string {
	if c := meta.FindStatusCondition(rt.Status.Conditions, imv1.ConditionReady); c != nil {
		return c.Message
	}
	return ""
}

// TestReconcilerACLWaitsForControlPlaneAddresses: a Runtime restricting API server access is refused with a stable
// reason while the control plane's addresses are unknown, and applied with them once they are published.
func TestReconcilerACLWaitsForControlPlaneAddresses(t *testing.T) {
	w := newWorld(t)
	w.provision.Config.ACL.Enabled = true
	addresses := &fake.ControlPlaneAddresses{}
	w.provision.Addresses = addresses
	rt := &imv1.Runtime{}
	if err := w.kcp.Get(t.Context(), w.req.NamespacedName, rt); err != nil {
		t.Fatal(err)
	}
	rt.Spec.Shoot.Kubernetes.KubeAPIServer.ACL = &imv1.ACL{AllowedCIDRs: []string{"203.0.113.0/24"}}
	if err := w.kcp.Update(t.Context(), rt); err != nil {
		t.Fatal(err)
	}

	rt = w.reconcile(t)
	if rt.Status.State != imv1.RuntimeStateFailed || !strings.Contains(readyMessage(rt), string(shoot.ReasonACLOperatorAddressesMissing)) {
		t.Fatalf("without addresses: %s %q, want Failed with %s", rt.Status.State, readyMessage(rt), shoot.ReasonACLOperatorAddressesMissing)
	}
	if _, applied := w.garden.Spec(rt.Spec.Shoot.Name); applied {
		t.Fatal("a shoot was applied with an ACL that locks the control plane out")
	}
	if got := runtimesNeedingAddresses(t.Context(), w.kcp, w.provision.Config); len(got) != 1 || got[0].NamespacedName != w.req.NamespacedName {
		t.Errorf("an addresses change must reconcile this runtime, got %v", got)
	}

	addresses.Publish([]string{"192.0.2.0/29"})
	rt = w.reconcile(t)
	if rt.Status.State == imv1.RuntimeStateFailed {
		t.Fatalf("with addresses: still failed: %s", readyMessage(rt))
	}
	spec, ok := w.garden.Spec(rt.Spec.Shoot.Name)
	if !ok {
		t.Fatal("not applied")
	}
	i := slices.IndexFunc(spec.Extensions, func(e shoot.Extension) bool { return e.Type == shoot.ExtensionACL })
	if i < 0 || !slices.Equal(spec.Extensions[i].Config.(shoot.ACLConfig).AllowedCIDRs, []string{"203.0.113.0/24", "192.0.2.0/29"}) {
		t.Errorf("acl extension %+v", spec.Extensions)
	}

	addresses.PublishInvalid()
	rt = w.reconcile(t)
	if !strings.Contains(readyMessage(rt), string(shoot.ReasonACLOperatorAddressesMissing)) {
		t.Errorf("an unreadable address source must be refused with the stable reason, got %q", readyMessage(rt))
	}

	rt.Spec.Shoot.Kubernetes.KubeAPIServer.ACL = nil
	if err := w.kcp.Update(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	if got := runtimesNeedingAddresses(t.Context(), w.kcp, w.provision.Config); len(got) != 0 {
		t.Errorf("a runtime without ACL does not depend on the addresses, got %v", got)
	}
}

// legacyGarden is the fake garden whose shoots report the SecretBinding the credentials migrator still sees.
type legacyGarden struct {
	*fake.Garden
	migrator *fake.CredentialsMigrator
}

func (g legacyGarden) Current(ctx context.Context, name string) (*shoot.Current, error) {
	cur, err := g.Garden.Current(ctx, name)
	if cur != nil {
		cur.SecretBindingName, _ = g.migrator.Bindings(name)
	}
	return cur, err
}

// TestReconcilerMigratesAdoptedShootToCredentialsBinding: an adopted shoot that still names a SecretBinding is
// switched to the Runtime's CredentialsBinding before its first apply, and only once.
func TestReconcilerMigratesAdoptedShootToCredentialsBinding(t *testing.T) {
	w := newWorld(t)
	rt := &imv1.Runtime{}
	if err := w.kcp.Get(t.Context(), w.req.NamespacedName, rt); err != nil {
		t.Fatal(err)
	}
	name := rt.Spec.Shoot.Name
	migrator := fake.NewCredentialsMigrator()
	migrator.Credentials = map[string]string{"legacy-binding": "s", rt.Spec.Shoot.SecretBindingName: "s"}
	migrator.Put(name, "legacy-binding", "", true)
	w.provision.Shoots = legacyGarden{Garden: w.garden, migrator: migrator}
	w.provision.Credentials = migrator
	w.garden.PutPredecessor(shoot.Spec{Name: name, KubernetesVersion: "1.32.4",
		Workers: []shoot.WorkerSpec{{Worker: shoot.Worker{Name: "cpu-worker-0", Minimum: 1, Maximum: 1}}}}, rt.Name)

	w.reconcile(t) // adopts
	w.reconcile(t) // switches the binding (the shoot changed: looked at again before applying)
	rt = w.reconcile(t)
	if readyReason(rt) == string(lifecycle.ReasonShootNameTaken) || rt.Status.State == imv1.RuntimeStateFailed {
		t.Fatalf("%s: %s", rt.Status.State, readyMessage(rt))
	}
	if sb, cb := migrator.Bindings(name); sb != "" || cb != rt.Spec.Shoot.SecretBindingName {
		t.Errorf("bindings after adoption: %q, %q; want \"\", %q", sb, cb, rt.Spec.Shoot.SecretBindingName)
	}
	if w.garden.Calls()["Apply"] == 0 {
		t.Error("the adopted shoot was not applied after the switch")
	}
	w.reconcile(t)
	if sb, _ := migrator.Bindings(name); sb != "" {
		t.Error("migrated twice")
	}
}
