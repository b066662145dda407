package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/shoot"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/testenv"
)

const (
	aclRuntimeID = "3b9e1f7c-6d2a-4e8b-9c5f-1a0d7e6b4c92"
	aclShoot     = "p-acl"
	// aclConfigMap is shoot.acl.configMap of the golden configuration.
	aclConfigMap = "acl-ip-list"

	zonelessRuntimeID = "7c4e2a91-3f6b-4d8e-a1c5-9b0f2e6d8a37"
	zonelessShoot     = "p-zoneless"
)

// landscapeScenarios cover the landscape rules of issue 13 that need the running operator.
func (w *world) landscapeScenarios(trial *imv1.Runtime) []scenario {
	return []scenario{
		{"ACLFollowsControlPlaneAddresses", func(t *testing.T) {
			rt := freshRuntime(trial, aclRuntimeID, aclShoot)
			rt.Spec.Shoot.Kubernetes.KubeAPIServer.ACL = &imv1.ACL{AllowedCIDRs: []string{"203.0.113.0/24"}}
			w.aclFollowsControlPlaneAddresses(t, rt)
		}},
		{"PoolWithoutZonesGetsTheProfilesZones", func(t *testing.T) {
			// As KEB sends it when its providers configuration lists no zones for the region: no zones, maxSurge
			// the zone count it meant to use.
			rt := freshRuntime(trial, zonelessRuntimeID, zonelessShoot)
			two := intstr.FromInt32(2)
			rt.Spec.Shoot.Provider.Workers[0].Zones, rt.Spec.Shoot.Provider.Workers[0].MaxSurge = nil, &two
			rt.Spec.Shoot.Provider.Workers[0].Minimum, rt.Spec.Shoot.Provider.Workers[0].Maximum = 2, 2
			w.poolWithoutZones(t, rt)
		}},
	}
}

// aclFollowsControlPlaneAddresses: a Runtime restricting API server access is refused while the control plane's
// egress addresses are unknown (no shoot that would lock KCP out), is provisioned once they are published in the
// KCP ConfigMap, and its shoot follows a change of that ConfigMap without an operator restart (issue 13, item 3).
func (w *world) aclFollowsControlPlaneAddresses(t *testing.T, rt *imv1.Runtime) {
	ctx := context.Background()
	if err := w.kcp.Create(ctx, rt.DeepCopy()); err != nil {
		t.Fatalf("create runtime %s: %v", rt.Name, err)
	}
	testenv.Eventually(t, stepTimeout, "runtime "+rt.Name+" refused without control plane addresses", func() (bool, string) {
		got := w.runtime(t, rt.Name)
		if s := w.shoot(t, rt.Spec.Shoot.Name); s != nil {
			t.Fatalf("shoot %s created with an ACL while the control plane addresses are unknown", s.Name)
		}
		return got != nil && got.Status.State == imv1.RuntimeStateFailed &&
			strings.Contains(readyCondition(got).Message, string(shoot.ReasonACLOperatorAddressesMissing)), describe(got)
	})

	w.publishAddresses(t, []string{"192.0.2.0/29"}, "198.51.100.200/32")
	w.waitReady(t, rt.Name, provisionTimeout)
	w.waitShootACL(t, rt.Spec.Shoot.Name, []string{"203.0.113.0/24", "192.0.2.0/29", "198.51.100.200/32"})

	w.publishAddresses(t, []string{"192.0.2.0/29", "192.0.2.128/29"}, "198.51.100.201/32")
	w.waitShootACL(t, rt.Spec.Shoot.Name, []string{"203.0.113.0/24", "192.0.2.0/29", "192.0.2.128/29", "198.51.100.201/32"})
	w.waitReady(t, rt.Name, stepTimeout)
	w.deleteRuntime(t, rt)
}

