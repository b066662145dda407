package sakubeconfig

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDesired(t *testing.T) {
	req := request(
		rule([]string{"kyma-system", "istio-system"}, core, []string{"pods"}, []string{"get", "list"}),
		rule(nil, []string{"apiextensions.k8s.io"}, []string{"customresourcedefinitions"}, readOnly),
		rule([]string{"kyma-system"}, core, []string{"configmaps"}, []string{"get"}),
	)
	req.ClusterRole = &ClusterRoleRef{Name: "system:aggregate-to-view", Namespaces: []string{"default"}}
	got := Desired(req)
	base := "kim-lifecycle-manager-" + req.Owner.Key()[:10]
	ref := base + "-system-aggregate-to-view"
	want := []ObjectRef{
		{KindServiceAccount, "kyma-system", "lifecycle-manager"},
		{KindClusterRole, "", base},
		{KindRole, "istio-system", base},
		{KindRole, "kyma-system", base},
		{KindClusterRoleBinding, "", base},
		{KindRoleBinding, "istio-system", base},
		{KindRoleBinding, "kyma-system", base},
		{KindRoleBinding, "default", ref},
	}
	if diff := cmp.Diff(want, got.Refs()); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"default", "istio-system", "kyma-system"}, got.Namespaces); diff != "" {
		t.Errorf("namespaces (-want +got):\n%s", diff)
	}
	for _, r := range got.Roles {
		if r.Kind == KindRole && r.Namespace == "kyma-system" && len(r.Rules) != 2 {
			t.Errorf("Role in kyma-system has %d rules, want pods and configmaps", len(r.Rules))
		}
		for _, rr := range r.Rules {
			if rr.Namespaces != nil {
				t.Errorf("%s carries namespaces in a rule: %v", r.ObjectRef, rr.Namespaces)
			}
		}
	}
	for _, b := range got.Bindings {
		if b.Name == ref && (b.RoleKind != KindClusterRole || b.RoleName != "system:aggregate-to-view") {
			t.Errorf("the ClusterRole binding binds %s %s", b.RoleKind, b.RoleName)
		}
	}
	other := req
	other.Owner.Name = "keb-rid"
	for _, r := range Desired(other).Refs()[1:] {
		if strings.Contains(r.Name, req.Owner.Key()[:10]) {
			t.Errorf("another owner's object %s has this owner's name", r)
		}
	}
}

func TestDesiredNamesAreValidForAnyServiceAccount(t *testing.T) {
	req := request(rule(nil, core, []string{"pods"}, readOnly))
	req.ServiceAccount.Name = strings.Repeat("a.b-", 60) + "z"
	for _, r := range Desired(req).Refs()[1:] {
		if len(r.Name) > 63 || strings.Contains(r.Name, ".") || strings.HasPrefix(r.Name, "-") {
			t.Errorf("name %q is not a short DNS label", r.Name)
		}
	}
}

func TestCheckOwned(t *testing.T) {
	owner := Owner{Namespace: "kcp-system", Name: "lm"}
	ref := ObjectRef{Kind: KindServiceAccount, Namespace: "kyma-system", Name: "lifecycle-manager"}
	cases := []struct {
		reason      string
		labels, ann map[string]string
		want        error
	}{
		{"ours", Labels(owner), Annotations(owner), nil},
		{"a customer's ServiceAccount", map[string]string{"app": "x"}, nil, ErrNotManaged},
		{"managed but without owner (an admin binding of the Runtime controller)", map[string]string{LabelManagedBy: ManagedByValue}, nil, ErrNotManaged},
		{"another request's", Labels(Owner{Namespace: "kcp-system", Name: "keb"}), Annotations(Owner{Namespace: "kcp-system", Name: "keb"}), ErrOtherOwner},
		{"our label digest with another owner annotation", Labels(owner), map[string]string{AnnotationOwner: "kcp-system/keb"}, ErrOtherOwner},
	}
	for _, tc := range cases {
		err := CheckOwned(owner, ref, tc.labels, tc.ann)
		if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Errorf("%s: %v, want %v", tc.reason, err, tc.want)
		}
	}
}
