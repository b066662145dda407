package legacymetrics

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/wire"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

func world(t *testing.T) *fake.ClientBuilder {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := imv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{imv1.LabelRuntimeID: "rt-1", imv1.LabelShootName: "c-1"}
	rt := &imv1.Runtime{ObjectMeta: metav1.ObjectMeta{Name: "rt-1", Namespace: "kcp-system", Labels: labels},
		Spec: imv1.RuntimeSpec{Shoot: imv1.RuntimeShoot{Name: "c-1", Provider: imv1.Provider{Type: "aws"}}},
		Status: imv1.RuntimeStatus{State: imv1.RuntimeStateFailed, Conditions: []metav1.Condition{{Type: imv1.ConditionReady,
			Status: metav1.ConditionFalse, Reason: "GardenerFailed", Message: "quota exceeded in eu-central-1 at 10:15:03"}}}}
	unlabelled := &imv1.Runtime{ObjectMeta: metav1.ObjectMeta{Name: "rt-2", Namespace: "kcp-system"}}
	gc := &imv1.GardenerCluster{ObjectMeta: metav1.ObjectMeta{Name: "rt-1", Namespace: "kcp-system", Labels: labels},
		Status: imv1.GardenerClusterStatus{State: imv1.GardenerClusterStateReady, Conditions: []metav1.Condition{
			{Type: imv1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Ready"},
			{Type: imv1.ConditionKubeconfigManagement, Status: metav1.ConditionTrue, Reason: "KubeconfigSecretRotated"}}}}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-rt-1", Namespace: "kcp-system",
		Labels:      map[string]string{imv1.LabelRuntimeID: "rt-1", imv1.LabelShootName: "c-1", wire.LabelManagedBy: wire.ManagedByValue},
		Annotations: map[string]string{kubeconfig.AnnotationExpiresAt: "2026-12-01T12:00:00Z"}}}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(rt, unlabelled, gc, sec)
}

// TestMigrationLegacyMetrics: the previous system's metric names and label names, low-cardinality contents by
// default and the previous contents with full labels.
func TestMigrationLegacyMetrics(t *testing.T) {
	expires := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC).Unix()
	for _, tc := range []struct {
		reason string
		full   bool
		want   string
	}{
		{"low cardinality: the reason instead of the message, no expiry label", false, `
# HELP infrastructure_manager_im_gardener_clusters_state Status.state of GardenerCluster CRs (previous infrastructure manager's metric).
# TYPE infrastructure_manager_im_gardener_clusters_state gauge
infrastructure_manager_im_gardener_clusters_state{reason="KubeconfigSecretRotated",runtimeId="rt-1",shoot="c-1",state="Ready"} 1
# HELP infrastructure_manager_im_kubeconfig_expiration Expiry of the kubeconfig in each runtime's Secret, Unix seconds (previous infrastructure manager's metric).
# TYPE infrastructure_manager_im_kubeconfig_expiration gauge
infrastructure_manager_im_kubeconfig_expiration{expirationDuration="86400",expires="",rotationDuration="51840",runtimeId="rt-1",shoot="c-1"} EXPIRES
# HELP infrastructure_manager_im_runtime_state Status.state of Runtime CRs (previous infrastructure manager's metric).
# TYPE infrastructure_manager_im_runtime_state gauge
infrastructure_manager_im_runtime_state{message="GardenerFailed",provider="aws",runtimeId="rt-1",runtimeName="rt-1",shoot="c-1",state="Failed"} 1
# HELP unexpected_stops_total Reconciles of Runtimes that ended in an error or a panic (the previous infrastructure manager's unexpected state machine stops).
# TYPE unexpected_stops_total counter
unexpected_stops_total 3
`},
		{"full labels: the previous contents", true, `
# HELP infrastructure_manager_im_gardener_clusters_state Status.state of GardenerCluster CRs (previous infrastructure manager's metric).
# TYPE infrastructure_manager_im_gardener_clusters_state gauge
infrastructure_manager_im_gardener_clusters_state{reason="KubeconfigSecretRotated",runtimeId="rt-1",shoot="c-1",state="Ready"} 1
# HELP infrastructure_manager_im_kubeconfig_expiration Expiry of the kubeconfig in each runtime's Secret, Unix seconds (previous infrastructure manager's metric).
# TYPE infrastructure_manager_im_kubeconfig_expiration gauge
infrastructure_manager_im_kubeconfig_expiration{expirationDuration="86400",expires="EXPIRES",rotationDuration="51840",runtimeId="rt-1",shoot="c-1"} EXPIRES
# HELP infrastructure_manager_im_runtime_state Status.state of Runtime CRs (previous infrastructure manager's metric).
# TYPE infrastructure_manager_im_runtime_state gauge
infrastructure_manager_im_runtime_state{message="quota exceeded in eu-central-1 at 10:15:03",provider="aws",runtimeId="rt-1",runtimeName="rt-1",shoot="c-1",state="Failed"} 1
# HELP unexpected_stops_total Reconciles of Runtimes that ended in an error or a panic (the previous infrastructure manager's unexpected state machine stops).
# TYPE unexpected_stops_total counter
unexpected_stops_total 3
`},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			c := &Collector{KCP: world(t).Build(), Full: tc.full, Validity: 24 * time.Hour, RotationFraction: 0.6,
				Stops: func() (float64, bool) { return 3, true }}
			want := strings.ReplaceAll(tc.want, "EXPIRES", strconv.FormatInt(expires, 10))
			if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestMigrationUnexpectedStopsReadsControllerRuntime: unexpected_stops_total follows controller-runtime's error and
// panic counters of the Runtime controller (found by name and help: a change there fails this test).
func TestMigrationUnexpectedStopsReadsControllerRuntime(t *testing.T) {
	before, ok := runtimeControllerStops()
	if !ok {
		t.Fatal("controller-runtime's reconcile error and panic counters were not found")
	}
	twin := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "controller_runtime_reconcile_errors_total",
		Help: "Total number of reconciliation errors per controller"}, []string{"controller"})
	var already prometheus.AlreadyRegisteredError
	if err := ctrlmetrics.Registry.Register(twin); !errors.As(err, &already) {
		t.Fatalf("register twin: %v", err)
	}
	already.ExistingCollector.(*prometheus.CounterVec).WithLabelValues("runtime").Add(2)
	already.ExistingCollector.(*prometheus.CounterVec).WithLabelValues("gardener-cluster").Add(5)
	if after, _ := runtimeControllerStops(); after != before+2 {
		t.Errorf("unexpected stops %v after two Runtime reconcile errors, want %v", after, before+2)
	}
}
