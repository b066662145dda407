package main

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// countingProxy stands between a command and an API server and counts every request by method and resource: an
// independent measurement of what the command sends (the command's own guard and counters are not trusted here).
type countingProxy struct {
	mu     sync.Mutex
	counts map[string]int
}

// proxyKubeconfig starts a TLS proxy to upstream (authenticating there with upstream's credentials) and returns
// the proxy and a kubeconfig file that points at it.
func proxyKubeconfig(t *testing.T, upstream *rest.Config, dir, name string) (*countingProxy, string) {
	t.Helper()
	target, err := url.Parse(upstream.Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(upstream)
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{counts: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.count(r)
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: srv.URL,
		CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	data, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p, path
}

func (p *countingProxy) count(r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	resource := "-"
	for i, s := range parts {
		if s == "namespaces" && i+2 < len(parts) {
			resource = parts[i+2]
		}
	}
	key := r.Method + " " + resource
	if r.URL.Query().Get("dryRun") == "All" {
		key += " (dry run)"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts[key]++
}

// take returns the counts since the last take and resets them.
func (p *countingProxy) take() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.counts
	p.counts = map[string]int{}
	return out
}

// writes sums the requests that are neither reads nor dry runs.
func writes(counts map[string]int, resource string) int {
	n := 0
	for k, v := range counts {
		read := strings.HasPrefix(k, http.MethodGet+" ") || strings.HasSuffix(k, "(dry run)")
		if !read && (resource == "" || strings.Contains(k, " "+resource)) {
			n += v
		}
	}
	return n
}
