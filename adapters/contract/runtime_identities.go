package contract

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// IdentitiesFixture is one fresh world of runtimes for the RuntimeIdentities contract.
type IdentitiesFixture struct {
	Identities ports.RuntimeIdentities
	// Runtime is reachable through its admin kubeconfig; Missing has no admin kubeconfig Secret; Hanging has one
	// whose API server accepts connections and never answers.
	Runtime, Missing, Hanging ports.RuntimeRef
	// CallBound is how long a call to Hanging may block at most before it fails.
	CallBound time.Duration
	// WhoAmI asks Runtime who token is (its user name), or fails when Runtime does not accept the token.
	WhoAmI func(ctx context.Context, token string) (string, error)
	// Objects lists the objects labelled for owner in Runtime, bypassing Identities.
	Objects func(ctx context.Context, owner sakubeconfig.Owner) ([]sakubeconfig.ObjectRef, error)
	// NamespaceExists reports whether Runtime has namespace ns.
	NamespaceExists func(ctx context.Context, ns string) (bool, error)
	// PutNamespace creates namespace ns in Runtime as a customer would (without the operator's annotation).
	PutNamespace func(ctx context.Context, ns string) error
	// PutServiceAccount creates a ServiceAccount in Runtime as a customer would (without the operator's labels).
	PutServiceAccount func(ctx context.Context, sa sakubeconfig.ServiceAccount) error
	// PutClusterRole creates a ClusterRole with role's rules in Runtime as a customer would; an aggregated one gets
	// an aggregationRule (whose selector matches nothing, so its rules stay role's).
	PutClusterRole func(ctx context.Context, name string, role sakubeconfig.ClusterRole) error
	// Now is the time tokens are issued at.
	Now func() time.Time
}

