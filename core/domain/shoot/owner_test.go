package shoot_test

import (
	"testing"

	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/wire"
)

func TestRuntimeOf(t *testing.T) {
	managed := map[string]string{wire.LabelManagedBy: wire.ManagedByValue}
	marks := map[string]string{shoot.AnnotationRuntimeID: "rt-1", shoot.AnnotationRuntimeNamespace: "kcp-system"}
	cases := []struct {
		reason              string
		labels, annotations map[string]string
		wantNamespace       string
		wantName            string
		wantOK              bool
	}{
		{"the operator's object leads to its Runtime", managed, marks, "kcp-system", "rt-1", true},
		{"another system's object belongs to no Runtime", map[string]string{wire.LabelManagedBy: "someone-else"}, marks, "", "", false},
		{"no labels at all: no Runtime", nil, marks, "", "", false},
		{"no runtime ID: no Runtime", managed, map[string]string{shoot.AnnotationRuntimeNamespace: "kcp-system"}, "", "", false},
		{"no runtime namespace (adopted, not yet applied): no Runtime", managed, map[string]string{shoot.AnnotationRuntimeID: "rt-1"}, "", "", false},
		{"no annotations: no Runtime", managed, nil, "", "", false},
	}
	for _, tc := range cases {
		ns, name, ok := shoot.RuntimeOf(tc.labels, tc.annotations)
		if ns != tc.wantNamespace || name != tc.wantName || ok != tc.wantOK {
			t.Errorf("%s: got (%q, %q, %v), want (%q, %q, %v)", tc.reason, ns, name, ok, tc.wantNamespace, tc.wantName, tc.wantOK)
		}
	}
}
