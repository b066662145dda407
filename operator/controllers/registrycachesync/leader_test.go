package registrycachesync

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/kim/internal/scheme"
)

// TestWatcherListenerOnlyOnTheLeader: a replica that is not the leader does not serve the listener, so an event
// sent to it cannot make it read or write anything. The manager runs with leader election against an API server
// that never answers: it stays a standby for good, its other runnables run, and the listener's port stays closed.
func TestWatcherListenerOnlyOnTheLeader(t *testing.T) {
	scheme, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	_ = dead.Close() // nothing answers there: the lease is never acquired
	port := freeTCPPort(t)
	mgr, err := ctrl.NewManager(&rest.Config{Host: "http://" + deadAddr, Timeout: 200 * time.Millisecond}, manager.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		LeaderElection: true, LeaderElectionID: "kim-test", LeaderElectionNamespace: "kcp-system",
		LeaseDuration: ptrTo(2 * time.Second), RenewDeadline: ptrTo(time.Second), RetryPeriod: ptrTo(100 * time.Millisecond),
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	triggers := make(chan event.TypedGenericEvent[reconcile.Request], 1)
	l := NewListener(Deps{ListenerPort: port, Namespaces: []string{"kcp-system"}}, mgr.GetClient(), triggers, NewMetrics(nil))
	l.Enqueue = rec.enqueue
	if err := mgr.Add(l); err != nil {
		t.Fatal(err)
	}
	standbyRuns := make(chan struct{})
	if err := mgr.Add(everyReplica(func(ctx context.Context) error {
		close(standbyRuns)
		<-ctx.Done()
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	ctrl.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard()) // the lease errors of a standby that never gets it
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Logf("manager stopped: %v", err) // not what this test judges
		}
	}()
	select {
	case <-standbyRuns:
	case err := <-done:
		t.Fatalf("the manager stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the manager's runnables did not start")
	}
	// The listener, were it started, would be serving by now (it starts with the other runnables); poll a while.
	for range 20 {
		select {
		case <-mgr.Elected():
			t.Fatal("the manager became leader against an API server that does not answer")
		default:
		}
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 100*time.Millisecond); err == nil {
			_ = c.Close()
			t.Fatal("a standby serves the watcher listener")
		}
		time.Sleep(25 * time.Millisecond)
	}
	if !l.NeedLeaderElection() {
		t.Error("the listener must need leader election")
	}
}

// everyReplica is a runnable that runs on the leader and the standbys alike.
type everyReplica func(context.Context) error

func (f everyReplica) Start(ctx context.Context) error { return f(ctx) }
func (everyReplica) NeedLeaderElection() bool          { return false }

func freeTCPPort(t *testing.T) int {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	return lis.Addr().(*net.TCPAddr).Port
}

func ptrTo[T any](v T) *T { return &v }