// RunRuntimeIdentitiesContract runs the RuntimeIdentities contract against fixtures made by newFixture (one per
// subtest; subtests use distinct owners and ServiceAccounts, so a fixture may be shared).
func RunRuntimeIdentitiesContract(t *testing.T, newFixture func(t *testing.T) IdentitiesFixture) {
	podsIn := func(ns ...string) sakubeconfig.Rule {
		return sakubeconfig.Rule{Namespaces: ns, APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}
	}
	newRequest := func(name string, rules ...sakubeconfig.Rule) sakubeconfig.Request {
		return sakubeconfig.Request{Owner: sakubeconfig.Owner{Namespace: "kcp-system", Name: name}, RuntimeID: "rid",
			ServiceAccount: sakubeconfig.ServiceAccount{Namespace: "kyma-" + name, Name: name}, Rules: rules,
			Validity: time.Hour, SecretName: name}
	}

	t.Run("Endpoint reads the admin kubeconfig; a missing one is ErrNoRuntimeKubeconfig", func(t *testing.T) {
		f := newFixture(t)
		ep, err := f.Identities.Endpoint(t.Context(), f.Runtime)
		if err != nil || !strings.HasPrefix(ep.Server, "https://") || len(ep.CAData) == 0 {
			t.Errorf("Endpoint = %+v, %v; want an https server and a CA", ep, err)
		}
		_, err = f.Identities.Endpoint(t.Context(), f.Missing)
		if !errors.Is(err, ports.ErrNoRuntimeKubeconfig) || !errors.Is(err, ports.ErrRuntimeUnreachable) {
			t.Errorf("Endpoint of a runtime without kubeconfig: %v, want ErrNoRuntimeKubeconfig and ErrRuntimeUnreachable", err)
		}
	})

	t.Run("Apply creates the identity, a token authenticates as the ServiceAccount, Remove revokes it", func(t *testing.T) {
		f := newFixture(t)
		req := newRequest("apply", podsIn("kyma-apply", "istio-apply"), sakubeconfig.Rule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list"}})
		objs := sakubeconfig.Desired(req)
		for i := range 2 { // idempotent
			if err := f.Identities.Apply(t.Context(), f.Runtime, objs); err != nil {
				t.Fatalf("Apply #%d: %v", i+1, err)
			}
		}
		checkObjects(t, f, req.Owner, objs.Refs())
		for _, ns := range objs.Namespaces {
			if ok, err := f.NamespaceExists(t.Context(), ns); err != nil || !ok {
				t.Errorf("namespace %s exists = %v (%v), want created", ns, ok, err)
			}
		}
		tok, err := f.Identities.IssueToken(t.Context(), f.Runtime, req.ServiceAccount, 10*time.Minute)
		if err != nil {
			t.Fatalf("IssueToken: %v", err)
		}
		if left := tok.ExpiresAt.Sub(f.Now()); left < 9*time.Minute || left > 11*time.Minute {
			t.Errorf("token expires in %s, want about 10m", left)
		}
		if user, err := f.WhoAmI(t.Context(), tok.Token); err != nil || user != req.ServiceAccount.Username() {
			t.Errorf("the token is %q (%v), want %s", user, err, req.ServiceAccount.Username())
		}

		// A rule change takes effect in place: the istio namespace's role goes, the ServiceAccount (and its token) stay.
		changed := req
		changed.Rules = []sakubeconfig.Rule{podsIn("kyma-apply")}
		if err := f.Identities.Apply(t.Context(), f.Runtime, sakubeconfig.Desired(changed)); err != nil {
			t.Fatalf("Apply of changed rules: %v", err)
		}
		checkObjects(t, f, req.Owner, sakubeconfig.Desired(changed).Refs())
		if user, err := f.WhoAmI(t.Context(), tok.Token); err != nil || user != req.ServiceAccount.Username() {
			t.Errorf("after a rule change the token is %q (%v), want it still valid", user, err)
		}

		eventually(t, "Remove reports everything gone", func(c *assert.CollectT) {
			gone, err := f.Identities.Remove(t.Context(), f.Runtime, req.Owner)
			require.NoError(c, err, "Remove")
			assert.True(c, gone, "Remove: gone")
		})
		checkObjects(t, f, req.Owner, nil)
		eventually(t, "the token stops working with its ServiceAccount", func(c *assert.CollectT) {
			user, err := f.WhoAmI(t.Context(), tok.Token)
			assert.Error(c, err, "still authenticates as %s", user)
		})
		if gone, err := f.Identities.Remove(t.Context(), f.Runtime, req.Owner); err != nil || !gone {
			t.Errorf("Remove of nothing: gone=%v err=%v", gone, err)
		}
	})

	t.Run("Apply holds a claimed namespace only when it created it for the owner, before writing anything", func(t *testing.T) {
		f := newFixture(t)
		secrets := func(ns string) sakubeconfig.Rule {
			return sakubeconfig.Rule{Namespaces: []string{ns}, APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}
		}
		claimed := func(req sakubeconfig.Request) sakubeconfig.Objects {
			objs := sakubeconfig.Desired(req)
			objs.Claimed = sakubeconfig.ClaimedNamespaces(sakubeconfig.AccessPolicy{}.NamespaceClaims(req, nil))
			return objs
		}
		if err := f.PutNamespace(t.Context(), "kyma-existed"); err != nil {
			t.Fatal(err)
		}
		old := newRequest("existed", secrets("kyma-existed"))
		var nc *sakubeconfig.NamespaceNotCreatedError
		if err := f.Identities.Apply(t.Context(), f.Runtime, claimed(old)); !errors.As(err, &nc) || nc.Namespace != "kyma-existed" || nc.CreatedFor != "" {
			t.Errorf("Apply claiming an existing namespace: %v, want a NamespaceNotCreatedError for kyma-existed", err)
		}
		checkObjects(t, f, old.Owner, nil)

		fresh := newRequest("fresh", secrets("kyma-fresh"))
		for i := range 2 { // created for the request, then found as its own
			if err := f.Identities.Apply(t.Context(), f.Runtime, claimed(fresh)); err != nil {
				t.Fatalf("Apply #%d claiming a missing namespace: %v", i+1, err)
			}
		}
		checkObjects(t, f, fresh.Owner, claimed(fresh).Refs())
		other := newRequest("other", secrets("kyma-fresh"))
		if err := f.Identities.Apply(t.Context(), f.Runtime, claimed(other)); !errors.As(err, &nc) || nc.CreatedFor != fresh.Owner.String() {
			t.Errorf("Apply claiming another request's namespace: %v, want a NamespaceNotCreatedError naming %s", err, fresh.Owner)
		}
		checkObjects(t, f, other.Owner, nil)
	})

	t.Run("Apply refuses a ServiceAccount it did not create, and one of another request", func(t *testing.T) {
		f := newFixture(t)
		foreign := newRequest("foreign", podsIn("kyma-foreign"))
		if err := f.PutServiceAccount(t.Context(), foreign.ServiceAccount); err != nil {
			t.Fatal(err)
		}
		if err := f.Identities.Apply(t.Context(), f.Runtime, sakubeconfig.Desired(foreign)); !errors.Is(err, ports.ErrRuntimeObjectNotOwned) {
			t.Errorf("Apply over a customer's ServiceAccount: %v, want ErrRuntimeObjectNotOwned", err)
		}
		checkObjects(t, f, foreign.Owner, nil)

		first := newRequest("first", podsIn("kyma-first"))
		if err := f.Identities.Apply(t.Context(), f.Runtime, sakubeconfig.Desired(first)); err != nil {
			t.Fatal(err)
		}
		second := first
		second.Owner.Name = "second"
		if err := f.Identities.Apply(t.Context(), f.Runtime, sakubeconfig.Desired(second)); !errors.Is(err, ports.ErrRuntimeObjectNotOwned) {
			t.Errorf("Apply of another request's ServiceAccount: %v, want ErrRuntimeObjectNotOwned", err)
		}
		checkObjects(t, f, second.Owner, nil)
		checkObjects(t, f, first.Owner, sakubeconfig.Desired(first).Refs())
		if gone, err := f.Identities.Remove(t.Context(), f.Runtime, second.Owner); err != nil || !gone {
			t.Errorf("Remove of the refused request: %v %v", gone, err)
		}
		checkObjects(t, f, first.Owner, sakubeconfig.Desired(first).Refs())
	})

	t.Run("ClusterRole reads a ClusterRole with its non-resource URLs and aggregation; a missing one is ErrClusterRoleNotFound", func(t *testing.T) {
		f := newFixture(t)
		rules := []sakubeconfig.Rule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}},
			{NonResourceURLs: []string{"/healthz"}, Verbs: []string{"get"}}}
		if err := f.PutClusterRole(t.Context(), "contract-reader", sakubeconfig.ClusterRole{Rules: rules}); err != nil {
			t.Fatal(err)
		}
		got, err := f.Identities.ClusterRole(t.Context(), f.Runtime, "contract-reader")
		if err != nil || got.Aggregated || len(got.Rules) != 2 || !slices.Equal(got.Rules[0].Resources, []string{"configmaps"}) ||
			!slices.Equal(got.Rules[0].Verbs, []string{"get"}) || !slices.Equal(got.Rules[1].NonResourceURLs, []string{"/healthz"}) {
			t.Errorf("ClusterRole = %+v, %v", got, err)
		}
		if err := f.PutClusterRole(t.Context(), "contract-aggregated", sakubeconfig.ClusterRole{Aggregated: true}); err != nil {
			t.Fatal(err)
		}
		if got, err := f.Identities.ClusterRole(t.Context(), f.Runtime, "contract-aggregated"); err != nil || !got.Aggregated {
			t.Errorf("aggregated ClusterRole = %+v, %v", got, err)
		}
		if _, err := f.Identities.ClusterRole(t.Context(), f.Runtime, "contract-missing"); !errors.Is(err, ports.ErrClusterRoleNotFound) {
			t.Errorf("missing ClusterRole: %v, want ErrClusterRoleNotFound", err)
		}
	})

	t.Run("a runtime without admin kubeconfig or one that hangs fails fast", func(t *testing.T) {
		f := newFixture(t)
		req := newRequest("hang", podsIn("kyma-hang"))
		calls := map[string]func(rt ports.RuntimeRef) error{
			"Apply": func(rt ports.RuntimeRef) error { return f.Identities.Apply(t.Context(), rt, sakubeconfig.Desired(req)) },
			"IssueToken": func(rt ports.RuntimeRef) error {
				_, err := f.Identities.IssueToken(t.Context(), rt, req.ServiceAccount, time.Hour)
				return err
			},
			"Remove": func(rt ports.RuntimeRef) error {
				_, err := f.Identities.Remove(t.Context(), rt, req.Owner)
				return err
			},
			"ClusterRole": func(rt ports.RuntimeRef) error {
				_, err := f.Identities.ClusterRole(t.Context(), rt, "view")
				return err
			},
		}
		for name, call := range calls {
			if err := call(f.Missing); !errors.Is(err, ports.ErrNoRuntimeKubeconfig) {
				t.Errorf("%s without admin kubeconfig: %v, want ErrNoRuntimeKubeconfig", name, err)
			}
			start := time.Now()
			err := call(f.Hanging)
			if took := time.Since(start); took > f.CallBound {
				t.Errorf("%s on a hanging runtime blocked %s, more than %s", name, took, f.CallBound)
			}
			if !errors.Is(err, ports.ErrRuntimeUnreachable) {
				t.Errorf("%s on a hanging runtime: %v, want ErrRuntimeUnreachable", name, err)
			}
		}
	})
}

func checkObjects(t *testing.T, f IdentitiesFixture, owner sakubeconfig.Owner, want []sakubeconfig.ObjectRef) {
	t.Helper()
	got, err := f.Objects(t.Context(), owner)
	if err != nil {
		t.Fatalf("list objects of %s: %v", owner, err)
	}
	key := func(r sakubeconfig.ObjectRef) string { return r.String() }
	gotKeys, wantKeys := mapKeys(got, key), mapKeys(want, key)
	if !slices.Equal(gotKeys, wantKeys) {
		t.Errorf("objects of %s in the runtime:\n got %v\nwant %v", owner, gotKeys, wantKeys)
	}
}

func mapKeys[T any](in []T, key func(T) string) []string {
	out := make([]string, 0, len(in))
	for _, v := range in {
		out = append(out, key(v))
	}
	slices.Sort(out)
	return out
}
