package gardenercluster_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/app"
	"github.com/kyma-project/kim/operator/controllers/gardenercluster"
)

// kcp is the KCP of a test: its config and an uncached client for assertions.
type kcp struct {
	cfg    *rest.Config
	client client.Client // uncached: assertions see the API server, not a cache
}

// garden is the Gardener side of a test: where the operator asks for kubeconfigs.
type garden struct {
	// cfg is the garden API the manager talks to.
	cfg *rest.Config
	// issuer replaces the Gardener adapter; nil means the real shoots/adminkubeconfig adapter against cfg.
	issuer ports.KubeconfigIssuer
	// addShoot makes a shoot exist and be ready for kubeconfigs.
	addShoot func(t *testing.T, name string)
	// verify, when set, proves that a kubeconfig issued for the shoot works.
	verify func(t *testing.T, shoot string, kubeconfig []byte)
	// project is the Gardener project (shoots live in garden-<project>); empty: the operator's default.
	project string
}

// logSink keeps the operator's log lines so tests can assert on them (for example: no conflicts).
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logSink) count(substrings ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range strings.Split(l.buf.String(), "\n") {
		for _, s := range substrings {
			if strings.Contains(line, s) {
				n++
				break
			}
		}
	}
	return n
}

var (
	logs     = &logSink{}
	logsOnce sync.Once
)

// captureLogs sends controller-runtime's logs (the operator's) to logs; the first call wins.
func captureLogs() {
	logsOnce.Do(func() { ctrl.SetLogger(zap.New(zap.WriteTo(logs), zap.UseDevMode(false))) })
}

// operator is a running manager with the kubeconfig controller.
type operator struct {
	cancel context.CancelFunc
	done   chan error
}

func startOperator(t *testing.T, k *kcp, g *garden) *operator {
	t.Helper()
	captureLogs()
	opts := app.DefaultOptions()
	opts.MetricsAddr, opts.ProbeAddr, opts.LeaderElection = "0", "0", false
	opts.GardenerClusterWorkers = 10
	if g.project != "" {
		opts.GardenerProject = g.project
	}
	opts.Controllers, opts.SkipNameValidation = []string{gardenercluster.Name}, true
	var overrides []app.Override
	if g.issuer != nil {
		overrides = append(overrides, app.WithIssuer(g.issuer))
	}
	mgr, err := app.NewManager(k.cfg, g.cfg, opts, overrides...)
	if err != nil {
		t.Fatalf("new manager: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	o := &operator{cancel: cancel, done: make(chan error, 1)}
	go func() { o.done <- mgr.Start(ctx) }()
	t.Cleanup(o.stop)
	return o
}

// stop stops the manager and waits until it has (idempotent).
func (o *operator) stop() {
	if o.cancel == nil {
		return
	}
	o.cancel()
	if err := <-o.done; err != nil {
		// A manager that failed (not just stopped) would make the test's later assertions meaningless.
		panic(fmt.Sprintf("manager stopped with an error: %v", err))
	}
	o.cancel = nil
}

// kebGardenerCluster is a GardenerCluster the way KEB creates it.
func kebGardenerCluster(runtimeID, shoot string) *imv1.GardenerCluster {
	return &imv1.GardenerCluster{
		ObjectMeta: metav1.ObjectMeta{
			Name: runtimeID, Namespace: "kcp-system",
			Labels: map[string]string{
				imv1.LabelInstanceID: "instance-" + shoot, imv1.LabelRuntimeID: runtimeID,
				imv1.LabelBrokerPlanID: "7d55d31d-35ae-4438-bf13-6ffdfa107d9f", imv1.LabelBrokerPlanName: "trial",
				imv1.LabelGlobalAccountID: "ga-1", imv1.LabelSubaccountID: "sa-1", imv1.LabelShootName: shoot,
				imv1.LabelRegion: "eu-central-1", imv1.LabelKymaName: runtimeID, imv1.LabelManagedBy: "lifecycle-manager",
			},
			Annotations: map[string]string{imv1.AnnotationSKRDomain: shoot + ".kyma.example"},
		},
		Spec: imv1.GardenerClusterSpec{
			Shoot:      imv1.Shoot{Name: shoot},
			Kubeconfig: imv1.Kubeconfig{Secret: imv1.Secret{Name: "kubeconfig-" + runtimeID, Namespace: "kcp-system", Key: "config"}},
		},
	}
}

// gardenerCalls is the number of admin kubeconfig requests the operator made so far (all outcomes).
func gardenerCalls() int {
	n := 0.0
	m := gardenercluster.NewMetrics(nil) // the operator's collectors, registered by its first start
	for _, o := range gardenercluster.Outcomes() {
		n += testutil.ToFloat64(m.GardenerRequests.WithLabelValues(o))
	}
	return int(n)
}

// waitFor polls cond every 10 ms until it returns true or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, last)
}
