package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/operator/app"
)

// The benchmark's trace: every request the operator sends to the garden and the KCP (by verb and resource, with its
// moments), and every configuration of a runtime. Request counts do not depend on the machine's load, so they split
// the cause of a change deterministically; the moments split the latency.

// call is one finished request or configuration.
type call struct {
	key        string // verb resource[/subresource], e.g. "apply shoots", "create shoots/adminkubeconfig"
	name       string // the object named in the path ("" for collections and creates)
	start, end time.Time
	code       int // the HTTP status of a request (0: no response, or not a request)
}

// trace collects calls; it is safe for concurrent use.
type trace struct {
	mu    sync.Mutex
	on    bool
	calls map[string][]call // by API ("garden", "kcp", "runtime")
	// states are the desired configurations by hash (JSON), to show what changed between two of a runtime.
	states map[string]string
}

func newTrace() *trace { return &trace{calls: map[string][]call{}, states: map[string]string{}} }

func (t *trace) remember(hash, state string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.states[hash] = state
}

func (t *trace) state(hash string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.states[hash]
}

// start begins recording (requests before it, such as the caches' initial lists, are not counted).
func (t *trace) start() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.on = true
}

func (t *trace) add(api string, c call) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.on {
		t.calls[api] = append(t.calls[api], c)
	}
}

// snapshot returns the calls recorded for api.
func (t *trace) snapshot(api string) []call {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.calls[api])
}

// counted returns a copy of cfg whose requests are recorded as api.
func (t *trace) counted(cfg *rest.Config, api string) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &recordingTransport{next: rt, api: api, t: t} })
	return cfg
}

type recordingTransport struct {
	next http.RoundTripper
	api  string
	t    *trace
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := r.next.RoundTrip(req)
	key, name := describe(req)
	code := 0
	if resp != nil {
		code = resp.StatusCode
	}
	r.t.add(r.api, call{key: key, name: name, start: start, end: time.Now(), code: code})
	return resp, err
}

// describe names a request by verb and resource (with subresource) and the object it names, from its path:
// /api/v1/namespaces/<ns>/<resource>[/<name>[/<sub>]] or /apis/<group>/<version>/...
func describe(req *http.Request) (key, name string) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return req.Method + " " + req.URL.Path, ""
	}
	if len(parts) >= 2 && parts[0] == "namespaces" && len(parts) > 2 {
		parts = parts[2:]
	}
	resource := ""
	if len(parts) > 0 {
		resource = parts[0]
	}
	if len(parts) > 1 {
		name = parts[1]
	}
	if len(parts) > 2 {
		resource += "/" + parts[2]
	}
	verb := map[string]string{http.MethodPost: "create", http.MethodPut: "update", http.MethodDelete: "delete"}[req.Method]
	switch req.Method {
	case http.MethodGet:
		verb = "get"
		if name == "" {
			verb = "list"
			if req.URL.Query().Get("watch") == "true" {
				verb = "watch"
			}
		}
	case http.MethodPatch:
		verb = "patch(" + strings.TrimPrefix(strings.TrimSuffix(req.Header.Get("Content-Type"), "+json"), "application/") + ")"
		if strings.Contains(req.Header.Get("Content-Type"), "apply-patch") {
			verb = "apply"
		}
	}
	return verb + " " + resource, name
}

// configurations wraps the operator's runtime configurator so every Configure call is recorded (api "runtime").
func (t *trace) configurations() app.Override {
	return app.WithConfigurator(func(c ports.RuntimeConfigurator) ports.RuntimeConfigurator {
		return &recordingConfigurator{RuntimeConfigurator: c, t: t}
	})
}

type recordingConfigurator struct {
	ports.RuntimeConfigurator
	t *trace
}

func (r *recordingConfigurator) Configure(ctx context.Context, d runtimeconfig.Desired) (runtimeconfig.Result, error) {
	start := time.Now()
	res, err := r.RuntimeConfigurator.Configure(ctx, d)
	end := time.Now()
	r.t.add("runtime", call{key: "configure", name: d.RuntimeID, start: start, end: end})
	outcome := "configure: reached"
	if p := res.Problem(); err != nil || p != nil {
		outcome = "configure: failed"
		if p != nil {
			outcome += " (" + string(p.Reason) + ")"
		}
	}
	r.t.add("outcome", call{key: outcome, name: d.RuntimeID, start: start, end: end})
	r.t.add("desired", call{key: d.Hash(), name: d.RuntimeID, start: start, end: end})
	if raw, err := json.Marshal(d); err == nil {
		r.t.remember(d.Hash(), string(raw))
	}
	return res, err
}

// perRuntime prints the calls of api counted per provisioned runtime, by verb and resource, sorted by resource.
func (t *trace) perRuntime(api string, n int) (float64, string) {
	counts := map[string]int{}
	total := 0
	for _, c := range t.snapshot(api) {
		counts[c.key]++
		total++
	}
	keys := slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		ra, rb := a[strings.Index(a, " ")+1:], b[strings.Index(b, " ")+1:]
		if ra != rb {
			return strings.Compare(ra, rb)
		}
		return strings.Compare(a, b)
	})
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, "\n    %-45s %6.2f", k, float64(counts[k])/float64(n))
	}
	return float64(total) / float64(n), sb.String()
}

// of returns the calls of api with key ("" any key) naming name, in order of their start.
func (t *trace) of(api, key, name string) []call {
	var out []call
	for _, c := range t.snapshot(api) {
		if (key == "" || c.key == key) && c.name == name {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b call) int { return a.start.Compare(b.start) })
	return out
}

// overlap is how much of [from, to] the calls cover (calls of one runtime do not overlap each other).
func overlap(calls []call, from, to time.Time) time.Duration {
	var d time.Duration
	for _, c := range calls {
		s, e := latest(c.start, from), c.end
		if to.Before(e) {
			e = to
		}
		if e.After(s) {
			d += e.Sub(s)
		}
	}
	return d
}
