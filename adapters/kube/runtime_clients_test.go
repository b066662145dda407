package kube

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kyma-project/kim/core/ports"
)

func TestClientCacheDropsIdleAndLeastRecentlyUsedClients(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	built := map[string]int{}
	c := newClientCache(3, 2*time.Minute, func() time.Time { return now }, func(id string, kc []byte) (*runtimeClient, error) {
		built[id]++
		return newRuntimeClient(id, kc, time.Second)
	})
	kc := func(id string) []byte {
		return fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://%s.example:443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, id)
	}
	get := func(id string) {
		t.Helper()
		if _, err := c.get(id, kc(id), ""); err != nil {
			t.Fatal(err)
		}
	}
	get("a")
	now = now.Add(time.Minute)
	get("b")
	get("a") // reused: a is now the most recently used
	if built["a"] != 1 || c.len() != 2 {
		t.Fatalf("built %v, %d kept", built, c.len())
	}
	get("c")
	get("d") // over max: b, the least recently used, goes
	if c.len() != 3 {
		t.Fatalf("%d kept, want 3", c.len())
	}
	get("b")
	if built["b"] != 2 {
		t.Fatalf("b built %d times, want 2 (evicted by max)", built["b"])
	}
	now = now.Add(2*time.Minute + time.Second)
	get("e") // every other client was last used more than 2 minutes ago
	if c.len() != 1 {
		t.Fatalf("%d kept after everything else idled, want 1", c.len())
	}
	get("a")
	if built["a"] != 2 {
		t.Fatalf("a built %d times, want 2 (evicted as idle)", built["a"])
	}
}

// staticKubeconfigs serves the kubeconfigs of a map, counting reads.
type staticKubeconfigs struct {
	kubeconfigs map[string][]byte
	reads       int
}

func (s *staticKubeconfigs) Kubeconfig(_ context.Context, runtimeID string) ([]byte, error) {
	s.reads++
	kc, ok := s.kubeconfigs[runtimeID]
	if !ok {
		return nil, fmt.Errorf("runtime %s: %w", runtimeID, ports.ErrRuntimeUnreachable)
	}
	return kc, nil
}

func testKubeconfig(server string) []byte {
	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, server)
}

