package gardener

import (
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/internal/mapping"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/testenv/goldenshoots"
)

// TestAuthConfigMapOwnedByShootIntegration: the structured-authentication ConfigMap is owned by its shoot (the
// garden's garbage collector deletes it with the shoot); a lost owner reference is drift that Apply repairs; and
// the ConfigMap the previous infrastructure manager created for an adopted shoot is taken over under its name
// instead of being orphaned next to a new one.
func TestAuthConfigMapOwnedByShootIntegration(t *testing.T) {
	env := GardenBox(t)
	cfg := goldenshoots.Config(t, "aws-acl-multi-oidc")
	c := env.GardenClient
	ns := env.Catalogue.ProjectNamespace()
	adapter := &Shoots{Client: c, Live: c, Namespace: ns, RuntimeNamespace: "kcp-system"}
	rt := loadRuntime(t, "testdata/runtimes/aws-acl-multi-oidc.yaml")
	configMap := func(name string) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{}
		err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, cm)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		return cm
	}

	// adoptPredecessor leaves what the previous system left for r's shoot (its ConfigMap structured-auth-config-<shoot>
	// with data, no marks of ours, and a shoot referencing it), adopts the shoot and returns it with the ConfigMap
	// and the first update generated under cfg.
	adoptPredecessor := func(t *testing.T, r *imv1.Runtime, cfg shoot.Config, data string) (*gardencorev1beta1.Shoot, *corev1.ConfigMap, shoot.Spec) {
		t.Helper()
		name := r.Spec.Shoot.Name
		spec, err := shoot.Generate(mapping.Runtime(r), cfg)
		if err != nil {
			t.Fatal(err)
		}
		legacy := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: shoot.LegacyAuthenticationConfigMapPrefix + name, Namespace: ns},
			Data: map[string]string{translate.AuthenticationConfigKey: data}}
		if err := c.Create(t.Context(), legacy); err != nil {
			t.Fatal(err)
		}
		predecessor, err := translate.ToShoot(spec)
		if err != nil {
			t.Fatal(err)
		}
		predecessor.Namespace = ns
		predecessor.Labels = nil
		predecessor.Annotations = map[string]string{shoot.AnnotationRuntimeID: r.Name}
		predecessor.Spec.Kubernetes.KubeAPIServer.StructuredAuthentication = &gardencorev1beta1.StructuredAuthentication{ConfigMapName: legacy.Name}
		if err := c.Create(t.Context(), predecessor); err != nil {
			t.Fatal(err)
		}
		if _, err := adoptRetrying(t, adapter, name, r.Name, "aws"); err != nil {
			t.Fatal(err)
		}
		live := getShoot(t, c, ns, name)
		cur, err := translate.CurrentFromShoot(live)
		if err != nil {
			t.Fatal(err)
		}
		update, err := shoot.GenerateUpdate(mapping.Runtime(r), cfg, cur)
		if err != nil {
			t.Fatal(err)
		}
		return live, legacy, update
	}

	t.Run("owned after create, repaired after drift", func(t *testing.T) {
		r := rt.DeepCopy()
		r.Spec.Shoot.Name = "own-cm"
		spec, err := shoot.Generate(mapping.Runtime(r), cfg)
		if err != nil {
			t.Fatal(err)
		}
		a := ports.ShootApply{Spec: spec, RuntimeID: r.Name, RuntimeGeneration: 1, SpecHash: "h"}
		if _, err := adapter.Apply(t.Context(), a); err != nil {
			t.Fatal(err)
		}
		s := getShoot(t, c, ns, "own-cm")
		cm := configMap(spec.Authentication.ConfigMapName)
		if cm == nil || !ownedByShoot(cm.OwnerReferences, s) {
			t.Fatalf("ConfigMap not owned by shoot %s: %+v", s.UID, cm)
		}
		patch := client.MergeFrom(cm.DeepCopy())
		cm.OwnerReferences = nil
		if err := c.Patch(t.Context(), cm, patch); err != nil {
			t.Fatal(err)
		}
		if got, err := adapter.InSync(t.Context(), a); err != nil || got.InSync {
			t.Fatalf("in sync (%+v, %v) although the ConfigMap lost its owner", got, err)
		}
		if _, err := reapplyLive(t, adapter, a); err != nil {
			t.Fatal(err)
		}
		if cm := configMap(spec.Authentication.ConfigMapName); !ownedByShoot(cm.OwnerReferences, s) {
			t.Errorf("owner not repaired: %+v", cm.OwnerReferences)
		}
		if got, err := adapter.InSync(t.Context(), a); err != nil || !got.InSync {
			t.Errorf("not in sync after repair: %+v, %v", got, err)
		}
	})

	t.Run("the previous system's ConfigMap is adopted under its name", func(t *testing.T) {
		r := rt.DeepCopy()
		r.Spec.Shoot.Name = "adopt-cm"
		legacyName := shoot.LegacyAuthenticationConfigMapPrefix + "adopt-cm"
		_, _, spec := adoptPredecessor(t, r, cfg, "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt: []\n")
		if spec.Authentication.ConfigMapName != legacyName {
			t.Fatalf("update generates ConfigMap %s, want the adopted %s", spec.Authentication.ConfigMapName, legacyName)
		}
		if _, err := reapplyLive(t, adapter, ports.ShootApply{Spec: spec, RuntimeID: r.Name, RuntimeGeneration: 1, SpecHash: "h"}); err != nil {
			t.Fatal(err)
		}
		s := getShoot(t, c, ns, "adopt-cm")
		cm := configMap(legacyName)
		want, err := translate.AuthenticationConfigMapData(spec.Authentication)
		if err != nil {
			t.Fatal(err)
		}
		if cm.Labels[wire.LabelManagedBy] != wire.ManagedByValue || cm.Data[translate.AuthenticationConfigKey] != want[translate.AuthenticationConfigKey] || !ownedByShoot(cm.OwnerReferences, s) {
			t.Errorf("legacy ConfigMap not taken over: labels %v, owners %v, data %q", cm.Labels, cm.OwnerReferences, cm.Data)
		}
		if other := configMap(shoot.AuthenticationConfigMapPrefix + "adopt-cm"); other != nil {
			t.Errorf("a second ConfigMap %s was created next to the adopted one", other.Name)
		}
		if ref := s.Spec.Kubernetes.KubeAPIServer.StructuredAuthentication; ref == nil || ref.ConfigMapName != legacyName {
			t.Errorf("shoot references %v", ref)
		}
	})

	t.Run("under the previous manager's rules its ConfigMap keeps its data byte for byte", func(t *testing.T) {
		r := rt.DeepCopy()
		r.Spec.Shoot.Name = "keep-cm"
		prevCfg := cfg
		prevCfg.PreviousAuthentication = true // what its converter file maps to
		dash := "-"
		prevCfg.OperatorOIDC = []shoot.OIDC{{IssuerURL: "https://kcp-operators.accounts.example.com", ClientID: "kcp-operators",
			UsernameClaim: "sub", UsernamePrefix: &dash, GroupsClaim: "groups", SigningAlgs: []string{"RS256"}}}
		live, legacy, spec := adoptPredecessor(t, r, prevCfg, previousOperatorDash)
		legacyName := legacy.Name
		a := ports.ShootApply{Spec: spec, RuntimeID: r.Name, RuntimeGeneration: 1, SpecHash: "h"}
		diffs, err := AdoptionDifferences(live, legacy.Data, a)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range diffs {
			if strings.HasPrefix(d.Path, AuthenticationPath) {
				t.Errorf("the adoption review reports a change of the ConfigMap: %s", d.Path)
			}
		}
		if _, err := reapplyLive(t, adapter, a); err != nil {
			t.Fatal(err)
		}
		cm := configMap(legacyName)
		if diff := cmp.Diff(legacy.Data, cm.Data); diff != "" {
			t.Errorf("the first write changed the data of %s (-previous manager +after):\n%s", legacyName, diff)
		}
		if cm.Labels[wire.LabelManagedBy] != wire.ManagedByValue || !ownedByShoot(cm.OwnerReferences, getShoot(t, c, ns, "keep-cm")) {
			t.Errorf("ConfigMap not taken over: labels %v, owners %v", cm.Labels, cm.OwnerReferences)
		}
		if got, err := adapter.InSync(t.Context(), a); err != nil || !got.InSync {
			t.Errorf("not in sync after the first write: %+v, %v", got, err)
		}
	})
}
