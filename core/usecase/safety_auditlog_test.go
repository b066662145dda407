package usecase_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

var tenantSequences = flag.Int("safety.tenant-sequences", 2000, "random sequences of the audit log tenant property test")

// tenantWorld is the audit log pool with the runtimes, clusters and KCP Secrets around it; the claimer and the
// keeper act on it as the controllers do.
type tenantWorld struct {
	pool     *fake.AuditLogPool
	runtimes *fake.AuditLogRuntimes
	shoots   shootsByName
	kcp      *fake.KCPSecrets
	writer   *fake.RuntimeSecrets
	claimer  *usecase.AuditLogClaimer
	keeper   *usecase.AuditLogKeeper
	// alive: the runtimes that exist in the KCP; crash: the next claim write fails (a crash between reserve and claim).
	alive map[string]bool
	crash bool
	// holder is the runtime each tenant was first assigned to: a tenant serves one runtime, ever.
	holder map[string]string
	// released are the tenants seen orphaned.
	released map[string]bool
	// ineligible are tenants no runtime may get: not approved by the audit log manager, or of another region.
	ineligible map[string]bool
}

// shootsByName is a ports.ShootReader of shoots that exist, by name, for the runtime they belong to.
type shootsByName map[string]string

func (s shootsByName) Get(_ context.Context, name string, _ ports.ReadMode) (shootstate.Shoot, error) {
	id, ok := s[name]
	if !ok {
		return shootstate.Shoot{}, nil
	}
	return shootstate.Shoot{Name: name, Exists: true, Marks: shootstate.Marks{Managed: true, RuntimeID: id}}, nil
}

func (s shootsByName) Current(context.Context, string) (*shoot.Current, error) { return nil, nil }

func (s shootsByName) ListManaged(ctx context.Context) ([]shootstate.Shoot, error) {
	var out []shootstate.Shoot
	for name := range s {
		sh, _ := s.Get(ctx, name, ports.ReadCached)
		out = append(out, sh)
	}
	return out, nil
}

var tenantRuntimes = []string{"rt-a", "rt-b", "rt-c", "rt-d"}

func newTenantWorld() *tenantWorld {
	w := &tenantWorld{pool: fake.NewAuditLogPool(), runtimes: fake.NewAuditLogRuntimes(), shoots: shootsByName{},
		kcp: fake.NewKCPSecrets(), writer: fake.NewRuntimeSecrets(tenantRuntimes...), alive: map[string]bool{}, holder: map[string]string{}, released: map[string]bool{},
		ineligible: map[string]bool{}}
	w.pool.Err = func(method string) error {
		if method == "Claim" && w.crash {
			w.crash = false
			return fmt.Errorf("the operator crashed before the claim: %w", ports.ErrTransient)
		}
		return nil
	}
	w.claimer = &usecase.AuditLogClaimer{Pool: w.pool}
	w.keeper = &usecase.AuditLogKeeper{Pool: w.pool, Runtimes: w.runtimes, Shoots: w.shoots, ShootList: w.shoots, Credentials: w.kcp, Writer: w.writer,
		CredentialsPolicy: auditlog.CredentialsPolicy{Namespace: modelNamespace, OperatorSecrets: []string{"kim-gardener-kubeconfig"}}}
	return w
}

