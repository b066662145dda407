package gardenlet

import (
	"maps"
	"slices"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/types"
)

// Deletion is the gardenlet's record of a shoot deletion: what it saw when it first found the shoot deleted.
type Deletion struct {
	Namespace, Name string
	UID             types.UID
	// RequestedAt is the shoot's deletionTimestamp: when the API server accepted the delete (whole seconds).
	RequestedAt time.Time
	// SeenAt is when the gardenlet first saw the deletion.
	SeenAt time.Time
	// Labels and Annotations are the shoot's at that moment (the operator's deletion record among them).
	Labels, Annotations map[string]string
}

// recordDeletion logs the deletion of shoot once (by UID).
func (g *Gardenlet) recordDeletion(shoot *gardencorev1beta1.Shoot, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.deletionSeen == nil {
		g.deletionSeen = map[types.UID]bool{}
	}
	if g.deletionSeen[shoot.UID] {
		return
	}
	g.deletionSeen[shoot.UID] = true
	g.deletions = append(g.deletions, Deletion{Namespace: shoot.Namespace, Name: shoot.Name, UID: shoot.UID,
		RequestedAt: shoot.DeletionTimestamp.Time, SeenAt: now,
		Labels: maps.Clone(shoot.Labels), Annotations: maps.Clone(shoot.Annotations)})
}

// Deletions returns the shoot deletions seen so far, in the order they were seen. Chaos tests check them against
// the deletion windows from the outside.
func (g *Gardenlet) Deletions() []Deletion {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.deletions)
}