// publishAddresses writes the KCP ConfigMap with the control plane's egress addresses as the landscape does.
func (w *world) publishAddresses(t *testing.T, operators []string, kcpNAT string) {
	t.Helper()
	ctx := context.Background()
	list, _ := json.Marshal(operators)
	nat, _ := json.Marshal(kcpNAT)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: aclConfigMap}}
	err := w.kcp.Get(ctx, client.ObjectKeyFromObject(cm), cm)
	cm.Data = map[string]string{kube.OperatorCIDRsKey: string(list), kube.KCPEgressKey: string(nat)}
	switch {
	case apierrors.IsNotFound(err):
		err = w.kcp.Create(ctx, cm)
	case err == nil:
		err = w.kcp.Update(ctx, cm)
	}
	if err != nil {
		t.Fatalf("write ConfigMap %s: %v", aclConfigMap, err)
	}
}

// waitShootACL waits until the shoot's acl extension allows exactly want.
func (w *world) waitShootACL(t *testing.T, shootName string, want []string) {
	t.Helper()
	testenv.Eventually(t, stepTimeout, "acl of shoot "+shootName, func() (bool, string) {
		s := w.shoot(t, shootName)
		if s == nil {
			return false, "no shoot"
		}
		i := slices.IndexFunc(s.Spec.Extensions, func(e gardencorev1beta1.Extension) bool { return e.Type == shoot.ExtensionACL })
		if i < 0 || s.Spec.Extensions[i].ProviderConfig == nil {
			return false, "no acl extension"
		}
		var cfg struct {
			Rule struct {
				CIDRs []string `json:"cidrs"`
			} `json:"rule"`
		}
		if err := json.Unmarshal(s.Spec.Extensions[i].ProviderConfig.Raw, &cfg); err != nil {
			return false, err.Error()
		}
		return slices.Equal(cfg.Rule.CIDRs, want), strings.Join(cfg.Rule.CIDRs, ",")
	})
}

// poolWithoutZones: a Runtime whose pool has no zones is admitted, reaches Ready, and its shoot's pool has the first
// zones (maxSurge of them) the garden's cloud profile lists for the region, in the profile's order; the Runtime itself
// is left as KEB wrote it.
func (w *world) poolWithoutZones(t *testing.T, rt *imv1.Runtime) {
	ctx := context.Background()
	if err := w.kcp.Create(ctx, rt.DeepCopy()); err != nil {
		t.Fatalf("create runtime %s with a pool without zones: %v", rt.Name, err)
	}
	got := w.waitReady(t, rt.Name, provisionTimeout)
	s := w.shoot(t, rt.Spec.Shoot.Name)
	if s == nil || s.Spec.CloudProfile == nil {
		t.Fatalf("shoot %s of a Ready runtime without a cloud profile: %+v", rt.Spec.Shoot.Name, s)
	}
	profile := &gardencorev1beta1.CloudProfile{}
	if err := w.garden.Get(ctx, client.ObjectKey{Name: s.Spec.CloudProfile.Name}, profile); err != nil {
		t.Fatalf("read the cloud profile: %v", err)
	}
	var want []string
	for _, r := range profile.Spec.Regions {
		if r.Name == rt.Spec.Shoot.Region {
			for _, z := range r.Zones[:min(2, len(r.Zones))] {
				want = append(want, z.Name)
			}
		}
	}
	if len(want) < 2 {
		t.Fatalf("the sandbox profile lists %v in %s; the test needs two zones", want, rt.Spec.Shoot.Region)
	}
	pool := worker(s, rt.Spec.Shoot.Provider.Workers[0].Name)
	if pool == nil || !slices.Equal(pool.Zones, want) {
		t.Errorf("shoot pool %+v; want zones %v, the profile's first two in %s", pool, want, rt.Spec.Shoot.Region)
	}
	if z := got.Spec.Shoot.Provider.Workers[0].Zones; len(z) != 0 {
		t.Errorf("the Runtime's pool got zones %v; the operator must not write KEB's spec", z)
	}
}
