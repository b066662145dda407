package migrate

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener/guard"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/internal/scheme"
)

// adminBindingLabel marks the administrators' ClusterRoleBindings in a runtime (with one of adminBindingManagers).
const adminBindingLabel = "reconciler.kyma-project.io/managed-by"

// Scheme is the operator's scheme plus the Gardener security API (CredentialsBindings).
func Scheme() (*runtime.Scheme, error) {
	s, err := scheme.New()
	if err != nil {
		return nil, err
	}
	if err := securityv1alpha1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("build scheme: %w", err)
	}
	return s, nil
}

// KCPPolicy is what kim migrate may do in KCP: read Kyma resources, GardenerClusters, Runtimes, the kubeconfig
// Secrets and ConfigMaps of the namespace, create GardenerClusters and Runtimes, and patch a Runtime (the approval
// of the operator's first apply to an adopted shoot: one annotation). It never updates or deletes.
func KCPPolicy(namespace string) guard.Policy {
	const im = "infrastructuremanager.kyma-project.io"
	read := []string{"get", "list", "watch"}
	return guard.Policy{
		Rules: []guard.Rule{
			{Group: "operator.kyma-project.io", Resource: "kymas", Namespace: namespace, Verbs: read},
			{Group: im, Resource: "gardenerclusters", Namespace: namespace, Verbs: append([]string{"create"}, read...)},
			{Group: im, Resource: "runtimes", Namespace: namespace, Verbs: append([]string{"create", "patch"}, read...)},
			{Group: "", Resource: "secrets", Namespace: namespace, Verbs: []string{"get"}},
			{Group: "", Resource: "configmaps", Namespace: namespace, Verbs: []string{"get"}},
		},
		ReadOnlyPaths: []string{"/version", "/api", "/api/", "/apis", "/apis/", "/openapi/"},
	}
}

// Requests counts the requests a client sent, by "VERB resource" (dry runs counted apart); Writes sums every verb
// that is not a read.
type Requests struct {
	mu     sync.Mutex
	counts map[string]int
}

// Wrap returns cfg with a transport that counts its requests into r.
func (r *Requests) Wrap(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			r.add(describe(req))
			return next.RoundTrip(req)
		})
	})
	return out
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func (r *Requests) add(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.counts == nil {
		r.counts = map[string]int{}
	}
	r.counts[key]++
}

// describe names a request "METHOD resource" (the path element after the namespace or group version), with
// " (dry run)" for dryRun=All.
func describe(req *http.Request) string {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	resource := req.URL.Path
	for i, p := range parts {
		if p == "namespaces" && i+2 < len(parts) {
			resource = parts[i+2]
			break
		}
	}
	key := req.Method + " " + resource
	if req.URL.Query().Get("dryRun") == "All" {
		key += " (dry run)"
	}
	return key
}

// Counts returns a copy of the counts.
func (r *Requests) Counts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.counts))
	for k, v := range r.counts {
		out[k] = v
	}
	return out
}

// Writes is the number of requests that were neither reads nor dry runs.
func (r *Requests) Writes() int {
	n := 0
	for k, v := range r.Counts() {
		if !strings.HasPrefix(k, "GET ") && !strings.HasSuffix(k, "(dry run)") {
			n += v
		}
	}
	return n
}

// String lists the counts, sorted.
func (r *Requests) String() string {
	counts := r.Counts()
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %d", k, counts[k])
	}
	return b.String()
}

// runtimeClient connects to a runtime with an admin kubeconfig.
func runtimeClient(kubeconfig []byte) (client.Client, error) {
	cfg, err := kube.RESTConfigFromRuntimeKubeconfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("connect to the runtime: %w", err)
	}
	return c, nil
}

// adminBindings returns the users bound to cluster-admin by ClusterRoleBindings managed by manager.
func adminBindings(ctx context.Context, c client.Client, manager string) ([]string, error) {
	var list rbacv1.ClusterRoleBindingList
	if err := c.List(ctx, &list, client.MatchingLabels{adminBindingLabel: manager}); err != nil {
		return nil, fmt.Errorf("list ClusterRoleBindings: %w", err)
	}
	var out []string
	for _, b := range list.Items {
		if b.RoleRef.Kind != "ClusterRole" || b.RoleRef.Name != "cluster-admin" {
			continue
		}
		for _, s := range b.Subjects {
			if s.Kind == rbacv1.UserKind {
				out = append(out, s.Name)
			}
		}
	}
	return out, nil
}
