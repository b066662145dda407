package kube

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/ports"
)

// kubeconfigWithUser is a kubeconfig for server whose one user has the given YAML fields, and whose cluster has
// clusterExtra besides its server.
func kubeconfigWithUser(server, user, clusterExtra string) []byte {
	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: true%s}}]
users: [{name: u, user: {%s}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, server, clusterExtra, user)
}

// A runtime kubeconfig comes from a Secret: one that would run a command or read the operator's files is refused
// whole, naming what it sets, and nothing of it is executed or read; inline credentials are accepted.
func TestRuntimeKubeconfigMustBeSelfContained(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "executed")
	tokenFile := filepath.Join(dir, "operator-token")
	if err := os.WriteFile(tokenFile, []byte("operator-secret-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	var leaked []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = append(leaked, r.Header.Get("Authorization"))
		http.Error(w, "{}", http.StatusNotFound)
	}))
	defer srv.Close()
	exec := fmt.Sprintf("exec: {apiVersion: client.authentication.k8s.io/v1, command: sh, args: [-c, 'touch %s'], interactiveMode: Never}", marker)
	refused := []struct {
		name, user, cluster, want string
	}{
		{"exec plugin", exec, "", "users[u].exec"},
		{"auth provider", "auth-provider: {name: oidc, config: {idp-issuer-url: 'https://issuer.example'}}", "", "users[u].auth-provider"},
		{"token file", "tokenFile: " + tokenFile, "", "users[u].tokenFile"},
		{"client certificate file", "client-certificate: /etc/ssl/cert.pem, client-key-data: eA==", "", "users[u].client-certificate"},
		{"client key file", "client-certificate-data: eA==, client-key: /etc/ssl/key.pem", "", "users[u].client-key"},
		{"CA file", "token: t", ", insecure-skip-tls-verify: false, certificate-authority: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt", "clusters[c].certificate-authority"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			kc := kubeconfigWithUser(srv.URL, tc.user, tc.cluster)
			_, err := RESTConfigFromRuntimeKubeconfig(kc)
			if !errors.Is(err, ErrKubeconfigNotSelfContained) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want ErrKubeconfigNotSelfContained naming %s", err, tc.want)
			}
			// Through the one way the operator reaches runtimes: refused as unreachable, no request sent.
			rc := NewRuntimeClients(RuntimeClientsOptions{Kubeconfigs: &staticKubeconfigs{kubeconfigs: map[string][]byte{"r": kc}}})
			c, err := rc.Controller(t.Context(), "r")
			if !errors.Is(err, ports.ErrRuntimeUnreachable) || !errors.Is(err, ErrKubeconfigNotSelfContained) || c != nil {
				t.Errorf("runtime client: %v, %v; want a refusal wrapping ErrRuntimeUnreachable", c, err)
			}
			if c != nil {
				// What the operator would do next with an accepted one: a request to the named server.
				_ = c.Get(t.Context(), client.ObjectKey{Namespace: "kube-system", Name: "x"}, &corev1.ConfigMap{})
			}
		})
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the exec plugin ran (%v)", err)
	}
	if len(leaked) != 0 {
		t.Errorf("requests reached the kubeconfig's server with %q", leaked)
	}

	// Inline credentials (what Gardener issues and the operator writes) are accepted.
	cfg, err := RESTConfigFromRuntimeKubeconfig(kubeconfigWithUser("https://api.runtime.example", "token: inline", ""))
	if err != nil || cfg.BearerToken != "inline" {
		t.Errorf("inline kubeconfig: %+v, %v", cfg, err)
	}
	if _, err := RESTConfigFromRuntimeKubeconfig([]byte("{not yaml")); err == nil || errors.Is(err, ErrKubeconfigNotSelfContained) {
		t.Errorf("unparsable kubeconfig: %v; want a parse error", err)
	}
}
