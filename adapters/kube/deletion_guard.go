package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
)

// Keys of the deletion guard ConfigMap. People set KeyFrozen (the emergency brake) and remove KeyTrippedAt (to
// reset the circuit breaker, after finding out why it tripped); the operator writes the ledger.
const (
	GuardConfigMapName = "kim-deletion-guard"
	KeyFrozen          = "frozen"
	KeyDeletions       = "deletions"
	KeyTrippedAt       = "tripped-at"
)

// DeletionGuard implements ports.DeletionGuard with a ConfigMap in the KCP (GuardConfigMapName in Namespace). It
// carries the operator's managed-by label so the manager's cache holds it and nothing else of the namespace.
type DeletionGuard struct {
	// Cached reads from the manager's cache; Live from the API server; Writer writes.
	Cached, Live client.Reader
	Writer       client.Client
	Namespace    string
}

var _ ports.DeletionGuard = (*DeletionGuard)(nil)

func (g *DeletionGuard) key() client.ObjectKey {
	return client.ObjectKey{Namespace: g.Namespace, Name: GuardConfigMapName}
}

// Load implements ports.DeletionGuard. A cached miss is confirmed live: a ConfigMap created by a person without the
// label is not in the cache, and the brake in it must still hold.
func (g *DeletionGuard) Load(ctx context.Context, mode ports.ReadMode) (ports.GuardState, error) {
	cm := &corev1.ConfigMap{}
	var err error = errNotRead
	if mode == ports.ReadCached {
		err = g.Cached.Get(ctx, g.key(), cm)
	}
	if apierrors.IsNotFound(err) {
		err = g.Live.Get(ctx, g.key(), cm)
	}
	if apierrors.IsNotFound(err) {
		return ports.GuardState{}, nil
	}
	if err != nil {
		return ports.GuardState{}, transient("read deletion guard "+g.key().String(), err)
	}
	return guardState(cm)
}

// errNotRead starts a live read without a cached attempt.
var errNotRead = apierrors.NewNotFound(corev1.Resource("configmaps"), "")

func guardState(cm *corev1.ConfigMap) (ports.GuardState, error) {
	st := ports.GuardState{Version: cm.ResourceVersion}
	var err error
	if st.Frozen, err = deletion.ParseBrake(cm.Data[KeyFrozen]); err != nil {
		// Refused loudly: the reaper stops every deletion with this value in its message and event.
		st.BrakeInvalid = cm.Data[KeyFrozen]
	}
	for _, line := range strings.Fields(cm.Data[KeyDeletions]) {
		t, err := time.Parse(time.RFC3339, line)
		if err != nil {
			// An unreadable ledger must not mean "no deletions": stop until a person looks.
			st.Ledger.TrippedAt = time.Unix(0, 0).UTC()
			continue
		}
		st.Ledger.Deletions = append(st.Ledger.Deletions, t)
	}
	if v := strings.TrimSpace(cm.Data[KeyTrippedAt]); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			t = time.Unix(0, 0).UTC()
		}
		st.Ledger.TrippedAt = t
	}
	return st, nil
}

// StoreLedger implements ports.DeletionGuard: create when version is empty, otherwise a merge patch of the ledger
// keys with the resourceVersion as precondition.
func (g *DeletionGuard) StoreLedger(ctx context.Context, l deletion.Ledger, version string) error {
	data := map[string]string{KeyDeletions: formatLedger(l.Deletions)}
	if !l.TrippedAt.IsZero() {
		data[KeyTrippedAt] = l.TrippedAt.UTC().Format(time.RFC3339)
	}
	if version == "" {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: GuardConfigMapName, Namespace: g.Namespace,
			Labels: map[string]string{wire.LabelManagedBy: wire.ManagedByValue}}, Data: data}
		err := g.Writer.Create(ctx, cm)
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create deletion guard: %w", ports.ErrConflict)
		}
		if err != nil {
			return transient("create deletion guard", err)
		}
		return nil
	}
	cm := &corev1.ConfigMap{}
	cm.Name, cm.Namespace, cm.ResourceVersion = GuardConfigMapName, g.Namespace, version
	before := cm.DeepCopy()
	cm.Data = data
	if l.TrippedAt.IsZero() {
		before.Data = map[string]string{KeyTrippedAt: "x"} // a merge patch removes only keys it names as null
	}
	cm.Labels = map[string]string{wire.LabelManagedBy: wire.ManagedByValue}
	err := g.Writer.Patch(ctx, cm, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	switch {
	case apierrors.IsConflict(err), apierrors.IsNotFound(err):
		return fmt.Errorf("store deletion ledger: %w: %w", ports.ErrConflict, err)
	case err != nil:
		return transient("store deletion ledger", err)
	}
	return nil
}

func formatLedger(ts []time.Time) string {
	lines := make([]string, 0, len(ts))
	for _, t := range ts {
		lines = append(lines, t.UTC().Format(time.RFC3339))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
