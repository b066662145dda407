package fake

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// RuntimeIdentities is an in-memory ports.RuntimeIdentities: runtimes with namespaces, ServiceAccounts, roles and
// bindings, and tokens that authenticate only while their ServiceAccount exists and they have not expired.
type RuntimeIdentities struct {
	mu       sync.Mutex
	now      func() time.Time
	runtimes map[ports.RuntimeRef]*fakeRuntime
	tokens   int
	requests int
	// MaxTokenValidity caps issued tokens like an API server's --service-account-max-token-expiration (0: no cap).
	MaxTokenValidity time.Duration
	// Err, when set, is consulted first by every method except Endpoint (by name); a non-nil error is returned.
	Err func(method string, rt ports.RuntimeRef) error
}

type fakeRuntime struct {
	endpoint    sakubeconfig.Endpoint
	unreachable bool
	namespaces  map[string]bool
	// createdFor is the AnnotationCreatedFor of each namespace the operator created.
	createdFor map[string]string
	objects    map[sakubeconfig.ObjectRef]*fakeObject
	tokens     map[string]fakeToken
	uids       int
}

type fakeObject struct {
	labels, annotations map[string]string
	uid                 string
	rules               []sakubeconfig.Rule
	aggregated          bool
	roleKind, roleName  string
}

type fakeToken struct {
	sa      sakubeconfig.ServiceAccount
	saUID   string
	expires time.Time
}

var _ ports.RuntimeIdentities = (*RuntimeIdentities)(nil)

// NewRuntimeIdentities returns an empty world whose tokens expire by now.
func NewRuntimeIdentities(now func() time.Time) *RuntimeIdentities {
	return &RuntimeIdentities{now: now, runtimes: map[ports.RuntimeRef]*fakeRuntime{}}
}

// AddRuntime makes rt reachable with an admin kubeconfig naming ep.
func (f *RuntimeIdentities) AddRuntime(rt ports.RuntimeRef, ep sakubeconfig.Endpoint) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runtimes[rt] = &fakeRuntime{endpoint: ep, namespaces: map[string]bool{"default": true, "kube-system": true},
		createdFor: map[string]string{}, objects: map[sakubeconfig.ObjectRef]*fakeObject{}, tokens: map[string]fakeToken{}}
}

// DropKubeconfig removes the admin kubeconfig of rt (the runtime was deleted): its objects are out of reach.
func (f *RuntimeIdentities) DropKubeconfig(rt ports.RuntimeRef) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.runtimes, rt)
}

// SetUnreachable makes rt's API server stop (or resume) answering.
func (f *RuntimeIdentities) SetUnreachable(rt ports.RuntimeRef, down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.runtimes[rt]; r != nil {
		r.unreachable = down
	}
}

// SetEndpoint changes the API server or CA of rt (the runtime was re-created under its ID).
func (f *RuntimeIdentities) SetEndpoint(rt ports.RuntimeRef, ep sakubeconfig.Endpoint) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.runtimes[rt]; r != nil {
		r.endpoint = ep
	}
}

// Put creates an object in rt as someone else would (a customer's ServiceAccount, an existing ClusterRole).
func (f *RuntimeIdentities) Put(rt ports.RuntimeRef, ref sakubeconfig.ObjectRef, labels, annotations map[string]string, rules []sakubeconfig.Rule) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.runtimes[rt]; r != nil {
		r.uids++
		r.objects[ref] = &fakeObject{labels: maps.Clone(labels), annotations: maps.Clone(annotations), rules: rules, uid: fmt.Sprintf("uid-%d", r.uids)}
	}
}

// Endpoint implements ports.RuntimeIdentities.
func (f *RuntimeIdentities) Endpoint(_ context.Context, rt ports.RuntimeRef) (sakubeconfig.Endpoint, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.runtimes[rt]
	if r == nil {
		return sakubeconfig.Endpoint{}, noKubeconfig(rt)
	}
	return r.endpoint, nil
}

func noKubeconfig(rt ports.RuntimeRef) error {
	return fmt.Errorf("secret %s/kubeconfig-%s: %w: %w", rt.Namespace, rt.RuntimeID, ports.ErrNoRuntimeKubeconfig, ports.ErrRuntimeUnreachable)
}

