package shootreaper

import (
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// scriptedUpdates answers Changed with fixed values.
type scriptedUpdates struct{ changed, progressOnly bool }

func (s scriptedUpdates) Changed(_, _ *gardencorev1beta1.Shoot) (bool, bool) {
	return s.changed, s.progressOnly
}

// TestReaperTakesNewsOnly: a shoot update wakes the reaper when it changed what the reaper reads, not when only a
// running operation's progress changed (the reaper decides on none of it) or nothing read changed. Without
// ShootUpdates every update is news; creations and deletions always are.
func TestReaperTakesNewsOnly(t *testing.T) {
	s := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Name: "c-1", Namespace: "garden-kyma"}}
	update := event.TypedUpdateEvent[*gardencorev1beta1.Shoot]{ObjectOld: s, ObjectNew: s}
	for _, tc := range []struct {
		reason  string
		updates ShootUpdates
		wakes   bool
	}{
		{"news", scriptedUpdates{changed: true}, true},
		{"progress only", scriptedUpdates{changed: true, progressOnly: true}, false},
		{"nothing read changed", scriptedUpdates{}, false},
		{"no ShootUpdates: every update is news", nil, true},
	} {
		p := shootChanged(tc.updates)
		if got := p.Update(update); got != tc.wakes {
			t.Errorf("%s: the reaper woken: %v, want %v", tc.reason, got, tc.wakes)
		}
		if !p.Create(event.TypedCreateEvent[*gardencorev1beta1.Shoot]{Object: s}) || !p.Delete(event.TypedDeleteEvent[*gardencorev1beta1.Shoot]{Object: s}) {
			t.Errorf("%s: a created or deleted shoot does not wake the reaper", tc.reason)
		}
	}
}

// TestReaperOnlyReadsTheCachedShoot: the reaper's hooks read a shoot's name and nothing else, so its skeleton reads
// the cached shoot without copies and never writes it (skeleton.Reconciler.ReadOnly).
func TestReaperOnlyReadsTheCachedShoot(t *testing.T) {
	r := NewReaper(nil, nil, nil, NewMetrics(nil), nil)
	if !r.ReadOnly || r.Finalizer != "" {
		t.Fatalf("reaper: read-only %v, finalizer %q; want read-only without a finalizer", r.ReadOnly, r.Finalizer)
	}
}
