package gardenercluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

func TestGardenerFailures(t *testing.T) {
	cases := []struct {
		reason      string
		err         error
		wasReady    bool
		wantRequeue time.Duration
		wantErr     bool
		wantOutcome string
		wantState   imv1.GardenerClusterState
		wantReason  string
	}{
		{reason: "shoot still being created", err: ports.ErrShootNotReady, wantRequeue: kubeconfig.RetryShootNotReady, wantOutcome: OutcomeShootNotReady,
			wantState: imv1.GardenerClusterStatePending, wantReason: string(kubeconfig.ReasonWaitingForShoot)},
		{reason: "shoot not created yet", err: ports.ErrShootNotFound, wantRequeue: kubeconfig.RetryShootNotFound, wantOutcome: OutcomeShootNotFound,
			wantState: imv1.GardenerClusterStatePending, wantReason: string(kubeconfig.ReasonWaitingForShoot)},
		{reason: "shoot not ready for a cluster that had a kubeconfig", err: ports.ErrShootNotReady, wasReady: true, wantRequeue: kubeconfig.RetryShootNotReady,
			wantOutcome: OutcomeShootNotReady, wantState: imv1.GardenerClusterStateError, wantReason: string(kubeconfig.ReasonFailedToGetKubeconfig)},
		{reason: "no permission", err: ports.ErrForbidden, wantRequeue: kubeconfig.RetryForbidden, wantOutcome: OutcomeForbidden,
			wantState: imv1.GardenerClusterStateError, wantReason: string(kubeconfig.ReasonFailedToGetKubeconfig)},
		{reason: "Gardener overloaded", err: ports.ErrTransient, wantErr: true, wantOutcome: OutcomeTransient,
			wantState: imv1.GardenerClusterStateError, wantReason: string(kubeconfig.ReasonFailedToGetKubeconfig)},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			gc := kebCluster(rid, "c-1a2b3c")
			if tc.wasReady {
				gc.Status.State = imv1.GardenerClusterStateReady
			}
			w := newWorld(t, gc)
			w.issuer.SetShootError("c-1a2b3c", fmt.Errorf("gardener says: boom: %w", tc.err))
			before := testutil.ToFloat64(w.m.GardenerRequests.WithLabelValues(tc.wantOutcome))
			res, err := w.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "kcp-system", Name: rid}})
			if (err != nil) != tc.wantErr || res.RequeueAfter != tc.wantRequeue {
				t.Errorf("%s: Reconcile = %+v, %v; want RequeueAfter %s, error %v", tc.reason, res, err, tc.wantRequeue, tc.wantErr)
			}
			c := w.condition(rid)
			if c.Status != metav1.ConditionFalse || c.Reason != tc.wantReason || !strings.Contains(c.Message, "gardener says: boom") {
				t.Errorf("%s: condition %s/%s %q, want False/%s with Gardener's message", tc.reason, c.Status, c.Reason, c.Message, tc.wantReason)
			}
			if st := w.get(rid).Status.State; st != tc.wantState {
				t.Errorf("%s: state %s, want %s", tc.reason, st, tc.wantState)
			}
			if got := testutil.ToFloat64(w.m.GardenerRequests.WithLabelValues(tc.wantOutcome)) - before; got != 1 {
				t.Errorf("%s: requests with outcome %s +%v, want +1", tc.reason, tc.wantOutcome, got)
			}
			if w.store.Exists("kcp-system", "kubeconfig-"+rid) {
				t.Errorf("%s: a Secret was written without a kubeconfig", tc.reason)
			}
		})
	}
}