// reach counts a request to rt and returns its state; f.mu is held.
func (f *RuntimeIdentities) reach(method string, rt ports.RuntimeRef) (*fakeRuntime, error) {
	if f.Err != nil {
		if err := f.Err(method, rt); err != nil {
			return nil, err
		}
	}
	r := f.runtimes[rt]
	if r == nil {
		return nil, noKubeconfig(rt)
	}
	f.requests++
	if r.unreachable {
		return nil, fmt.Errorf("runtime %s: %w: connection timed out", rt.RuntimeID, ports.ErrRuntimeUnreachable)
	}
	return r, nil
}

// ClusterRole implements ports.RuntimeIdentities.
func (f *RuntimeIdentities) ClusterRole(_ context.Context, rt ports.RuntimeRef, name string) (sakubeconfig.ClusterRole, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.reach("ClusterRole", rt)
	if err != nil {
		return sakubeconfig.ClusterRole{}, err
	}
	o := r.objects[sakubeconfig.ObjectRef{Kind: sakubeconfig.KindClusterRole, Name: name}]
	if o == nil {
		return sakubeconfig.ClusterRole{}, fmt.Errorf("ClusterRole %s: %w", name, ports.ErrClusterRoleNotFound)
	}
	return sakubeconfig.ClusterRole{Rules: slices.Clone(o.rules), Aggregated: o.aggregated}, nil
}

// SetAggregated gives the ClusterRole name of rt an aggregationRule (or removes it), as the runtime's aggregation
// controller would see it; its rules stay what Put gave it.
func (f *RuntimeIdentities) SetAggregated(rt ports.RuntimeRef, name string, aggregated bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.runtimes[rt]; r != nil {
		if o := r.objects[sakubeconfig.ObjectRef{Kind: sakubeconfig.KindClusterRole, Name: name}]; o != nil {
			o.aggregated = aggregated
		}
	}
}

// Apply implements ports.RuntimeIdentities.
func (f *RuntimeIdentities) Apply(_ context.Context, rt ports.RuntimeRef, objs sakubeconfig.Objects) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.reach("Apply", rt)
	if err != nil {
		return err
	}
	want := map[sakubeconfig.ObjectRef]*fakeObject{}
	for _, ref := range objs.Refs() {
		want[ref] = &fakeObject{}
	}
	for _, role := range objs.Roles {
		want[role.ObjectRef].rules = role.Rules
	}
	for _, b := range objs.Bindings {
		want[b.ObjectRef].roleKind, want[b.ObjectRef].roleName = b.RoleKind, b.RoleName
	}
	for ref := range want {
		if o := r.objects[ref]; o != nil {
			if err := sakubeconfig.CheckOwned(objs.Owner, ref, o.labels, o.annotations); err != nil {
				return fmt.Errorf("%w: %w", ports.ErrRuntimeObjectNotOwned, err)
			}
		}
	}
	for _, ns := range objs.Claimed {
		if r.namespaces[ns] {
			if err := sakubeconfig.CheckNamespaceCreatedFor(objs.Owner, ns, map[string]string{sakubeconfig.AnnotationCreatedFor: r.createdFor[ns]}); err != nil {
				return err
			}
		}
	}
	for _, ns := range objs.Namespaces {
		if !r.namespaces[ns] {
			r.namespaces[ns], r.createdFor[ns] = true, objs.Owner.String()
		}
	}
	for ref, o := range want {
		o.labels, o.annotations = sakubeconfig.Labels(objs.Owner), sakubeconfig.Annotations(objs.Owner)
		if old := r.objects[ref]; old != nil {
			o.uid = old.uid
		} else {
			r.uids++
			o.uid = fmt.Sprintf("uid-%d", r.uids)
		}
		r.objects[ref] = o
	}
	for ref, o := range r.objects {
		if _, ok := want[ref]; !ok && o.labels[sakubeconfig.LabelOwner] == objs.Owner.Key() {
			delete(r.objects, ref)
		}
	}
	return nil
}

