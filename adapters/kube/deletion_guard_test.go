package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The emergency brake accepts only "true" (stop) and "false" or nothing (run): any other value keeps deletions
// stopped and is reported, so that neither a typo in a stop nor one in a lift goes unnoticed.
func TestGuardStateRefusesUnknownBrakeValues(t *testing.T) {
	for _, tc := range []struct {
		value   string
		frozen  bool
		invalid bool
	}{
		{"true", true, false}, {"false", false, false}, {"", false, false},
		{"True", true, true}, {"yes", true, true}, {"1", true, true}, {"off", true, true},
	} {
		st, err := guardState(&corev1.ConfigMap{Data: map[string]string{KeyFrozen: tc.value}})
		if err != nil {
			t.Fatal(err)
		}
		if st.Frozen != tc.frozen || (st.BrakeInvalid != "") != tc.invalid {
			t.Errorf("brake %q: frozen %v, invalid %q; want frozen %v, invalid %v", tc.value, st.Frozen, st.BrakeInvalid, tc.frozen, tc.invalid)
		}
	}
}
