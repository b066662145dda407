// Package guard keeps the operator's Gardener client inside a documented allow list of verbs and resources and
// insists on verified TLS. It runs in the client's transport, so a request outside the list is refused before it
// leaves the process, whatever code issued it. The allow list mirrors the Role in config/gardener (documented in
// docs/operations/gardener-permissions.md): the guard is a second line of defence should that Role be broader.
package guard

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ErrRefused is matched (errors.Is) by every error of a request the guard refused.
var ErrRefused = errors.New("request refused by the Gardener client guard")

// ErrInsecureTLS is returned for a Gardener connection without certificate verification.
var ErrInsecureTLS = errors.New("gardener connection must verify the server certificate")

// RefusedError describes a refused request; it matches ErrRefused.
type RefusedError struct {
	Verb, Group, Resource, Subresource, Namespace, Name string
	// Path is set for requests that are not about a resource (e.g. /logs).
	Path string
}

func (e *RefusedError) Error() string {
	if e.Resource == "" {
		return fmt.Sprintf("%s: %s %s is not in the allow list", ErrRefused, e.Verb, e.Path)
	}
	res := e.Resource
	if e.Subresource != "" {
		res += "/" + e.Subresource
	}
	if e.Group != "" {
		res += "." + e.Group
	}
	where := "cluster-wide"
	if e.Namespace != "" {
		where = "in namespace " + e.Namespace
	}
	return fmt.Sprintf("%s: %s %s %q %s is not in the allow list", ErrRefused, e.Verb, res, e.Name, where)
}

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// Rule allows verbs on one resource (or subresource) of an API group.
type Rule struct {
	Group       string
	Resource    string
	Subresource string
	// Namespace is the only namespace a namespaced resource may be used in; empty means a cluster-scoped resource.
	Namespace string
	Verbs     []string
	// NamePrefix, when set, allows only requests naming an object whose name starts with it.
	NamePrefix string
	// LabelSelector, when set, allows only requests whose label selector requires exactly these labels (a list
	// cannot reach objects without them).
	LabelSelector map[string]string
	// DryRunOnly allows the verbs only as dry runs (query dryRun=All): the API server computes the result and
	// persists nothing.
	DryRunOnly bool
}

// Policy is an allow list; everything not allowed is refused.
type Policy struct {
	Rules []Rule
	// ReadOnlyPaths are non-resource paths (and path prefixes ending in "/") allowed for GET and HEAD:
	// discovery, version and health endpoints.
	ReadOnlyPaths []string
}

// Verbs as the Kubernetes API server names them.
var (
	readVerbs  = []string{"get", "list", "watch"}
	shootVerbs = []string{"get", "list", "watch", "create", "patch", "update", "delete"}
)

// Registry credential copies in the project (registry-cache extension): the only Secrets the operator reads or
// deletes.
const registryCredentialsPrefix = "reg-cache-"

// ProjectPolicy is what the operator needs in a Gardener project: manage shoots and their structured-authentication
// ConfigMaps in the project namespace, request admin kubeconfigs, list the seeds (their regions) and read cloud profiles by name (the zones of a
// region). Nothing more:
// every verb here has a caller (cached reads need get, list and watch; a server-side apply that may create needs
// create and patch).
// ConfigMaps are read through controller-runtime's cache (get, list, watch), written by server-side apply and a
// patch of their owner (create, patch); they are never replaced or deleted (the garbage collector removes them with
// their shoot). Seeds are listed live, never read one by one or watched.
// Secrets: the project's Secrets hold cloud credentials, so the operator never lists, watches or reads any of them.
// It creates copies of registry credentials (a create cannot replace an existing Secret) and gets and deletes only
// reg-cache-* names: their names are recorded in the KCP, so no list is needed (RBAC cannot limit a list or a watch
// to some Secrets: either would read all of them).
func ProjectPolicy(projectNamespace string) Policy {
	const core, security = "core.gardener.cloud", "security.gardener.cloud"
	return Policy{
		Rules: []Rule{
			{Group: core, Resource: "shoots", Namespace: projectNamespace, Verbs: shootVerbs},
			{Group: core, Resource: "shoots", Subresource: "adminkubeconfig", Namespace: projectNamespace, Verbs: []string{"create"}},
			// The zones of a region, for worker pools that come without zones: one cloud profile read by name.
			{Group: core, Resource: "cloudprofiles", Verbs: []string{"get"}},
			{Group: "", Resource: "configmaps", Namespace: projectNamespace,
				Verbs: []string{"get", "list", "watch", "create", "patch"}},
			{Group: core, Resource: "seeds", Verbs: []string{"list"}},
			{Group: "", Resource: "secrets", Namespace: projectNamespace, Verbs: []string{"create"}},
			{Group: "", Resource: "secrets", Namespace: projectNamespace, Verbs: []string{"get", "delete"}, NamePrefix: registryCredentialsPrefix},
			// The label dirty of a deleted runtime's binding, read and patched by name (docs/adr/0005).
			{Group: security, Resource: "credentialsbindings", Namespace: projectNamespace, Verbs: []string{"get", "patch"}},
		},
		ReadOnlyPaths: []string{"/version", "/healthz", "/livez", "/readyz", "/api", "/api/", "/apis", "/apis/", "/openapi/"},
	}
}

// AdmissionOnlyRules are granted by the Role in config/gardener but not by ProjectPolicy. None are left: the Role's
// get on Secrets (Gardener's admission, ResourceReferenceManager, accepts a shoot whose spec.resources reference a
// Secret, audit-log credentials or registry credential copies, only from a user who may get it) is also the
// guard's get of reg-cache-* names; the guard refuses a get of any other Secret of the project before it is sent.
func AdmissionOnlyRules(string) []Rule { return nil }

