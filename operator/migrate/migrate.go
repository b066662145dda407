// Package migrate takes over a landscape of the previous infrastructure manager (and of the provisioner before it)
// without changing anything anybody uses: for every Kyma resource of KEB it creates the GardenerCluster the
// runtime lacks (the operator then takes over KEB's kubeconfig Secret, which is never empty meanwhile) and, for
// its shoot, a Runtime generated back from the shoot (translate.RuntimeFromShoot, mapping.RuntimeCR) such that the
// operator adopts the shoot without changing it. What cannot be taken over safely is reported and left alone.
//
// It is the engine of `kim migrate` (operator/cmd/kim). It never writes to the garden (its client refuses every
// write but dry runs, guard.MigrationPolicy), never deletes anything, and writes only GardenerClusters and Runtimes
// in KCP, each with a plain create (never over an object someone else created).
package migrate

import (
	"context"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/migration"
	"github.com/kyma-project/kim/core/domain/shoot"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// Options of one migration run.
type Options struct {
	// Namespace is the KCP namespace of the Kyma resources, GardenerClusters, Runtimes and kubeconfig Secrets.
	Namespace string
	// GardenNamespace is the Gardener project namespace (garden-<project>).
	GardenNamespace string
	// Config is the shoot generation configuration the operator runs with (its ConfigMap); the Runtimes are
	// generated back with it and checked against it.
	Config shoot.Config
	// ACLConfigMap is shoot.acl.configMap of the operator configuration (nil: none): the control plane's addresses,
	// which the operator adds to every ACL, are read from it and not put into Runtimes.
	ACLConfigMap *client.ObjectKey
	// Accept lists differences a person accepts (--accept).
	Accept []migration.Acceptance
	// Apply writes; otherwise nothing is written (dry run).
	Apply bool
	// NoServerDryRun skips the gardener-apiserver's dry run of the operator's apply (the comparison alone decides).
	NoServerDryRun bool
	// Parallel is how many runtimes are examined at once (each may mean a connection to the runtime); default 8.
	Parallel int
	// Progress, when set, is told what the run does as it goes (a line each: the landscape read, every runtime
	// examined and applied), for people watching a long run.
	Progress func(format string, args ...any)
}

func (o Options) progress(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(format, args...)
	}
}

// Migrator runs migrations. Its clients decide what it may do: KCP reads Kyma resources, GardenerClusters,
// Runtimes, Secrets and ConfigMaps and creates GardenerClusters and Runtimes; Garden only reads (and dry-runs).
type Migrator struct {
	KCP    client.Client
	Garden client.Client
	// RuntimeClient connects to a runtime with its kubeconfig (to read its administrators); nil: client.New.
	RuntimeClient func(kubeconfig []byte) (client.Client, error)
	Options
}

// Run examines the landscape and, with Apply, creates what is missing. The error is for failures to read the
// landscape at all; problems of single runtimes (bad input, refused differences, failed writes) are in the report.
func (m *Migrator) Run(ctx context.Context) (migration.Report, error) {
	rep := migration.Report{DryRun: !m.Apply, Namespace: m.Namespace, GardenNamespace: m.GardenNamespace}
	land, err := m.observe(ctx)
	if err != nil {
		return rep, err
	}
	candidates := migration.Match(land.kymas, land.shootList, land.existing)
	m.progress("read the landscape: %d Kyma resources, %d shoots; %d runtimes to examine", len(land.kymas), len(land.shootList), len(candidates))
	items := make([]migration.Item, len(candidates))
	examined := make([]bool, len(candidates))
	parallel := m.Parallel
	if parallel <= 0 {
		parallel = 8
	}
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	var done atomic.Int64
	for i, c := range candidates {
		sem <- struct{}{}
		if ctx.Err() != nil {
			// Interrupted: what was examined is reported; the rest is not started.
			<-sem
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			items[i] = m.examine(ctx, land, c)
			examined[i] = ctx.Err() == nil
			m.progress("examined %d/%d: %s (shoot %s): %s", done.Add(1), len(candidates), items[i].RuntimeID, items[i].Shoot, items[i].Outcome)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		// An examination the interruption cut short decided on errors the runtime does not have: left out.
		rep.Interrupted = true
		kept := items[:0]
		for i := range items {
			if examined[i] {
				kept = append(kept, items[i])
			}
		}
		items = kept
	}
	if m.Apply {
		for i := range items {
			if ctx.Err() != nil {
				rep.Interrupted = true
				break
			}
			m.apply(ctx, land, &items[i])
			m.progress("applied %s: %s", items[i].RuntimeID, items[i].Outcome)
		}
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].RuntimeID < items[j].RuntimeID })
	rep.Items, rep.Summary = items, migration.Summarize(items)
	return rep, nil
}

// review folds a prepared Runtime (or the error preparing it) into f and classifies its differences; false when
// nothing was prepared.
func (m *Migrator) review(f *migration.Facts, prep prepared, err error) bool {
	c := f.Candidate
	if err != nil {
		f.RuntimeProblems = append(f.RuntimeProblems, migration.Problem{Reason: migration.ReasonNotExpressible, Message: err.Error()})
		return false
	}
	f.RuntimeProblems = append(f.RuntimeProblems, prep.problems...)
	f.SecretBinding, f.VerifiedBy = prep.secretBinding, prep.verifiedBy
	f.Differences, f.Blocked = migration.Review(c.RuntimeID, c.ShootName, prep.secretBinding, prep.differences, m.Accept)
	return true
}

// examine gathers the facts of one candidate and decides on it.
func (m *Migrator) examine(ctx context.Context, land *landscape, c migration.Candidate) migration.Item {
	f := migration.Facts{Candidate: c}
	if len(c.Problems) > 0 || (!c.NeedsRuntime && !c.NeedsGardenerCluster && !c.NeedsApproval) {
		return migration.Decide(f)
	}
	if c.NeedsApproval {
		prep, err := m.prepareExisting(ctx, land, c, land.live[c.Key()])
		m.review(&f, prep, err)
		return migration.Decide(f)
	}
	if c.NeedsGardenerCluster {
		if p := m.checkSecret(ctx, c); p != nil {
			f.AccessProblems = append(f.AccessProblems, *p)
		}
	}
	if c.NeedsRuntime {
		prep, err := m.prepareRuntime(ctx, land, c)
		if m.review(&f, prep, err) {
			if prep.runtime != nil && slices.ContainsFunc(f.Differences, func(d migration.Difference) bool { return d.Kind == migration.Accepted }) {
				// The accepted differences are the review the adopt-only mode waits for: the first apply is approved.
				prep.runtime.Annotations[imv1.AnnotationForcePatchReconciliation] = "true"
			}
			land.setRuntime(c.Key(), prep.runtime)
		}
	}
	return migration.Decide(f)
}
