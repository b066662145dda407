package runtimeconfig

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheckPullSecret(t *testing.T) {
	optIn := map[string]string{LabelBootstrapPullSecret: "true"}
	cases := map[string]struct {
		reason string
		typ    string
		labels map[string]string
		want   string // substring of the refusal; "" accepted
	}{
		"a labelled dockerconfigjson Secret is copied": {reason: "the one shape that is allowed", typ: PullSecretType, labels: optIn},
		"an Opaque Secret is refused": {reason: "a kubeconfig or cloud credential is Opaque", typ: "Opaque", labels: optIn,
			want: `type "Opaque"`},
		"a service account token is refused": {reason: "a token Secret is credentials, not a pull secret",
			typ: "kubernetes.io/service-account-token", labels: optIn, want: "not kubernetes.io/dockerconfigjson"},
		"an unlabelled dockerconfigjson Secret is refused": {reason: "naming a Secret in the configuration is not opting it in",
			typ: PullSecretType, want: LabelBootstrapPullSecret},
		"a label with another value is refused": {reason: "only true opts in", typ: PullSecretType,
			labels: map[string]string{LabelBootstrapPullSecret: "yes"}, want: LabelBootstrapPullSecret},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := CheckPullSecret("kcp-system/pull", tc.typ, tc.labels)
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("%s: CheckPullSecret = %q, want containing %q", tc.reason, got, tc.want)
			}
		})
	}
}

func TestJudgeBootstrapObject(t *testing.T) {
	allowed := []BootstrapKind{
		{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"},
		{Group: "", Kind: "ConfigMap", Namespace: "kube-public"},
		{Group: GroupRBAC, Kind: "Role", Namespace: Namespace},
	}
	cases := map[string]struct {
		reason string
		target BootstrapTarget
		// wantNS is where it is applied; wantRefused: a refusal containing it.
		wantNS, wantRefused string
	}{
		"namespaced without namespace goes to kyma-system": {reason: "the default",
			target: BootstrapTarget{Group: "apps", Kind: "Deployment", Name: "agent", Namespaced: true}, wantNS: Namespace},
		"namespaced in kyma-system": {reason: "the default, named",
			target: BootstrapTarget{Kind: "ConfigMap", Name: "c", Namespace: Namespace, Namespaced: true}, wantNS: Namespace},
		"namespaced in another namespace is refused": {reason: "kube-system holds the cluster's controllers",
			target:      BootstrapTarget{Kind: "ConfigMap", Name: "c", Namespace: "kube-system", Namespaced: true},
			wantRefused: "ConfigMap core/kube-system/c is outside kyma-system"},
		"another namespace when listed": {reason: "the landscape allowed it",
			target: BootstrapTarget{Kind: "ConfigMap", Name: "c", Namespace: "kube-public", Namespaced: true}, wantNS: "kube-public"},
		"a listed kind in an unlisted namespace is refused": {reason: "the namespace is part of the entry",
			target:      BootstrapTarget{Kind: "ConfigMap", Name: "c", Namespace: "default", Namespaced: true},
			wantRefused: `namespace "default"`},
		"cluster-scoped is refused": {reason: "a ClusterRoleBinding grants cluster-admin to anyone",
			target:      BootstrapTarget{Group: GroupRBAC, Kind: "ClusterRoleBinding", Name: "everyone"},
			wantRefused: "ClusterRoleBinding rbac.authorization.k8s.io/everyone is a cluster-scoped kind"},
		"a webhook is refused": {reason: "a mutating webhook sees every object of the cluster",
			target:      BootstrapTarget{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration", Name: "w"},
			wantRefused: "MutatingWebhookConfiguration"},
		"cluster-scoped when listed": {reason: "the landscape allowed CRDs",
			target: BootstrapTarget{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "x.example.com"}},
		"a listed kind of another group is refused": {reason: "group and kind together name a kind",
			target:      BootstrapTarget{Group: "example.com", Kind: "CustomResourceDefinition", Name: "x"},
			wantRefused: "cluster-scoped"},
		"RBAC in kyma-system is refused by default": {reason: "a RoleBinding there hands kyma-system's Secrets to anyone",
			target:      BootstrapTarget{Group: GroupRBAC, Kind: "RoleBinding", Name: "b", Namespaced: true},
			wantRefused: "RoleBinding rbac.authorization.k8s.io/kyma-system/b is an RBAC kind"},
		"RBAC in kyma-system when listed": {reason: "the landscape allowed Roles there",
			target: BootstrapTarget{Group: GroupRBAC, Kind: "Role", Name: "r", Namespaced: true}, wantNS: Namespace},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns, refusal := JudgeBootstrapObject(tc.target, allowed)
			if tc.wantRefused != "" {
				if !strings.Contains(refusal, tc.wantRefused) || ns != "" {
					t.Errorf("%s: got (%q, %q), want a refusal containing %q", tc.reason, ns, refusal, tc.wantRefused)
				}
				return
			}
			if refusal != "" || ns != tc.wantNS {
				t.Errorf("%s: got (%q, %q), want namespace %q", tc.reason, ns, refusal, tc.wantNS)
			}
		})
	}
	if _, refusal := JudgeBootstrapObject(BootstrapTarget{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "x"}, nil); refusal == "" {
		t.Error("without a list a cluster-scoped kind must be refused")
	}
}