func TestWriteFailure(t *testing.T) {
	w := newWorld(t, kebCluster(rid, "c-1a2b3c"))
	w.issuer.AddShoot("c-1a2b3c")
	w.store.WriteErr = errors.New("etcd full")
	if _, err := w.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "kcp-system", Name: rid}}); err == nil {
		t.Fatal("Reconcile succeeded although the Secret could not be written")
	}
	if c := w.condition(rid); c.Reason != string(kubeconfig.ReasonFailedToWriteSecret) || !strings.Contains(c.Message, "etcd full") {
		t.Errorf("condition %s %q, want %s with the cause", c.Reason, c.Message, string(kubeconfig.ReasonFailedToWriteSecret))
	}
	if ev := w.drainEvents(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning "+string(kubeconfig.ReasonFailedToWriteSecret)) {
		t.Errorf("events %q, want one Warning %s", ev, string(kubeconfig.ReasonFailedToWriteSecret))
	}
	w.store.WriteErr = nil
	w.reconcile(rid)
	if c := w.condition(rid); c.Reason != string(kubeconfig.ReasonSecretCreated) || c.Status != metav1.ConditionTrue {
		t.Errorf("after recovery: condition %s/%s, want True/%s", c.Status, c.Reason, string(kubeconfig.ReasonSecretCreated))
	}
}

func TestAdoption(t *testing.T) {
	cases := []struct {
		reason      string
		annotations map[string]string
		wantCalls   int
		wantReason  string
	}{
		{
			reason:      "Secret of an older operator without expiry: rotated once to learn the expiry",
			annotations: map[string]string{kubeconfig.AnnotationLastSync: "2026-11-03T09:00:00Z"},
			wantCalls:   1, wantReason: string(kubeconfig.ReasonSecretRotated),
		},
		{
			reason: "Secret already in our format and fresh: adopted without a Gardener call",
			annotations: map[string]string{kubeconfig.AnnotationLastSync: "2026-11-03T09:00:00Z",
				kubeconfig.AnnotationExpiresAt: "2026-11-04T09:00:00Z"},
			wantCalls: 0, wantReason: string(kubeconfig.ReasonSecretValid),
		},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			w := newWorld(t, kebCluster(rid, "c-1a2b3c"))
			w.issuer.AddShoot("c-1a2b3c")
			w.store.Put("kcp-system", "kubeconfig-"+rid, map[string][]byte{"config": []byte("old")},
				map[string]string{wire.LabelManagedBy: wire.ManagedByValue}, tc.annotations)
			w.reconcile(rid)
			if n := w.issuer.TotalCalls(); n != tc.wantCalls {
				t.Errorf("%s: Gardener calls %d, want %d", tc.reason, n, tc.wantCalls)
			}
			if c := w.condition(rid); c.Reason != tc.wantReason {
				t.Errorf("%s: reason %s, want %s", tc.reason, c.Reason, tc.wantReason)
			}
			if !slices.Contains(w.get(rid).Finalizers, Finalizer) {
				t.Errorf("%s: adopted cluster has no finalizer", tc.reason)
			}
			md, _ := w.store.ReadMetadata(context.Background(), ports.SecretRef{Namespace: "kcp-system", Name: "kubeconfig-" + rid, Key: "config"}, ports.ReadLive)
			if md.Labels[imv1.LabelGlobalAccountID] != "ga-1" {
				t.Errorf("%s: Secret labels %v not synced from the CR", tc.reason, md.Labels)
			}
		})
	}
}

func TestLabelChangeSyncsWithoutGardener(t *testing.T) {
	w := newWorld(t, kebCluster(rid, "c-1a2b3c"))
	w.issuer.AddShoot("c-1a2b3c")
	w.reconcile(rid)
	gc := w.get(rid)
	gc.Labels[imv1.LabelGlobalAccountID] = "ga-2"
	if err := w.client.Update(context.Background(), gc); err != nil {
		t.Fatal(err)
	}
	w.reconcile(rid)
	md, _ := w.store.ReadMetadata(context.Background(), ports.SecretRef{Namespace: "kcp-system", Name: "kubeconfig-" + rid, Key: "config"}, ports.ReadLive)
	if md.Labels[imv1.LabelGlobalAccountID] != "ga-2" {
		t.Errorf("global account label %q, want ga-2", md.Labels[imv1.LabelGlobalAccountID])
	}
	if n := w.issuer.TotalCalls(); n != 1 {
		t.Errorf("Gardener calls %d, want 1", n)
	}
}
