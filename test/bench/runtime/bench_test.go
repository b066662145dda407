// Package runtime holds the Runtime latency benchmark (make bench-runtime); the kubeconfig load harness is its
// sibling test/bench/kubeconfig. Benchmarks are not part of make test; TestIntegrationRequestsPerProvisioning, which
// holds the request bounds on four runtimes, is.
package runtime_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/sandbox/gardenlet"
	"github.com/kyma-project/kim/test/sandbox/runtimeapi"
	"github.com/kyma-project/kim/test/testenv"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// BenchmarkRuntimeReadyLatency measures, over BENCH_RUNTIMES (default 50) KEB-shaped Runtimes created BENCH_INTERVAL
// apart (default 300ms; 0 creates them all at once), the
// time from the simulated Gardener reporting the shoot's Create operation Succeeded to the Runtime reporting Ready
// (issue 6, acceptance 4), and the Gardener API requests the operator sends per provisioned runtime. Both moments are
// taken from watches in this process, so they share one clock and similar delivery delays. It provisions once
// whatever b.N is: run it with -benchtime 1x (make bench-runtime).
func BenchmarkRuntimeReadyLatency(b *testing.B) {
	n, interval := 50, 300*time.Millisecond
	if v, err := strconv.Atoi(os.Getenv("BENCH_RUNTIMES")); err == nil && v > 0 {
		n = v
	}
	if v, err := time.ParseDuration(os.Getenv("BENCH_INTERVAL")); err == nil && v >= 0 {
		interval = v
	}
	// Real Create operations take many minutes; a short one leaves little time to set access up meanwhile.
	create := 3 * time.Second
	if v, err := time.ParseDuration(os.Getenv("BENCH_CREATE")); err == nil && v > 0 {
		create = v
	}
	w := provision(b, n, interval, create, b.ResetTimer)
	tr, rec, op, shootOf := w.tr, w.rec, w.op, w.shootOf
	b.StopTimer()
	// In-flight reconciles of the last Ready runtimes finish before the requests are counted.
	for _, c := range []string{"runtime", "gardenercluster"} {
		op.WaitIdle(b, c, time.Minute)
	}
	requestsAfter, byVerb := testenv.GardenerRequests(b)
	requests := requestsAfter - w.requestsBefore
	for k := range byVerb {
		byVerb[k] -= w.byVerbBefore[k]
		if byVerb[k] == 0 {
			delete(byVerb, k)
		}
	}
	b.Logf("Gardener requests by verb and outcome: %v", byVerb)
	reportTrace(b, tr, rec, shootOf)
	// Request counts depend on the machine's load only through the order of what happens (the kubeconfig before or
	// after Gardener's Succeeded), which the bound allows for.
	if kcpPerRuntime, _ := tr.perRuntime("kcp", n); kcpPerRuntime > maxKCPRequestsPerRuntime {
		b.Errorf("%.2f KCP requests per provisioned runtime, more than %d (the previous manager's 18, issue 29): see the breakdown above",
			kcpPerRuntime, maxKCPRequestsPerRuntime)
	}

	// Phases are offsets from the shoot's Succeeded: access is set up while Gardener still creates, so the
	// GardenerCluster and the Secret usually come before it (negative offsets).
	var latencies, clusterAt, secretAt, issuing, own []time.Duration
	secretFirst := 0
	for id, shootName := range shootOf {
		succeeded, ok1 := rec.get(succeededKind, shootName)
		ready, ok2 := rec.get(readyKind, id)
		if !ok1 || !ok2 {
			b.Fatalf("runtime %s: shoot Succeeded seen %v, Ready seen %v", id, ok1, ok2)
		}
		latencies = append(latencies, ready.Sub(succeeded))
		gc, ok3 := rec.get(clusterKind, id)
		secret, ok4 := rec.get(secretKind, id)
		if ok3 && ok4 {
			clusterAt, secretAt, issuing = append(clusterAt, gc.Sub(succeeded)), append(secretAt, secret.Sub(succeeded)), append(issuing, secret.Sub(gc))
			if secret.Before(succeeded) {
				secretFirst++
			}
			// What is left to the Runtime controller once both of its inputs are there (configuring the runtime,
			// writing the status): the part of P1 that does not wait for Gardener or the kubeconfig.
			own = append(own, ready.Sub(latest(succeeded, secret)))
		}
	}
	for _, phase := range []struct {
		name string
		d    []time.Duration
	}{{"GardenerCluster created, relative to shoot Succeeded", clusterAt}, {"kubeconfig Secret written, relative to shoot Succeeded", secretAt},
		{"GardenerCluster -> kubeconfig Secret (issuing)", issuing},
		{"the later of shoot Succeeded and kubeconfig Secret -> Runtime Ready (the Runtime controller's own share)", own}} {
		slices.Sort(phase.d)
		if len(phase.d) > 0 {
			b.Logf("phase %s: median %s, p95 %s", phase.name, phase.d[len(phase.d)/2].Round(time.Millisecond),
				phase.d[(len(phase.d)*95+99)/100-1].Round(time.Millisecond))
		}
	}
	b.Logf("kubeconfig Secret written before the shoot's Succeeded for %d of %d runtimes", secretFirst, len(secretAt))
	slices.Sort(latencies)
	median := latencies[len(latencies)/2]
	p95 := latencies[(len(latencies)*95+99)/100-1]
	perRuntime := requests / float64(n)
	b.ReportMetric(median.Seconds(), "s-median-succeeded-to-ready")
	b.ReportMetric(p95.Seconds(), "s-p95-succeeded-to-ready")
	b.ReportMetric(latencies[len(latencies)-1].Seconds(), "s-max-succeeded-to-ready")
	b.ReportMetric(perRuntime, "gardener-requests/runtime")
	b.Logf("watches re-established: %d (before the end of the benchmark)", watchRestarts.Load())
	b.Logf("simulated Create operations take %s", create)
	b.Logf("%d runtimes created %s apart: shoot Succeeded -> Runtime Ready median %s, p95 %s, min %s, max %s; %.1f Gardener requests per runtime",
		n, interval, median.Round(time.Millisecond), p95.Round(time.Millisecond), latencies[0].Round(time.Millisecond),
		latencies[len(latencies)-1].Round(time.Millisecond), perRuntime)
	if median > 2*time.Second {
		b.Logf("median %s misses the target of 2s (issue 6); see the phases above for where the time goes", median)
	}
}

