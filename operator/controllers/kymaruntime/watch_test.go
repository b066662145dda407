package kymaruntime

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
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
