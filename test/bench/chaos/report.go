package main

import (
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"time"

	"github.com/kyma-project/kim/test/bench/harness"
	"github.com/kyma-project/kim/test/sandbox/faultproxy"
)

// report is what a chaos run prints.
type report struct {
	cfg                           config
	started                       time.Time
	chaos, converge               time.Duration
	kills, restarts               int
	faults                        map[faultproxy.Kind]int
	requests, reads, live         int
	deletionsChecked, watches     int
	qpsRatio                      float64
	ops                           map[string]int
	violations                    []violation
	loadStart, loadChaos, loadEnd string
}

func (r *report) print(out io.Writer) {
	c := r.cfg
	p := func(format string, args ...any) { _, _ = fmt.Fprintf(out, format+"\n", args...) }
	p("chaos: %d runtimes, %.0f%% Gardener faults, kills every %s-%s, window %s, QPS %g burst %d, seed %d",
		c.runtimes, 100*c.faultShare, c.killMin, c.killMax, c.grace, c.gardenerQPS, c.gardenerBurst, c.seed)
	p("machine: %d CPUs, load average start %s, end of chaos %s, end %s; memory %s", runtime.NumCPU(), r.loadStart, r.loadChaos, r.loadEnd, harness.MemTotal())
	p("chaos phase: %s; kills survived: %d (manager started %d times)", r.chaos.Round(time.Second), r.kills, r.restarts)
	p("faults injected: %d of %d Gardener requests %s; watches forwarded while faulty: %d", total(r.faults), r.requests, kinds(r.faults), r.watches)
	p("workload: %s; %d runtimes live at the end", opsLine(r.ops), r.live)
	p("kubeconfig Secret reads: %d; shoot deletions checked against their windows: %d; worst request rate: %.0f%% of the allowance", r.reads, r.deletionsChecked, 100*r.qpsRatio)
	p("time to converge after the last fault: %s", r.converge.Round(100*time.Millisecond))
	broken := map[string]bool{}
	for _, v := range r.violations {
		broken[v.Invariant] = true
	}
	for _, inv := range invariants {
		state := "held"
		if broken[inv] {
			state = "BROKEN"
		}
		p("  %-6s %s", state, inv)
	}
	for i, v := range r.violations {
		if i == 20 {
			p("  ... %d more", len(r.violations)-20)
			break
		}
		p("  violation: %s", v)
	}
	if len(r.violations) == 0 {
		p("result: every invariant held")
	} else {
		p("result: %d violations", len(r.violations))
	}
}

func total(m map[faultproxy.Kind]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func kinds(m map[faultproxy.Kind]int) string {
	out := "("
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%s: %d", k, m[k])
	}
	return out + ")"
}

func opsLine(m map[string]int) string {
	out := ""
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%s %d", k, m[k])
	}
	return out
}