func TestPlanBootstrapPrune(t *testing.T) {
	cm := AppliedObject{Version: "v1", Kind: "ConfigMap", Namespace: Namespace, Name: "settings"}
	dep := AppliedObject{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: Namespace, Name: "agent"}
	crd := AppliedObject{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: "x.example.com"}
	cases := map[string]struct {
		reason            string
		previous, current Inventory
		want              []AppliedObject
	}{
		"nothing removed": {reason: "the steady state deletes nothing", previous: NewInventory(cm, dep), current: NewInventory(dep, cm)},
		"a removed object is a candidate": {reason: "the manifests no longer hold it",
			previous: NewInventory(cm, dep, crd), current: NewInventory(dep), want: []AppliedObject{cm, crd}},
		"another version is the same object": {reason: "an apiVersion bump must not delete the object",
			previous: NewInventory(dep), current: NewInventory(AppliedObject{Group: "apps", Version: "v2", Kind: "Deployment", Namespace: Namespace, Name: "agent"})},
		"another namespace is another object": {reason: "moving an object removes the old one",
			previous: NewInventory(cm), current: NewInventory(AppliedObject{Version: "v1", Kind: "ConfigMap", Namespace: "kube-public", Name: "settings"}),
			want: []AppliedObject{cm}},
		"no previous inventory": {reason: "a first apply prunes nothing", current: NewInventory(cm)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, PlanBootstrapPrune(tc.previous, tc.current)); diff != "" {
				t.Errorf("%s: prune candidates (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

func TestPrunableBootstrapObject(t *testing.T) {
	if !PrunableBootstrapObject(map[string]string{LabelBootstrap: "true", LabelManagedBy: ManagedByValue}) {
		t.Error("an object with the bootstrap label must be prunable")
	}
	for name, labels := range map[string]map[string]string{
		"no labels":                  nil,
		"only the managed-by label":  {LabelManagedBy: ManagedByValue},
		"the label with other value": {LabelBootstrap: "false"},
	} {
		if PrunableBootstrapObject(labels) {
			t.Errorf("%s: an object the operator did not apply from the bootstrap manifests must never be pruned", name)
		}
	}
}

func TestInventoryRoundTrip(t *testing.T) {
	inv := NewInventory(AppliedObject{Version: "v1", Kind: "ConfigMap", Namespace: Namespace, Name: "b"},
		AppliedObject{Version: "v1", Kind: "ConfigMap", Namespace: Namespace, Name: "a"},
		AppliedObject{Version: "v1", Kind: "ConfigMap", Namespace: Namespace, Name: "a"})
	got, err := DecodeInventory(inv.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(inv, got); diff != "" || len(got) != 2 {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if _, err := DecodeInventory("{not json"); err == nil {
		t.Error("a corrupt inventory must be an error, not an empty list")
	}
	if empty, err := DecodeInventory(""); err != nil || len(empty) != 0 {
		t.Errorf("empty inventory: %v %v", empty, err)
	}
	union := NewInventory(inv[0]).Union(NewInventory(inv[1]))
	if len(union) != 2 {
		t.Errorf("union %v", union)
	}
}

func TestBootstrapDefinedKinds(t *testing.T) {
	b := &Bootstrap{Objects: []BootstrapObject{
		{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "widgets.example.com",
			JSON: []byte(`{"spec":{"group":"example.com","scope":"Namespaced","names":{"kind":"Widget"}}}`)},
		{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "gadgets.example.com",
			JSON: []byte(`{"spec":{"group":"example.com","scope":"Cluster","names":{"kind":"Gadget"}}}`)},
	}}
	want := map[[2]string]bool{{"example.com", "Widget"}: true, {"example.com", "Gadget"}: false}
	if diff := cmp.Diff(want, b.DefinedKinds()); diff != "" {
		t.Errorf("defined kinds (-want +got):\n%s", diff)
	}
}

func TestRefusedBootstrapHoldsNothingUp(t *testing.T) {
	for _, reason := range []Reason{ReasonBootstrapManifestsInvalid, ReasonBootstrapPullSecretRefused, ReasonBootstrapObjectRefused} {
		r := Result{Namespace: Done("", ""), ProvisioningInfo: Done("", ""), OIDC: Done("", ""), Administrators: Done("", ""),
			Bootstrap: Failed(reason, "refused")}
		if p := r.Problem(); p != nil {
			t.Errorf("%s holds the runtime up: %+v", reason, p)
		}
	}
}