// step plays one random action; it returns what it did.
func (w *tenantWorld) step(ctx context.Context, r *rand.Rand, n int) (string, error) {
	id := tenantRuntimes[r.IntN(len(tenantRuntimes))]
	switch r.IntN(9) {
	case 8: // the audit log manager has a tenant it has not approved, or one of another region
		t := poolTenant(fmt.Sprintf("t-%03d", n))
		switch r.IntN(4) {
		case 0:
			t.Regions = []string{"us-east-1"}
		case 1:
			t.State = auditlog.StatePending
		case 2:
			t.State = auditlog.StateUnrecoverableError
		default:
			t.State = auditlog.StateOrphaned
		}
		w.pool.Put(t)
		w.ineligible[t.Name] = true
		w.kcp.SetLabelled(t.ReadCredentials, map[string]string{auditlog.LabelReadCredentials: t.Name},
			map[string][]byte{"clientSecret": []byte("secret-of-" + t.Name)})
		return "add ineligible tenant " + t.Name, nil
	case 7: // someone who may write AuditLogs adds one naming another tenant's read credentials or an admin kubeconfig
		t := poolTenant(fmt.Sprintf("t-%03d", n))
		if others, _ := w.pool.List(ctx, ports.ReadLive); len(others) > 0 && r.IntN(2) == 0 {
			t.ReadCredentials = others[r.IntN(len(others))].ReadCredentials
		} else {
			t.ReadCredentials = auditlog.SecretRef{Namespace: modelNamespace, Name: "kubeconfig-" + id}
			w.kcp.SetLabelled(t.ReadCredentials, map[string]string{auditlog.LabelReadCredentials: t.Name},
				map[string][]byte{"clientSecret": []byte("admin-kubeconfig-of-" + id)})
		}
		w.pool.Put(t)
		return "add forged tenant " + t.Name + " naming " + t.ReadCredentials.Name, nil
	case 0: // the landscape adds a tenant with read credentials of its own
		t := poolTenant(fmt.Sprintf("t-%03d", n))
		w.pool.Put(t)
		w.kcp.SetLabelled(t.ReadCredentials, map[string]string{auditlog.LabelReadCredentials: t.Name},
			map[string][]byte{"clientSecret": []byte("secret-of-" + t.Name)})
		return "add tenant " + t.Name, nil
	case 1: // KEB creates the Runtime (again: a re-created runtime keeps its ID) and Gardener its cluster
		w.alive[id] = true
		w.runtimes.Set(id, ports.AuditLogOwner{Exists: true, Enabled: true, Provisioned: true, ShootName: "c-" + id})
		w.shoots["c-"+id] = id
		return "create " + id, nil
	case 2, 3: // the Runtime controller claims
		if !w.alive[id] {
			return "claim " + id + " (absent)", nil
		}
		w.crash = r.IntN(4) == 0
		res, err := w.claimer.Claim(ctx, claimReq(id), reapStart)
		w.crash = false
		if errors.Is(err, ports.ErrTransient) {
			return "claim " + id + " (crashed)", nil
		}
		if err == nil && res.Tenant != nil {
			// What the shoot gets: it must be a tenant the pool holds for this runtime, not one given back.
			if t, ok := w.pool.Tenant(res.Tenant.Name); !ok || t.AssignedTo != id || t.Orphaned {
				return "claim " + id, fmt.Errorf("runtime %s was handed tenant %s, which the pool holds as %+v", id, res.Tenant.Name, t)
			}
		}
		return "claim " + id, err
	case 4: // KEB deletes the Runtime
		delete(w.alive, id)
		w.runtimes.Delete(id)
		return "delete " + id, nil
	case 5: // the grace window ends and Gardener deletes the cluster
		if w.alive[id] {
			return "cluster of " + id + " kept (runtime alive)", nil
		}
		delete(w.shoots, "c-"+id)
		return "cluster of " + id + " gone", nil
	default: // the audit log manager marks claimed tenants Assigned; the keeper looks after every tenant
		tenants, _ := w.pool.List(ctx, ports.ReadLive)
		for _, t := range tenants {
			if t.AssignedTo != "" && t.State.Approved() && r.IntN(4) != 0 {
				w.pool.SetState(t.Name, auditlog.StateAssigned)
			}
		}
		tenants, _ = w.pool.List(ctx, ports.ReadLive)
		for _, t := range tenants {
			if _, err := w.keeper.Keep(ctx, t.Name, reapStart); err != nil {
				return "keep", err
			}
		}
		return "keep all", nil
	}
}

