package usecase_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/usecase"
)

var identitySequences = flag.Int("safety.identity-sequences", 300, "random sequences of the ServiceAccountKubeconfig property test")

// identityRuleChoices are what requests and runtime administrators put into rules: harmless ones and every shape
// the policy must refuse (credentials, token minting, escalation, impersonation, wildcards).
var identityRuleChoices = []sakubeconfig.Rule{
	{Namespaces: []string{"kyma-system"}, APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}},
	{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "watch"}},
	{Namespaces: []string{"team-a"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"*"}},
	{APIGroups: []string{""}, Resources: []string{"*/token"}, Verbs: []string{"create"}},
	{Namespaces: []string{"kube-system"}, APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, Verbs: []string{"create"}},
	{Namespaces: []string{"kube-system"}, APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get"}},
	{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}},
	{Namespaces: []string{"team-a"}, APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"}, Verbs: []string{"escalate"}},
	{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"*/scopes"}, Verbs: []string{"impersonate"}},
	{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}},
}

// identityModel drives one ServiceAccountKubeconfig through random changes of the request (its rules, the bound
// ClusterRole), of the runtime (the ClusterRole's rules, aggregation, reachability) and of time, reconciling whenever
// the controller would (at every requeue). Invariant: the request never holds objects in the runtime while its own
// rules are refused, nor longer than one check interval while its bound ClusterRole is refused; a refused request
// has no usable token of a ServiceAccount it created.
type identityModel struct {
	*identityWorld
	r        *rand.Rand
	roleBad  time.Time // when the bound ClusterRole last became refused (zero: it is allowed)
	role     sakubeconfig.ClusterRole
	next     time.Duration
	interval time.Duration
	down     bool // the runtime's API server does not answer
	failures int  // reconciles in a row that failed with the runtime reachable
}

const identityModelRole = "model-role"

func (m *identityModel) rules(n int) []sakubeconfig.Rule {
	out := make([]sakubeconfig.Rule, 0, n)
	for range n {
		out = append(out, identityRuleChoices[m.r.IntN(len(identityRuleChoices))])
	}
	return out
}

// putRole writes the runtime's ClusterRole as its administrators do.
func (m *identityModel) putRole(role sakubeconfig.ClusterRole) {
	ref := sakubeconfig.ObjectRef{Kind: sakubeconfig.KindClusterRole, Name: identityModelRole}
	m.ids.Put(m.rt, ref, nil, nil, role.Rules)
	m.ids.SetAggregated(m.rt, identityModelRole, role.Aggregated)
	m.role = role
	m.judgeRole()
}

// judgeRole notes when the bound ClusterRole became refused.
func (m *identityModel) judgeRole() {
	bad := m.req.ClusterRole != nil && m.uc.Access.CheckClusterRole(m.req, m.role) != nil
	switch {
	case !bad:
		m.roleBad = time.Time{}
	case m.roleBad.IsZero():
		m.roleBad = m.clock.Now()
	}
}

func (m *identityModel) reconcileAndCheck(did string) error {
	live := func(context.Context) (sakubeconfig.Request, usecase.IdentityState, bool, error) {
		return m.req, m.state(), true, nil
	}
	res, err := m.uc.Reconcile(context.Background(), m.req, m.state(), m.clock.Now(), live)
	if err != nil {
		if !m.down {
			// The controller retries; a failure that does not clear is a request stuck for good.
			if m.failures++; m.failures > 3 {
				return fmt.Errorf("after %s: reconcile fails again and again with the runtime reachable: %w", did, err)
			}
		}
		m.next = 10 * time.Second // the controller's retry; nothing can be removed while the runtime is down
		return nil
	}
	m.failures = 0
	m.note(res)
	m.next = res.RequeueAfter
	if err := m.holdsTooLong(did); err != nil {
		return err
	}
	if len(m.ids.Objects(m.rt, m.req.Owner)) == 0 || m.down {
		return nil
	}
	if err := m.uc.Access.CheckRequest(m.req); err != nil {
		return fmt.Errorf("after %s: the request holds %v in the runtime although its rules are refused (%w); result %s %s",
			did, m.ids.Objects(m.rt, m.req.Owner), err, res.Reason, res.Message)
	}
	return nil
}