// IssueToken implements ports.RuntimeIdentities.
func (f *RuntimeIdentities) IssueToken(_ context.Context, rt ports.RuntimeRef, sa sakubeconfig.ServiceAccount, validity time.Duration) (ports.IssuedToken, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.reach("IssueToken", rt)
	if err != nil {
		return ports.IssuedToken{}, err
	}
	o := r.objects[sakubeconfig.ObjectRef{Kind: sakubeconfig.KindServiceAccount, Namespace: sa.Namespace, Name: sa.Name}]
	if o == nil {
		return ports.IssuedToken{}, fmt.Errorf("serviceaccounts %q not found: %w", sa, ports.ErrTransient)
	}
	if f.MaxTokenValidity > 0 {
		validity = min(validity, f.MaxTokenValidity)
	}
	f.tokens++
	tok := fmt.Sprintf("fake-token-%s-%d", rt.RuntimeID, f.tokens)
	expires := f.now().Add(validity).Truncate(time.Second)
	r.tokens[tok] = fakeToken{sa: sa, saUID: o.uid, expires: expires}
	return ports.IssuedToken{Token: tok, ExpiresAt: expires}, nil
}

// Remove implements ports.RuntimeIdentities.
func (f *RuntimeIdentities) Remove(_ context.Context, rt ports.RuntimeRef, owner sakubeconfig.Owner) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.reach("Remove", rt)
	if err != nil {
		return false, err
	}
	for ref, o := range r.objects {
		if o.labels[sakubeconfig.LabelOwner] == owner.Key() {
			delete(r.objects, ref)
		}
	}
	return true, nil
}

// WhoAmI authenticates token at rt as the API server would: the ServiceAccount's user name while the token has not
// expired and its ServiceAccount still exists (with the UID it was issued for).
func (f *RuntimeIdentities) WhoAmI(rt ports.RuntimeRef, token string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.runtimes[rt]
	if r == nil {
		return "", fmt.Errorf("runtime %s: no such runtime", rt.RuntimeID)
	}
	tok, ok := r.tokens[token]
	o := r.objects[sakubeconfig.ObjectRef{Kind: sakubeconfig.KindServiceAccount, Namespace: tok.sa.Namespace, Name: tok.sa.Name}]
	switch {
	case !ok:
		return "", fmt.Errorf("unauthorized: unknown token")
	case !f.now().Before(tok.expires):
		return "", fmt.Errorf("unauthorized: token expired at %s", tok.expires)
	case o == nil || o.uid != tok.saUID:
		return "", fmt.Errorf("unauthorized: ServiceAccount %s is gone", tok.sa)
	}
	return tok.sa.Username(), nil
}

// Objects lists the objects labelled for owner in rt, sorted.
func (f *RuntimeIdentities) Objects(rt ports.RuntimeRef, owner sakubeconfig.Owner) []sakubeconfig.ObjectRef {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []sakubeconfig.ObjectRef
	if r := f.runtimes[rt]; r != nil {
		for ref, o := range r.objects {
			if o.labels[sakubeconfig.LabelOwner] == owner.Key() {
				out = append(out, ref)
			}
		}
	}
	slices.SortFunc(out, func(a, b sakubeconfig.ObjectRef) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// Exists reports whether ref exists in rt (whoever created it).
func (f *RuntimeIdentities) Exists(rt ports.RuntimeRef, ref sakubeconfig.ObjectRef) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.runtimes[rt]
	return r != nil && r.objects[ref] != nil
}

// NamespaceExists reports whether namespace ns exists in rt.
func (f *RuntimeIdentities) NamespaceExists(rt ports.RuntimeRef, ns string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.runtimes[rt]
	return r != nil && r.namespaces[ns]
}

// PutNamespace creates namespace ns in rt as a customer would (not for any request), replacing one of that name:
// deleted and created again.
func (f *RuntimeIdentities) PutNamespace(rt ports.RuntimeRef, ns string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.runtimes[rt]; r != nil {
		r.namespaces[ns] = true
		delete(r.createdFor, ns)
	}
}

// TokenRequests is how many tokens were issued.
func (f *RuntimeIdentities) TokenRequests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tokens
}

// Requests is how many calls reached a runtime (every method but Endpoint, which reads the KCP).
func (f *RuntimeIdentities) Requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}