// RuntimeClients keeps one client per runtime and kubeconfig: every call reads the kubeconfig (a rotation is seen
// at once), an unchanged kubeconfig reuses the client (all its faces), a rotated one replaces it, the count and the
// idle time bound what is kept, Forget drops it.
func TestRuntimeClientsKeepOneClientPerRuntimeAndKubeconfig(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	src := &staticKubeconfigs{kubeconfigs: map[string][]byte{
		"a": testKubeconfig("https://a.example:443"), "b": testKubeconfig("https://b.example:443"), "c": testKubeconfig("https://c.example:443")}}
	rc := NewRuntimeClients(RuntimeClientsOptions{Kubeconfigs: src, MaxClients: 2, Idle: time.Minute, Now: func() time.Time { return now }})
	get := func(id string) *runtimeClient {
		t.Helper()
		c, err := rc.get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	a := get("a")
	if a.cfg.Timeout != RuntimeRequestTimeout || a.cfg.UserAgent != runtimeUserAgent {
		t.Errorf("request timeout %s, user agent %q; want %s and %q", a.cfg.Timeout, a.cfg.UserAgent, RuntimeRequestTimeout, runtimeUserAgent)
	}
	ctrl, err := rc.Controller(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := rc.Controller(t.Context(), "a"); again != ctrl || get("a") != a {
		t.Error("an unchanged kubeconfig built a new client")
	}
	if src.reads != 4 {
		t.Errorf("%d kubeconfig reads for 4 calls, want one each", src.reads)
	}

	src.kubeconfigs["a"] = testKubeconfig("https://a-rotated.example:443")
	rotated := get("a")
	if rotated == a || rotated.cfg.Host != "https://a-rotated.example:443" || rc.Len() != 1 {
		t.Errorf("rotation: same client %v, host %s, %d kept; want a new client for the new kubeconfig, 1 kept", rotated == a, rotated.cfg.Host, rc.Len())
	}

	get("b")
	get("c") // over MaxClients: a, the least recently used, goes
	if rc.Len() != 2 {
		t.Errorf("%d kept, want MaxClients 2", rc.Len())
	}
	if get("a") == rotated {
		t.Error("a survived as the least recently used client over MaxClients")
	}

	now = now.Add(time.Minute + time.Second)
	get("b") // a and c idled out
	if rc.Len() != 1 {
		t.Errorf("%d kept after the others idled for longer than Idle, want 1", rc.Len())
	}
	rc.Forget("b")
	if rc.Len() != 0 {
		t.Errorf("%d kept after Forget, want 0", rc.Len())
	}

	if _, err := rc.get(t.Context(), "unknown"); !errors.Is(err, ports.ErrRuntimeUnreachable) {
		t.Errorf("a runtime without kubeconfig: %v, want ErrRuntimeUnreachable", err)
	}
	src.kubeconfigs["broken"] = []byte("{not a kubeconfig")
	if _, err := rc.Controller(t.Context(), "broken"); !errors.Is(err, ports.ErrRuntimeUnreachable) {
		t.Errorf("a kubeconfig that does not parse: %v, want ErrRuntimeUnreachable", err)
	}
	if rc.Len() != 0 {
		t.Errorf("%d kept after failures, want 0", rc.Len())
	}
}

func TestRuntimeClientsRequestTimeoutOption(t *testing.T) {
	rc := NewRuntimeClients(RuntimeClientsOptions{RequestTimeout: 3 * time.Second})
	c, err := rc.forKubeconfig("a", testKubeconfig("https://a.example:443"))
	if err != nil {
		t.Fatal(err)
	}
	if c.cfg.Timeout != 3*time.Second {
		t.Errorf("request timeout %s, want 3s", c.cfg.Timeout)
	}
	if _, err := rc.get(t.Context(), "a"); !errors.Is(err, ports.ErrRuntimeUnreachable) {
		t.Errorf("no kubeconfig source: %v, want ErrRuntimeUnreachable", err)
	}
}

// One classification of runtime errors, mapped by each port to its classes: the configurator's outcome
// (unreachableError), the self-service ports (runtimeError) and RuntimeIdentities (fail, which keeps server errors
// transient and answers with a status as they are).
func TestRuntimeErrorClassification(t *testing.T) {
	gr := schema.GroupResource{Resource: "secrets"}
	transport := &url.Error{Op: "Get", URL: "https://rt.example/api", Err: errors.New("connection refused")}
	for _, tc := range []struct {
		reason     string
		err        error
		answer     runtimeAnswer
		identities error // nil: neither unreachable nor transient
	}{
		{"a transport error is no answer", transport, noAnswer, ports.ErrRuntimeUnreachable},
		{"a deadline is no answer", fmt.Errorf("get: %w", context.DeadlineExceeded), noAnswer, ports.ErrRuntimeUnreachable},
		{"a cancelled call is no answer", context.Canceled, noAnswer, ports.ErrRuntimeUnreachable},
		{"a kubeconfig classified unreachable stays so", fmt.Errorf("x: %w", ports.ErrRuntimeUnreachable), noAnswer, ports.ErrRuntimeUnreachable},
		{"401: credentials not accepted (yet)", apierrors.NewUnauthorized("no"), notAuthorized, ports.ErrRuntimeUnreachable},
		{"503", apierrors.NewServiceUnavailable("busy"), notNow, ports.ErrTransient},
		{"504", apierrors.NewTimeoutError("slow", 1), notNow, ports.ErrTransient},
		{"ServerTimeout", apierrors.NewServerTimeout(gr, "get", 1), notNow, ports.ErrTransient},
		{"429", apierrors.NewTooManyRequests("slow down", 1), answeredWithStatus, ports.ErrTransient},
		{"500", apierrors.NewInternalError(errors.New("boom")), answeredWithStatus, ports.ErrTransient},
		{"409", apierrors.NewConflict(gr, "x", errors.New("changed")), answeredWithStatus, ports.ErrTransient},
		{"403", apierrors.NewForbidden(gr, "x", errors.New("no")), answeredWithStatus, ports.ErrForbidden},
		{"404", apierrors.NewNotFound(gr, "x"), answeredWithStatus, nil},
		{"400", apierrors.NewBadRequest("bad"), answeredWithStatus, nil},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			if got := answerOf(tc.err); got != tc.answer {
				t.Errorf("answerOf = %d, want %d", got, tc.answer)
			}
			unreachable := tc.answer != answeredWithStatus
			if got := unreachableError(tc.err); got != unreachable {
				t.Errorf("unreachableError = %v, want %v", got, unreachable)
			}
			want := ports.ErrTransient
			if unreachable {
				want = ports.ErrRuntimeUnreachable
			}
			got := runtimeError("get Secret x", "rt-1", tc.err)
			if !errors.Is(got, want) || !errors.Is(got, tc.err) || (unreachable && errors.Is(got, ports.ErrTransient)) {
				t.Errorf("runtimeError = %v, want it to wrap %v and the cause", got, want)
			}
			got = (&session{rt: ports.RuntimeRef{RuntimeID: "rt-1"}}).fail("get Secret x", tc.err)
			for _, class := range []error{ports.ErrRuntimeUnreachable, ports.ErrTransient, ports.ErrForbidden} {
				if errors.Is(got, class) != errors.Is(tc.identities, class) {
					t.Errorf("RuntimeIdentities: %v; want of the classes only %v", got, tc.identities)
				}
			}
		})
	}
	if unreachableError(nil) {
		t.Error("nil is unreachable")
	}
}
