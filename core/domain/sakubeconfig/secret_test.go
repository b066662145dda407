package sakubeconfig

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/wire"
)

var t0 = time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)

func TestRotation(t *testing.T) {
	p, err := kubeconfig.NewPolicy(10*time.Minute, 0.6)
	if err != nil {
		t.Fatal(err)
	}
	owner := Owner{Namespace: "kcp-system", Name: "lm"}
	ep := Endpoint{Server: "https://api.example", CAData: []byte("ca")}
	issued := Issued{RuntimeID: "rid", ServiceAccount: ServiceAccount{"kyma-system", "lm"}, Endpoint: ep, IssuedAt: t0, ExpiresAt: t0.Add(10 * time.Minute)}
	rec := RecordedFrom(true, true, SecretAnnotations(owner, issued))
	rotateAt := p.RotateAt(owner.String(), t0, t0.Add(10*time.Minute))
	cases := []struct {
		reason  string
		now     time.Time
		rec     Recorded
		force   bool
		current Endpoint
		trigger kubeconfig.Trigger
	}{
		{reason: "no Secret", now: t0, rec: RecordedFrom(false, false, nil), current: ep, trigger: kubeconfig.TriggerInitial},
		{reason: "fresh: nothing to do", now: t0.Add(time.Minute), rec: rec, current: ep},
		{reason: "due", now: rotateAt, rec: rec, current: ep, trigger: kubeconfig.TriggerTime},
		{reason: "forced", now: t0.Add(time.Minute), rec: rec, force: true, current: ep, trigger: kubeconfig.TriggerForced},
		{reason: "the runtime was re-created (another CA)", now: t0.Add(time.Minute), rec: rec,
			current: Endpoint{Server: ep.Server, CAData: []byte("new ca")}, trigger: TriggerRuntimeChanged},
		{reason: "a Secret without endpoint record is not re-issued for it", now: t0.Add(time.Minute),
			rec: Recorded{Recorded: rec.Recorded}, current: Endpoint{Server: "https://elsewhere"}},
	}
	for _, tc := range cases {
		d := Rotation(p, tc.now, owner, tc.rec, tc.force, tc.current)
		if d.Trigger != tc.trigger || d.Issue != (tc.trigger != "") {
			t.Errorf("%s: decision %+v, want trigger %q", tc.reason, d, tc.trigger)
		}
	}
	if !rotateAt.Before(t0.Add(10*time.Minute)) || rotateAt.Before(t0.Add(6*time.Minute)) {
		t.Errorf("a 10-minute token rotates at +%s, want within [6m, 10m)", rotateAt.Sub(t0))
	}
}

func TestCheckRequestSecret(t *testing.T) {
	owner := Owner{Namespace: "kcp-system", Name: "lm"}
	if v, err := CheckRequestSecret(owner, "s", false, nil); v != SecretAbsent || err != nil {
		t.Errorf("absent: %v %v", v, err)
	}
	if v, err := CheckRequestSecret(owner, "s", true, Annotations(owner)); v != SecretOwned || err != nil {
		t.Errorf("ours: %v %v", v, err)
	}
	admin := map[string]string{kubeconfig.AnnotationOwner: "kcp-system/rid"}
	if _, err := CheckRequestSecret(owner, "kubeconfig-rid", true, admin); !errors.Is(err, ErrSecretNotOwned) {
		t.Errorf("an admin kubeconfig Secret: %v, want ErrSecretNotOwned", err)
	}
	if _, err := CheckRequestSecret(owner, "s", true, Annotations(Owner{Namespace: "kcp-system", Name: "keb"})); !errors.Is(err, ErrSecretNotOwned) || !strings.Contains(err.Error(), "kcp-system/keb") {
		t.Errorf("another request's Secret: %v", err)
	}
}

func TestSecretFormatIsNotAnAdminKubeconfigSecret(t *testing.T) {
	owner := Owner{Namespace: "kcp-system", Name: "lm"}
	labels := SecretLabels(owner)
	ann := SecretAnnotations(owner, Issued{RuntimeID: "rid", IssuedAt: t0, ExpiresAt: t0.Add(time.Hour)})
	// The GardenerCluster controller maps Secrets to GardenerClusters by these two and deletes orphans it finds.
	if _, ok := labels[kubeconfig.LabelClusterName]; ok {
		t.Error("the Secret carries the cluster-name label of admin kubeconfig Secrets")
	}
	if _, ok := ann[kubeconfig.AnnotationOwner]; ok {
		t.Error("the Secret carries the GardenerCluster owner annotation")
	}
	if labels[wire.LabelManagedBy] != wire.ManagedByValue {
		t.Error("the Secret lacks the managed-by label the operator's cache selects by")
	}
	if ann[kubeconfig.AnnotationExpiresAt] != "2026-11-03T11:00:00Z" {
		t.Errorf("expiry annotation %q", ann[kubeconfig.AnnotationExpiresAt])
	}
}

func TestRenderQuotesEverything(t *testing.T) {
	out := string(Render(Endpoint{Server: "https://api.example:443", CAData: []byte("ca")}, "rid",
		ServiceAccount{"kyma-system", "lm"}, "tok\"en\nnext: line"))
	for _, want := range []string{
		`current-context: "lm@rid"`, `server: "https://api.example:443"`, `certificate-authority-data: "Y2E="`,
		`user: "system:serviceaccount:kyma-system:lm"`, `namespace: "kyma-system"`, `token: "tok\"en\nnext: line"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("kubeconfig lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\nnext: line") {
		t.Error("a newline in the token broke out of its scalar")
	}
}

func TestOnDelete(t *testing.T) {
	timeout := 5 * time.Minute
	cases := []struct {
		reason        string
		c             Cleanup
		now           time.Time
		release, left bool
	}{
		{"removed", CleanupDone, t0, true, false},
		{"still being removed", CleanupPending, t0.Add(time.Hour), false, false},
		{"runtime gone", CleanupNoAccess, t0, true, true},
		{"unreachable, within the bound", CleanupUnreachable, t0.Add(time.Minute), false, false},
		{"unreachable, bound passed", CleanupUnreachable, t0.Add(timeout), true, true},
	}
	for _, tc := range cases {
		d := OnDelete(tc.c, t0, tc.now, timeout)
		if d.Release != tc.release || d.LeftBehind != tc.left || d.Message == "" || (!d.Release && d.RetryAfter <= 0) {
			t.Errorf("%s: %+v", tc.reason, d)
		}
	}
	if d := OnDelete(CleanupUnreachable, t0, t0.Add(timeout-time.Second), timeout); d.RetryAfter > time.Second {
		t.Errorf("a retry is planned after the deadline: %s", d.RetryAfter)
	}
}
