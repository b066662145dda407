package kubeconfig

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kyma-project/kim/core/domain/wire"
)

func TestSecretLabels(t *testing.T) {
	cases := []struct {
		reason string
		owner  map[string]string
		want   map[string]string
	}{
		{
			reason: "owner labels are copied and ours added",
			owner:  map[string]string{"kyma-project.io/runtime-id": "rid", "kyma-project.io/shoot-name": "c-123456"},
			want: map[string]string{"kyma-project.io/runtime-id": "rid", "kyma-project.io/shoot-name": "c-123456",
				wire.LabelManagedBy: wire.ManagedByValue, LabelClusterName: "rid"},
		},
		{
			reason: "a KEB-created GardenerCluster says lifecycle-manager; the Secret must still say infrastructure-manager",
			owner:  map[string]string{wire.LabelManagedBy: "lifecycle-manager"},
			want:   map[string]string{wire.LabelManagedBy: wire.ManagedByValue, LabelClusterName: "rid"},
		},
		{
			reason: "no owner labels",
			want:   map[string]string{wire.LabelManagedBy: wire.ManagedByValue, LabelClusterName: "rid"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, SecretLabels(tc.owner, "rid")); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

func TestLabelsMissing(t *testing.T) {
	cases := []struct {
		reason     string
		have, want map[string]string
		missing    map[string]string
	}{
		{reason: "in sync", have: map[string]string{"a": "1", "x": "y"}, want: map[string]string{"a": "1"}},
		{reason: "changed value (global account moved)", have: map[string]string{"a": "1"}, want: map[string]string{"a": "2"},
			missing: map[string]string{"a": "2"}},
		{reason: "absent label", have: nil, want: map[string]string{"a": "1"}, missing: map[string]string{"a": "1"}},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			if diff := cmp.Diff(tc.missing, LabelsMissing(tc.have, tc.want)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

func TestFormatTimeIsUTCRFC3339(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	got := FormatTime(time.Date(2026, 1, 2, 3, 4, 5, 999, cet))
	if got != "2026-01-02T02:04:05Z" {
		t.Errorf("FormatTime = %q, want 2026-01-02T02:04:05Z", got)
	}
	if back, ok := parseTime(got); !ok || !back.Equal(time.Date(2026, 1, 2, 2, 4, 5, 0, time.UTC)) {
		t.Errorf("parseTime(%q) = %v, %v", got, back, ok)
	}
}
