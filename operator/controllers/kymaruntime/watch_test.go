package kymaruntime

import (
	"reflect"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/internal/scheme"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// TestConfigMapChanged: the operator's own creation of a ConfigMap must not trigger a reconcile (it would find the
// shoot applied right after it not yet cached and apply it again); changes and deletions by others must.
func TestConfigMapChanged(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "structured-auth-c-1", Namespace: "garden-kyma"}}
	p := configMapChanged()
	if p.Create(event.TypedCreateEvent[*corev1.ConfigMap]{Object: cm}) {
		t.Error("a created ConfigMap triggers a reconcile")
	}
	if !p.Update(event.TypedUpdateEvent[*corev1.ConfigMap]{ObjectOld: cm, ObjectNew: cm}) {
		t.Error("a changed ConfigMap does not trigger a reconcile")
	}
	if !p.Delete(event.TypedDeleteEvent[*corev1.ConfigMap]{Object: cm}) {
		t.Error("a deleted ConfigMap does not trigger a reconcile")
	}
}

// recordingQueue records what a handler enqueues, and when.
type recordingQueue struct {
	shootQueue // only Add and AddAfter are called
	now        []reconcile.Request
	later      map[reconcile.Request]time.Duration
}

func (q *recordingQueue) Add(r reconcile.Request) { q.now = append(q.now, r) }
func (q *recordingQueue) AddAfter(r reconcile.Request, d time.Duration) {
	if q.later == nil {
		q.later = map[reconcile.Request]time.Duration{}
	}
	q.later[r] = d
}

// scriptedUpdates answers Changed with fixed values.
type scriptedUpdates struct{ changed, progressOnly bool }

func (s scriptedUpdates) Changed(_, _ *gardencorev1beta1.Shoot) (bool, bool) {
	return s.changed, s.progressOnly
}

// TestShootEvents: a shoot update wakes its Runtimes (the recorded owner and those waiting for the name) at once
// when it changed what the controller reads, one progress interval later when only a running operation's
// progress changed, not at all when nothing read changed; creations and deletions always at once. Without
// ShootUpdates every update is news.
func TestShootEvents(t *testing.T) {
	scheme, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	waiting := &imv1.Runtime{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "rt-new"}}
	waiting.Spec.Shoot.Name = "c-1"
	kcp := fake.NewClientBuilder().WithScheme(scheme).WithObjects(waiting).
		WithIndex(&imv1.Runtime{}, indexShootName, func(o client.Object) []string { return []string{o.(*imv1.Runtime).Spec.Shoot.Name} }).Build()
	s := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Name: "c-1", Namespace: "garden-kyma",
		Labels:      map[string]string{wire.LabelManagedBy: wire.ManagedByValue},
		Annotations: map[string]string{shoot.AnnotationRuntimeNamespace: "kcp-system", shoot.AnnotationRuntimeID: "rt-old"}}}
	owner := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "kcp-system", Name: "rt-old"}}
	both := []reconcile.Request{owner, {NamespacedName: client.ObjectKeyFromObject(waiting)}}
	const every = time.Minute
	update := event.TypedUpdateEvent[*gardencorev1beta1.Shoot]{ObjectOld: s, ObjectNew: s}

	for _, tc := range []struct {
		reason     string
		updates    ShootUpdates
		every      time.Duration
		now, later int
	}{
		{"news", scriptedUpdates{changed: true}, every, 2, 0},
		{"progress only: one interval later", scriptedUpdates{changed: true, progressOnly: true}, every, 0, 2},
		{"progress only, every change written: at once", scriptedUpdates{changed: true, progressOnly: true}, 0, 2, 0},
		{"nothing read changed", scriptedUpdates{}, every, 0, 0},
		{"no ShootUpdates: every update is news", nil, every, 2, 0},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			q := &recordingQueue{}
			shootEvents(kcp, []string{"kcp-system"}, tc.updates, tc.every).Update(t.Context(), update, q)
			if len(q.now) != tc.now || len(q.later) != tc.later {
				t.Fatalf("enqueued %v at once and %v later; want %d and %d", q.now, q.later, tc.now, tc.later)
			}
			if tc.now > 0 && !reflect.DeepEqual(q.now, both) {
				t.Errorf("enqueued %v, want the recorded owner and the Runtime waiting for the name %v", q.now, both)
			}
			for r, d := range q.later {
				if d != every {
					t.Errorf("%v enqueued after %s, want %s", r, d, every)
				}
			}
		})
	}
	for name, fire := range map[string]func(q shootQueue){
		"create": func(q shootQueue) {
			shootEvents(kcp, []string{"kcp-system"}, scriptedUpdates{}, every).Create(t.Context(), event.TypedCreateEvent[*gardencorev1beta1.Shoot]{Object: s}, q)
		},
		"delete": func(q shootQueue) {
			shootEvents(kcp, []string{"kcp-system"}, scriptedUpdates{}, every).Delete(t.Context(), event.TypedDeleteEvent[*gardencorev1beta1.Shoot]{Object: s}, q)
		},
	} {
		q := &recordingQueue{}
		if fire(q); !reflect.DeepEqual(q.now, both) {
			t.Errorf("%s: enqueued %v, want %v at once", name, q.now, both)
		}
	}
}
