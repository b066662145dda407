package kube

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
)

// tlsRuntime is a runtime API server over TLS with HTTP/2, as a kube-apiserver serves: it answers the requests of a
// configuration pass (applies echo the object, lists are empty) and counts the TLS handshakes it completes and the
// connections it saw closed.
type tlsRuntime struct {
	srv *httptest.Server
	mu  sync.Mutex
	// handshakes counts ClientHellos: every full or resumed handshake.
	handshakes int
	// open is the number of connections accepted and not yet closed; allClosed is signalled when it drops to 0.
	open      int
	allClosed chan struct{}
	// secondHello is closed at the second ClientHello.
	secondHello chan struct{}
}

func newTLSRuntime(t *testing.T) *tlsRuntime { return newTLSRuntimeHolding(t, 0) }

// newTLSRuntimeHolding starts a runtime that holds its first handshake until a second connection says hello or
// hold has passed. A client that starts several requests on a new connection at once dials a connection for each
// while the first handshake is under way; how many dials come depends on how fast that handshake is, so a test that
// counts them holds it: every request started alongside the first one then dials, whatever the machine's load.
func newTLSRuntimeHolding(t *testing.T, hold time.Duration) *tlsRuntime {
	t.Helper()
	r := &tlsRuntime{allClosed: make(chan struct{}, 64), secondHello: make(chan struct{})}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	r.srv.EnableHTTP2 = true
	r.srv.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		r.mu.Lock()
		r.handshakes++
		n := r.handshakes
		r.mu.Unlock()
		switch {
		case n == 1 && hold > 0:
			select {
			case <-r.secondHello:
			case <-time.After(hold):
			}
		case n == 2:
			close(r.secondHello)
		}
		return nil, nil // the server's own configuration
	}}
	r.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		r.mu.Lock()
		defer r.mu.Unlock()
		switch s {
		case http.StateNew:
			r.open++
		case http.StateClosed, http.StateHijacked:
			if r.open--; r.open == 0 {
				r.allClosed <- struct{}{}
			}
		}
	}
	r.srv.StartTLS()
	t.Cleanup(r.srv.Close)
	return r
}

func (r *tlsRuntime) handshakeCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.handshakes
}

func (r *tlsRuntime) serve(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch req.Method {
	case http.MethodPatch: // server-side apply: the object as written
		body, _ := io.ReadAll(req.Body)
		_, _ = w.Write(body)
	case http.MethodGet:
		kind := "ClusterRoleBindingList"
		apiVersion := "rbac.authorization.k8s.io/v1"
		if strings.Contains(req.URL.Path, "openidconnects") {
			kind, apiVersion = "OpenIDConnectList", "authentication.gardener.cloud/v1alpha1"
		}
		_, _ = fmt.Fprintf(w, `{"apiVersion":%q,"kind":%q,"metadata":{},"items":[]}`, apiVersion, kind)
	default:
		_, _ = fmt.Fprint(w, `{"apiVersion":"v1","kind":"Status","status":"Success"}`)
	}
}

// kubeconfig trusts the server's certificate and carries a token.
func (r *tlsRuntime) kubeconfig() []byte {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.srv.Certificate().Raw})
	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, certificate-authority-data: %q}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, r.srv.URL, base64.StdEncoding.EncodeToString(ca))
}

func configurePass(t *testing.T, c *RuntimeConfigurator) {
	t.Helper()
	d := runtimeconfig.Desired{RuntimeID: "rt-1", ProvisioningInfo: "runtimeID: rt-1\n", ManageOIDC: true,
		Administrators: []runtimeconfig.AdminBinding{{Name: "kim-admin-1", User: "alice@example.com"}}}
	res, err := c.Configure(t.Context(), d)
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Problem(); p != nil {
		t.Fatalf("the pass did not reach the configuration: %+v", *p)
	}
}

// TestAConfigurationPassOpensOneConnection: the requests of a configuration pass (namespace, provisioning info,
// OpenIDConnect resources, administrators) share one TLS connection to the runtime: a handshake signs with the
// server's key and verifies its chain, a few milliseconds of CPU on both sides, so a pass must cost one, and a
// pass on a kept client none. Before, the OpenIDConnect and administrator requests started alongside the
// namespace on a client without a connection, and each dialled its own: three handshakes a pass.
//
// The first handshake is held (up to 2 s, or until a second connection says hello): requests started alongside the
// first one then dial their own connections however fast the machine is. Without the hold, a fast handshake could
// finish before they dialled and hide them (seen once, in a cold run of .ci/run: the safety mutant that starts them first
// survived).
func TestAConfigurationPassOpensOneConnection(t *testing.T) {
	r := newTLSRuntimeHolding(t, 2*time.Second)
	src := &staticKubeconfigs{kubeconfigs: map[string][]byte{"rt-1": r.kubeconfig()}}
	c := &RuntimeConfigurator{Clients: NewRuntimeClients(RuntimeClientsOptions{Kubeconfigs: src})}

	configurePass(t, c)
	if got := r.handshakeCount(); got != 1 {
		t.Errorf("a pass on a new client made %d TLS handshakes, want 1", got)
	}
	configurePass(t, c)
	if got := r.handshakeCount(); got != 1 {
		t.Errorf("a second pass on the kept client made %d more TLS handshakes, want none", got-1)
	}
}

// TestForgettingARuntimeClientClosesItsConnections: a client that goes (Forget, eviction by count or idle time)
// closes its idle connections at once, through client-go's and the operator's transport wrappers; before, the
// wrappers hid CloseIdleConnections and the connection stayed open until the transport's idle timeout (90 s),
// holding memory on both sides.
func TestForgettingARuntimeClientClosesItsConnections(t *testing.T) {
	r := newTLSRuntime(t)
	src := &staticKubeconfigs{kubeconfigs: map[string][]byte{"rt-1": r.kubeconfig()}}
	c := &RuntimeConfigurator{Clients: NewRuntimeClients(RuntimeClientsOptions{Kubeconfigs: src})}
	configurePass(t, c)

	c.Forget("rt-1")
	select {
	case <-r.allClosed:
	case <-time.After(10 * time.Second): // a bound on waiting, not a measurement: the close is immediate
		r.mu.Lock()
		defer r.mu.Unlock()
		t.Fatalf("%d connections still open after the client was forgotten, want none", r.open)
	}
}