// holdsTooLong: a bound ClusterRole refused for longer than one check interval (with the runtime reachable) must
// have cost the request its objects, whether or not anything made the controller look.
func (m *identityModel) holdsTooLong(did string) error {
	if m.down || m.roleBad.IsZero() || m.clock.Now().Sub(m.roleBad) <= m.interval+time.Second ||
		len(m.ids.Objects(m.rt, m.req.Owner)) == 0 {
		return nil
	}
	return fmt.Errorf("after %s: the bound ClusterRole has been refused since %s (%s ago), the request still holds %v",
		did, m.roleBad.Format(time.TimeOnly), m.clock.Now().Sub(m.roleBad), m.ids.Objects(m.rt, m.req.Owner))
}

// advance lets d pass, reconciling at every requeue as the controller does.
func (m *identityModel) advance(d time.Duration, did string) error {
	for m.next > 0 && m.next <= d {
		d -= m.next
		m.clock.Step(m.next)
		if err := m.reconcileAndCheck(did + " (requeue)"); err != nil {
			return err
		}
	}
	m.clock.Step(d)
	m.next -= d
	return m.holdsTooLong(did)
}

func (m *identityModel) step() (string, error) {
	switch m.r.IntN(7) {
	case 0: // the requester changes the rules
		m.req.Rules = m.rules(1 + m.r.IntN(2))
		m.req.Generation++
		m.judgeRole()
		return "new rules", m.reconcileAndCheck("new rules")
	case 1: // the requester binds the ClusterRole, or stops binding it
		if m.req.ClusterRole == nil {
			m.req.ClusterRole = &sakubeconfig.ClusterRoleRef{Name: identityModelRole}
		} else {
			m.req.ClusterRole = nil
		}
		m.req.Generation++
		m.judgeRole()
		return "clusterRole toggled", m.reconcileAndCheck("clusterRole toggled")
	case 2, 3: // the runtime's administrators change the ClusterRole; nothing tells the operator
		m.putRole(sakubeconfig.ClusterRole{Rules: m.rules(1 + m.r.IntN(2)), Aggregated: m.r.IntN(6) == 0})
		return "role changed in the runtime", nil
	case 4: // the runtime's API server goes down, or comes back (the controller's next retry then succeeds)
		m.down = !m.down
		m.ids.SetUnreachable(m.rt, m.down)
		if !m.down {
			if !m.roleBad.IsZero() {
				m.roleBad = m.clock.Now() // the interval starts again once the runtime answers
			}
			return "runtime back", m.reconcileAndCheck("runtime back")
		}
		return "runtime down", nil
	default:
		d := time.Duration(1+m.r.IntN(180)) * time.Minute
		return "time passes " + d.String(), m.advance(d, "time passes "+d.String())
	}
}

// TestSafetyIdentityProperties: random sequences against one least-privilege kubeconfig; the invariants of
// identityModel after every reconcile.
func TestSafetyIdentityProperties(t *testing.T) {
	reached := map[string]int{}
	for seq := range *identitySequences {
		w := newIdentityWorld(t, 2*time.Hour)
		w.uc.RoleRecheckInterval = 10 * time.Minute
		m := &identityModel{identityWorld: w, r: rand.New(rand.NewPCG(uint64(seq), 0x5a4b)), interval: w.uc.RoleRecheckInterval}
		m.putRole(sakubeconfig.ClusterRole{Rules: identityRuleChoices[:1]})
		var trace []string
		for n := range 60 {
			did, err := m.step()
			trace = append(trace, did)
			if err != nil {
				t.Fatalf("identity invariant broken (sequence %d, step %d): %v\nsteps: %v", seq, n, err, trace)
			}
			switch {
			case len(w.ids.Objects(w.rt, w.req.Owner)) > 0 && w.req.ClusterRole != nil:
				reached["held with a bound ClusterRole"]++
			case len(w.ids.Objects(w.rt, w.req.Owner)) > 0:
				reached["held"]++
			case w.uc.Access.CheckRequest(w.req) != nil:
				reached["refused"]++
			}
			if !m.roleBad.IsZero() && w.req.ClusterRole != nil {
				reached["bound role refused"]++
			}
		}
	}
	for _, k := range []string{"held", "held with a bound ClusterRole", "refused", "bound role refused"} {
		if reached[k] == 0 {
			t.Errorf("no step reached %q: %v", k, reached)
		}
	}
	t.Logf("%d sequences; states after steps: %v", *identitySequences, reached)
}
