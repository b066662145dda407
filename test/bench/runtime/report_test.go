package runtime_test

import (
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// reportTrace prints the operator's requests per provisioned runtime by verb and resource, the path of the
// kubeconfig (from the shoot to the Secret) and the split of shoot Succeeded -> Runtime Ready.
func reportTrace(b *testing.B, tr *trace, rec *moments, shootOf map[string]string) {
	n := len(shootOf)
	for _, api := range []string{"garden", "kcp"} {
		total, table := tr.perRuntime(api, n)
		b.Logf("%s requests per runtime (verb resource[/subresource]; watches and lists of the caches included): %.2f%s", api, total, table)
	}
	b.Logf("kcp reads of named objects per runtime (runtime IDs as <id>): %s", namedReads(tr.snapshot("kcp"), n))
	configures, outcomes := tr.perRuntime("outcome", n)
	b.Logf("configurations of the runtime per runtime: %.2f%s", configures, outcomes)
	distinct := map[[2]string]bool{}
	for _, c := range tr.snapshot("desired") {
		distinct[[2]string{c.name, c.key}] = true
	}
	b.Logf("distinct desired configurations per runtime: %.2f (fewer than configurations: the same state written again)",
		float64(len(distinct))/float64(n))
	// A configuration of a state already reached whose status write (recording it) had finished before it started
	// was decided on a Runtime from a cache that had not seen that write yet.
	stale := 0
	for id := range shootOf {
		var writes []call
		for _, c := range tr.snapshot("kcp") {
			if c.name == id && strings.HasSuffix(c.key, " runtimes/status") {
				writes = append(writes, c)
			}
		}
		var prev *call
		for _, c := range tr.of("desired", "", id) {
			if prev != nil && prev.key == c.key && slices.ContainsFunc(writes, func(w call) bool {
				return w.start.After(prev.end) && w.end.Before(c.start)
			}) {
				stale++
			}
			prev = &c
		}
	}
	b.Logf("configurations of a reached state after the status write that recorded it (a stale Runtime cache) per runtime: %.2f",
		float64(stale)/float64(n))
	// What changed between the desired states of the runtime with the most of them, as differing words.
	var most []string
	mostID := ""
	for id := range shootOf {
		calls := tr.of("desired", "", id)
		var changes []string
		for i := 1; i < len(calls); i++ {
			if calls[i].key != calls[i-1].key {
				changes = append(changes, wordDiff(tr.state(calls[i-1].key), tr.state(calls[i].key)))
			}
		}
		if len(changes) > len(most) {
			most, mostID = changes, id
		}
	}
	if len(most) > 0 {
		b.Logf("runtime %s: desired configuration changed %d times: %s", mostID, len(most), strings.Join(most, " | "))
	}

	phases := map[string][]time.Duration{}
	add := func(name string, d time.Duration) { phases[name] = append(phases[name], d) }
	order := []string{
		"A shoot first seen -> kube-apiserver advertised (gardenlet)",
		"B advertised -> GardenerCluster created (Runtime controller)",
		"C GardenerCluster -> admin kubeconfig request sent (GardenerCluster controller)",
		"D admin kubeconfig request (gardener-apiserver)",
		"E admin kubeconfig answered -> Secret seen",
		"F shoot first seen -> Succeeded",
		"G Secret relative to Succeeded",
		"S1 Succeeded -> Ready: waiting for the kubeconfig Secret",
		"S2 Succeeded -> Ready: configuring the runtime (after the later of Succeeded and Secret)",
		"S3 Succeeded -> Ready: Runtime status writes (after the later of Succeeded and Secret)",
		"S4 Succeeded -> Ready: rest (queueing, observing, decisions)",
	}
	for id, shootName := range shootOf {
		seen, _ := rec.get(shootKind, shootName)
		adv, okAdv := rec.get(advertisedKind, shootName)
		gc, okGC := rec.get(clusterKind, id)
		secret, okSecret := rec.get(secretKind, id)
		succ, _ := rec.get(succeededKind, shootName)
		ready, _ := rec.get(readyKind, id)
		add(order[5], succ.Sub(seen))
		if okAdv {
			add(order[0], adv.Sub(seen))
			if okGC {
				add(order[1], gc.Sub(adv))
			}
		}
		if issued := tr.of("garden", "create shoots/adminkubeconfig", shootName); okGC && len(issued) > 0 {
			first := issued[0]
			add(order[2], first.start.Sub(gc))
			add(order[3], first.end.Sub(first.start))
			if okSecret {
				add(order[4], secret.Sub(first.end))
			}
		}
		if !okSecret {
			continue
		}
		add(order[6], secret.Sub(succ))
		lat := ready.Sub(succ)
		wait := min(max(secret.Sub(succ), 0), lat)
		from := latest(succ, secret)
		cfg := overlap(tr.of("runtime", "configure", id), from, ready)
		var writes []call
		for _, c := range tr.snapshot("kcp") {
			if c.name == id && strings.HasSuffix(c.key, " runtimes/status") {
				writes = append(writes, c)
			}
		}
		status := overlap(writes, from, ready)
		add(order[7], wait)
		add(order[8], cfg)
		add(order[9], status)
		add(order[10], lat-wait-cfg-status)
	}
	for _, name := range order {
		d := phases[name]
		if len(d) == 0 {
			continue
		}
		slices.Sort(d)
		var sum time.Duration
		for _, x := range d {
			sum += x
		}
		b.Logf("phase %-90s median %8s  p95 %8s  mean %8s", name, d[len(d)/2].Round(time.Millisecond),
			d[(len(d)*95+99)/100-1].Round(time.Millisecond), (sum / time.Duration(len(d))).Round(time.Millisecond))
	}
}

// wordDiff returns the words of b that are not at the same position in a (a rough view of what changed).
func wordDiff(a, b string) string {
	split := func(s string) []string {
		return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\\' || r == ' ' })
	}
	wa, wb := split(a), split(b)
	var out []string
	for i, w := range wb {
		if i >= len(wa) || wa[i] != w {
			out = append(out, w)
		}
		if len(out) >= 6 {
			break
		}
	}
	return strings.Join(out, " ")
}

// runtimeIDs are the runtime IDs the benchmark creates (and the names derived from them).
var runtimeIDs = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// namedReads counts the gets of named objects per runtime by resource and name pattern: which object a live read
// is for (a kubeconfig Secret, a record ConfigMap, the deletion guard).
func namedReads(calls []call, n int) string {
	counts := map[string]int{}
	for _, c := range calls {
		if strings.HasPrefix(c.key, "get ") && c.name != "" {
			counts[strings.TrimPrefix(c.key, "get ")+" "+runtimeIDs.ReplaceAllString(c.name, "<id>")]++
		}
	}
	var sb strings.Builder
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(&sb, "\n    %-60s %6.2f", k, float64(counts[k])/float64(n))
	}
	return sb.String()
}

// TestCountRequestsSplitsConflicts: discovery, lists and watches are the process's; a 409, and the 422 of a JSON
// patch whose test failed, are conflicts; a 422 of any other request (an invalid object) is not.
func TestCountRequestsSplitsConflicts(t *testing.T) {
	calls := []call{
		{key: "GET /apis"}, {key: "list seeds"}, {key: "watch shoots"},
		{key: "create shoots", code: http.StatusCreated},
		{key: "apply shoots", code: http.StatusConflict},
		{key: "patch(json-patch) shoots", code: http.StatusUnprocessableEntity},
		{key: "create shoots/adminkubeconfig", code: http.StatusUnprocessableEntity},
		{key: "get shoots", code: http.StatusOK},
	}
	shared, own, conflicts := countRequests(calls)
	if shared != 3 || own != 5 || conflicts != 2 {
		t.Errorf("shared %d, own %d, conflicts %d; want 3, 5, 2", shared, own, conflicts)
	}
}