// MigrationPolicy is what `kim migrate` needs in a Gardener project: read the shoots, the ConfigMaps they reference
// and the bindings of their credentials, and ask for server-side dry runs of the operator's apply. It writes
// nothing: every other verb is refused before it leaves the process.
func MigrationPolicy(projectNamespace string) Policy {
	const core, security = "core.gardener.cloud", "security.gardener.cloud"
	return Policy{
		Rules: []Rule{
			{Group: core, Resource: "shoots", Namespace: projectNamespace, Verbs: readVerbs},
			{Group: core, Resource: "shoots", Namespace: projectNamespace, Verbs: []string{"patch"}, DryRunOnly: true},
			{Group: "", Resource: "configmaps", Namespace: projectNamespace, Verbs: readVerbs},
			{Group: core, Resource: "secretbindings", Namespace: projectNamespace, Verbs: readVerbs},
			{Group: security, Resource: "credentialsbindings", Namespace: projectNamespace, Verbs: readVerbs},
		},
		ReadOnlyPaths: []string{"/version", "/healthz", "/livez", "/readyz", "/api", "/api/", "/apis", "/apis/", "/openapi/"},
	}
}

// Check returns nil when the policy allows the request and a *RefusedError otherwise.
func (p Policy) Check(req *http.Request) error {
	info, err := requestInfoFactory.NewRequestInfo(req)
	if err != nil {
		return &RefusedError{Verb: req.Method, Path: req.URL.Path}
	}
	if !info.IsResourceRequest {
		if (req.Method == http.MethodGet || req.Method == http.MethodHead) && p.allowsPath(info.Path) {
			return nil
		}
		return &RefusedError{Verb: strings.ToLower(req.Method), Path: info.Path}
	}
	dryRun := req.URL.Query().Get("dryRun") == "All"
	for _, r := range p.Rules {
		if r.Group == info.APIGroup && r.Resource == info.Resource && r.Subresource == info.Subresource &&
			r.Namespace == info.Namespace && slices.Contains(r.Verbs, info.Verb) && r.allowsName(info.Name) && r.allowsSelector(req) &&
			(!r.DryRunOnly || dryRun) {
			return nil
		}
	}
	return &RefusedError{Verb: info.Verb, Group: info.APIGroup, Resource: info.Resource, Subresource: info.Subresource,
		Namespace: info.Namespace, Name: info.Name}
}

func (r Rule) allowsName(name string) bool {
	return r.NamePrefix == "" || (name != "" && strings.HasPrefix(name, r.NamePrefix))
}

// allowsSelector requires every label of r.LabelSelector as an equality requirement of the request's selector.
func (r Rule) allowsSelector(req *http.Request) bool {
	if len(r.LabelSelector) == 0 {
		return true
	}
	sel, err := labels.Parse(req.URL.Query().Get("labelSelector"))
	if err != nil {
		return false
	}
	reqs, selectable := sel.Requirements()
	if !selectable {
		return false
	}
	for k, v := range r.LabelSelector {
		if !slices.ContainsFunc(reqs, func(q labels.Requirement) bool {
			return q.Key() == k && (q.Operator() == selection.Equals || q.Operator() == selection.DoubleEquals) &&
				q.Values().Len() == 1 && q.Values().Has(v)
		}) {
			return false
		}
	}
	return true
}

func (p Policy) allowsPath(path string) bool {
	for _, allowed := range p.ReadOnlyPaths {
		if path == allowed || (strings.HasSuffix(allowed, "/") && strings.HasPrefix(path, allowed)) {
			return true
		}
	}
	return false
}

var requestInfoFactory = &request.RequestInfoFactory{
	APIPrefixes:          sets.NewString("api", "apis"),
	GrouplessAPIPrefixes: sets.NewString("api"),
}

type roundTripper struct {
	next   http.RoundTripper
	policy Policy
}

// RoundTripper returns a transport that refuses requests outside the policy without calling next.
func RoundTripper(next http.RoundTripper, p Policy) http.RoundTripper {
	return &roundTripper{next: next, policy: p}
}

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := rt.policy.Check(req); err != nil {
		if req.Body != nil {
			_ = req.Body.Close() // a RoundTripper must close the body, also when it does not send it
		}
		return nil, err
	}
	return rt.next.RoundTrip(req)
}

// WrappedRoundTripper exposes the next transport to client-go's transport utilities (net.RoundTripperWrapper).
func (rt *roundTripper) WrappedRoundTripper() http.RoundTripper { return rt.next }

// Secure checks that cfg verifies the Gardener server's certificate over HTTPS and returns a copy whose transport
// enforces p. The guard is the outermost transport wrapper, so it sees every request first.
func Secure(cfg *rest.Config, p Policy) (*rest.Config, error) {
	if cfg.Insecure {
		return nil, fmt.Errorf("%w: the kubeconfig sets insecure-skip-tls-verify; give it the Gardener CA instead", ErrInsecureTLS)
	}
	// The URL client-go will actually use (a host without scheme becomes https only when TLS is configured).
	u, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("gardener host %q: %w", cfg.Host, err)
	}
	if u.Scheme != "https" {
		return nil, fmt.Errorf("%w: host %q does not use https", ErrInsecureTLS, cfg.Host)
	}
	out := rest.CopyConfig(cfg)
	out.Wrap(func(next http.RoundTripper) http.RoundTripper { return RoundTripper(next, p) })
	return out, nil
}

// LoadKubeconfig reads the Gardener kubeconfig at path and returns a guarded config (see Secure).
func LoadKubeconfig(path string, p Policy) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("gardener kubeconfig %s: %w", path, err)
	}
	guarded, err := Secure(cfg, p)
	if err != nil {
		return nil, fmt.Errorf("gardener kubeconfig %s: %w", path, err)
	}
	return guarded, nil
}
