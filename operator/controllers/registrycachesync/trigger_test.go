package registrycachesync

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/kim/internal/scheme"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

func TestRegistryCacheTrigger(t *testing.T) {
	scheme, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	kcp := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&imv1.Runtime{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "rt-1"}}).Build()
	events := make(chan event.TypedGenericEvent[reconcile.Request], 1)
	h := &Trigger{Runtimes: kcp, Namespaces: []string{"other", "kcp-system"}, Events: events}
	for _, tc := range []struct {
		reason, method, target string
		want                   int
		queued                 bool
	}{
		{"a known runtime is queued", http.MethodPost, TriggerPath + "?runtimeID=rt-1", http.StatusAccepted, true},
		{"an unknown runtime is not found", http.MethodPost, TriggerPath + "?runtimeID=rt-2", http.StatusNotFound, false},
		{"a malformed ID is refused", http.MethodPost, TriggerPath + "?runtimeID=../etc", http.StatusBadRequest, false},
		{"a missing ID is refused", http.MethodPost, TriggerPath, http.StatusBadRequest, false},
		{"only POST triggers", http.MethodGet, TriggerPath + "?runtimeID=rt-1", http.StatusMethodNotAllowed, false},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.target, nil))
			if rec.Code != tc.want {
				t.Errorf("status %d, want %d (%s)", rec.Code, tc.want, rec.Body.String())
			}
			select {
			case e := <-events:
				if !tc.queued || e.Object.Namespace != "kcp-system" || e.Object.Name != "rt-1" {
					t.Errorf("queued %+v, want queued=%v for kcp-system/rt-1", e.Object, tc.queued)
				}
			default:
				if tc.queued {
					t.Error("nothing queued")
				}
			}
		})
	}
}

func TestSyncsAreSpread(t *testing.T) {
	seen := map[time.Duration]bool{}
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		d := jitter(id, time.Hour)
		if d < 54*time.Minute || d > 66*time.Minute {
			t.Errorf("jitter(%s, 1h) = %s, want within ±10%%", id, d)
		}
		if jitter(id, time.Hour) != d {
			t.Errorf("jitter(%s) is not stable", id)
		}
		seen[d] = true
	}
	if len(seen) < 6 {
		t.Errorf("8 runtimes got only %d different periods: they would sync in lockstep", len(seen))
	}
}