// provisioned is what provision leaves for the measurements: the trace of every request, the moments seen by the
// watches, the operator and the shoot of each runtime, and the Gardener request counters before the first Runtime.
type provisioned struct {
	tr             *trace
	rec            *moments
	op             *testenv.Operator
	shootOf        map[string]string
	requestsBefore float64
	byVerbBefore   map[string]float64
}

// provision starts garden-in-a-box and the operator with its requests traced, creates n KEB-shaped Runtimes (the
// plans in turn) interval apart, with simulated Create operations of create, and waits until all are Ready.
// started runs right before the first Runtime is created (the benchmark's timer).
func provision(tb testing.TB, n int, interval, create time.Duration, started func()) provisioned {
	tb.Helper()
	env := testenv.Garden(tb, testenv.GardenOptions{
		// One runtime API server for all shoots: kubeconfigs and admin bindings work, fifty servers would not fit.
		RuntimeAPIServers: runtimeapi.ModeShared,
		Gardenlet: gardenlet.Options{CreateDuration: create, ReconcileDuration: 2 * time.Second,
			DeleteDuration: time.Second, ProgressInterval: time.Second, MaxConcurrentReconciles: 25},
	})
	opts := testenv.Options(env.Catalogue.Project)
	opts.ConfigFile = testenv.WriteConfig(tb, map[string]any{"defaultGracePeriod": "1h"})
	tr := newTrace()
	op := testenv.RunOperator(tb, tr.counted(env.KCP, "kcp"), tr.counted(env.Garden, "garden"), opts, tr.configurations())
	kcp := env.KCPClient
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	rec := newMoments()
	if err := watchShootsSucceeded(ctx, env.Garden, env.Catalogue.ProjectNamespace(), rec); err != nil {
		tb.Fatal(err)
	}
	if err := watchRuntimesReady(ctx, env.KCP, rec); err != nil {
		tb.Fatal(err)
	}
	if err := watchKCPObjects(ctx, env.KCP, rec); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("client rate limits: KCP QPS %g burst %d; garden QPS %g burst %d", env.KCP.QPS, env.KCP.Burst, env.Garden.QPS, env.Garden.Burst)
	requestsBefore, byVerbBefore := testenv.GardenerRequests(tb)
	tr.start()

	plans := []*imv1.Runtime{keb.LoadRuntime(tb, filepath.Join(testenv.RepoRoot(), "operator", "api", "v1", "testdata", "keb-runtime-trial.yaml")),
		keb.GoldenRuntime(tb, "aws"), keb.GoldenRuntime(tb, "azure"), keb.GoldenRuntime(tb, "gcp")}
	shootOf := map[string]string{}
	started()
	for i := range n {
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		shootName := fmt.Sprintf("c-%06x", 0xb00000+i)
		rt := keb.WithIdentity(plans[i%len(plans)], id, shootName)
		shootOf[id] = shootName
		if err := kcp.Create(ctx, rt); err != nil {
			tb.Fatalf("create runtime %d: %v", i, err)
		}
		time.Sleep(interval)
	}
	testenv.Eventually(tb, 10*time.Minute, "all runtimes Ready", func() (bool, string) {
		ready := rec.count(readyKind)
		return ready >= n, fmt.Sprintf("%d of %d Ready", ready, n)
	})
	return provisioned{tr: tr, rec: rec, op: op, shootOf: shootOf, requestsBefore: requestsBefore, byVerbBefore: byVerbBefore}
}

// maxKCPRequestsPerRuntime bounds the operator's KCP requests per provisioned runtime (every verb, the events and
// the caches' watches included): the previous infrastructure manager made 18 (issue 29).
const maxKCPRequestsPerRuntime = 18

// TestMain stops the garden-in-a-box after the benchmark.
func TestMain(m *testing.M) { testenv.Main(m) }

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