// check: a tenant serves one runtime ever; no runtime holds two; a tenant is given back only once its runtime and
// cluster are gone; the read credentials in a runtime are those of the tenant assigned to it.
func (w *tenantWorld) check(ctx context.Context) error {
	tenants, err := w.pool.List(ctx, ports.ReadLive)
	if err != nil {
		return err
	}
	held := map[string]string{}
	creds := map[string]string{}
	for _, t := range tenants {
		// A reservation alone serves nobody (the cluster gets the tenant only once it is claimed) and may be given
		// back; a tenant once assigned is never reserved for or assigned to another runtime.
		for _, id := range []string{t.ReservedFor, t.AssignedTo} {
			if first, ok := w.holder[t.Name]; ok && id != "" && first != id {
				return fmt.Errorf("tenant %s served runtime %s and now %s", t.Name, first, id)
			}
		}
		if w.ineligible[t.Name] && (t.AssignedTo != "" || t.ReservedFor != "") {
			return fmt.Errorf("tenant %s (state %s, regions %v) was taken for runtime %s%s, though no runtime of eu-central-1 may get it",
				t.Name, t.State, t.Regions, t.ReservedFor, t.AssignedTo)
		}
		if t.Orphaned && t.State != auditlog.StateAssigned {
			return fmt.Errorf("tenant %s released in state %s: the audit log manager accepts spec.orphaned only when Assigned", t.Name, t.State)
		}
		if t.AssignedTo != "" {
			w.holder[t.Name] = t.AssignedTo
		}
		if t.AssignedTo == "" {
			continue
		}
		creds[t.AssignedTo] = "secret-of-" + t.Name
		if t.Orphaned {
			// Judged when it happens: the runtime may be created again under its ID later.
			if !w.released[t.Name] && (w.alive[t.AssignedTo] || w.shoots["c-"+t.AssignedTo] != "") {
				return fmt.Errorf("tenant %s released while runtime %s or its cluster exists", t.Name, t.AssignedTo)
			}
			w.released[t.Name] = true
			continue
		}
		if other, dup := held[t.AssignedTo]; dup {
			return fmt.Errorf("runtime %s holds tenants %s and %s", t.AssignedTo, other, t.Name)
		}
		held[t.AssignedTo] = t.Name
	}
	for _, id := range tenantRuntimes {
		d, ok := w.writer.Secret(id, usecase.AuditLogCredentialsNamespace, usecase.AuditLogCredentialsName)
		if ok && string(d["clientSecret"]) != creds[id] {
			return fmt.Errorf("runtime %s holds read credentials %q, its tenant's are %q", id, d["clientSecret"], creds[id])
		}
	}
	return nil
}

// TestSafetyTenantProperties: random sequences of the landscape (tenants added), KEB (Runtimes created, deleted,
// created again under the same ID), Gardener (clusters gone after the window), crashes between reserve and claim,
// and the claimer and keeper; the tenant invariants (check) after every step.
func TestSafetyTenantProperties(t *testing.T) {
	ctx := context.Background()
	exercised := map[string]int{}
	for seq := range *tenantSequences {
		r := rand.New(rand.NewPCG(uint64(seq), 0x7e4a47))
		w := newTenantWorld()
		var trace []string
		for n := range 40 {
			did, err := w.step(ctx, r, n)
			trace = append(trace, did)
			if err == nil {
				err = w.check(ctx)
			}
			if err != nil {
				t.Fatalf("tenant invariant broken (sequence %d, step %d): %v\nsteps:\n%v", seq, n, err, trace)
			}
		}
		tenants, _ := w.pool.List(ctx, ports.ReadLive)
		for _, tn := range tenants {
			switch {
			case tn.Orphaned:
				exercised["released"]++
			case tn.AssignedTo != "":
				exercised["assigned"]++
			case w.ineligible[tn.Name]:
				exercised["ineligible left free"]++
			}
		}
		for _, id := range tenantRuntimes {
			if _, ok := w.writer.Secret(id, usecase.AuditLogCredentialsNamespace, usecase.AuditLogCredentialsName); ok {
				exercised["credentials copied"]++
			}
		}
	}
	// The invariants mean nothing if the sequences never reach the states they are about.
	for _, k := range []string{"released", "assigned", "credentials copied", "ineligible left free"} {
		if exercised[k] == 0 {
			t.Errorf("no sequence reached %q: %v", k, exercised)
		}
	}
	t.Logf("%d sequences; end states: %v", *tenantSequences, exercised)
}
