package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/migration"
	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/internal/cli"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/testenv"
)

// TestMigrationIntegration takes over the previous landscape (buildPreviousLandscape) with the real `kim migrate`
// while the operator runs, as on a real switch-over: the dry run reports the plan and writes nothing; --apply
// creates the missing GardenerClusters and the Runtimes; the operator adopts every shoot without re-creating it and
// without changing its spec (only the shoot still on a SecretBinding is switched to its CredentialsBinding); a
// reader finds every kubeconfig Secret usable at every moment; every Runtime becomes Ready; bad input and the shoot
// whose adoption would change it are reported and left alone; a second --apply changes nothing. kim migrate talks
// to the garden through a counting proxy: its requests there are measured, not taken from its own counters.
func TestMigrationIntegration(t *testing.T) {
	env := sharedEnv(t)
	pl := buildPreviousLandscape(t, env)
	var goodIDs, goodShoots []string
	for _, r := range pl.good {
		goodIDs, goodShoots = append(goodIDs, r.id), append(goodShoots, r.shoot)
	}
	before := snapshotShoots(t, env, pl.project, append(slices.Clone(goodShoots), diffShoot, noIDShoot, ambiguousShoot))
	reader := startSecretReader(env, append(slices.Clone(goodIDs), pl.diff.id))
	env.startOperator(t)

	work := t.TempDir()
	proxy, gardenKubeconfig := proxyKubeconfig(t, env.Garden, work, "garden-through-proxy")
	args := []string{"--kubeconfig", env.kcpFile, "--garden-kubeconfig", gardenKubeconfig, "--config", goldenConfig}

	// The dry run: the plan, and nothing written anywhere.
	dry := runMigrateReport(t, append(slices.Clone(args), "--report", filepath.Join(work, "dry-run.json")))
	t.Logf("kim migrate --dry-run:\n%s", runMigrateText(t, args))
	checkPlan(t, pl, dry, migration.OutcomePlanned)
	if n := writes(proxy.take(), ""); n != 0 {
		t.Errorf("the dry run sent %d writes to the garden", n)
	}
	if got := countKCP(t, env); got.runtimes != 0 || got.gardenerClusters != len(pl.good)/2 {
		t.Errorf("after the dry run: %d Runtimes, %d GardenerClusters; want 0 and KEB's %d", got.runtimes, got.gardenerClusters, len(pl.good)/2)
	}

	// Ctrl-C during a dry run: the runtime finished is reported, the others are not started, and the command ends with
	// the interruption (exit 130).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var part bytes.Buffer
	err := execute(ctx, newMigrateCommand(&part, cancelOnLine{"examined 1/", cancel}), append(slices.Clone(args), "--parallel", "1", "-o", "json"), &part)
	var partial migration.Report
	if jsonErr := json.Unmarshal(part.Bytes(), &partial); !errors.Is(err, cli.ErrInterrupted) || jsonErr != nil {
		t.Errorf("interrupted kim migrate: %v, report %v (%s); want the interruption and a report", err, jsonErr, part.String())
	}
	if !partial.Interrupted || len(partial.Items) != 1 || len(dry.Items) < 2 {
		t.Errorf("interrupted after the first runtime: interrupted %t, %d items (the full run has %d); want one", partial.Interrupted, len(partial.Items), len(dry.Items))
	}
	if n := writes(proxy.take(), ""); n != 0 {
		t.Errorf("the interrupted dry run sent %d writes to the garden", n)
	}

	// --apply.
	start := time.Now()
	applied := runMigrateReport(t, append(slices.Clone(args), "--apply"))
	checkPlan(t, pl, applied, migration.OutcomeDone)
	gardenRequests := proxy.take()
	t.Logf("garden requests of kim migrate --apply (measured at the proxy): %v", gardenRequests)
	if n := writes(gardenRequests, ""); n != 0 {
		t.Errorf("kim migrate --apply sent %d writes to the garden (%d to shoots); want none", n, writes(gardenRequests, "shoots"))
	}

	// The operator adopts everything.
	for _, id := range goodIDs {
		waitRuntimeReady(t, env, id, 4*time.Minute)
	}
	readyAfter := time.Since(start)
	reads, failed, failures := reader.finish()
	t.Logf("MEASURED: %d runtimes Ready %.1fs after kim migrate --apply started; %d Secret reads, %d failed %v",
		len(goodIDs), readyAfter.Seconds(), reads, failed, failures)
	if failed != 0 {
		t.Errorf("%d of %d reads of kubeconfig Secrets found no usable kubeconfig: %v", failed, reads, failures)
	}
	after := snapshotShoots(t, env, pl.project, append(slices.Clone(goodShoots), diffShoot, noIDShoot, ambiguousShoot))
	recreated, changed := compareShoots(t, before, after, pl)
	t.Logf("MEASURED: %d shoots re-created, %d spec fields changed beyond the credentials binding switch", recreated, changed)
	checkAdopted(t, env, pl)

	// A second --apply changes nothing.
	again := runMigrateReport(t, append(slices.Clone(args), "--apply"))
	if s := again.Summary; s.GardenerClusters != 0 || s.RuntimesCreated != 0 || s.AlreadyMigrated != len(pl.good) || s.Failed != 0 {
		t.Errorf("second --apply: %+v; want nothing created and %d already migrated", s, len(pl.good))
	}
	if n := writes(proxy.take(), ""); n != 0 {
		t.Errorf("the second --apply sent %d writes to the garden", n)
	}
	if got := countKCP(t, env); got.runtimes != len(pl.good) || got.gardenerClusters != len(pl.good)+1 {
		t.Errorf("after the second --apply: %d Runtimes, %d GardenerClusters; want %d and %d", got.runtimes, got.gardenerClusters, len(pl.good), len(pl.good)+1)
	}
	checkAdoptOnly(t, env, pl, args, proxy)
}

// checkAdoptOnly: a Runtime that exists at the switch-over (KEB created it for the previous manager) for the shoot
// whose rendering differs is adopted, but the operator's first apply waits (adopt-only mode): the shoot keeps its
// spec, the Runtime says why. kim migrate reports the differences of the existing Runtime; --apply with the
// difference accepted approves it once, and the operator applies it.
func checkAdoptOnly(t *testing.T, env *testEnv, pl *previousLandscape, args []string, proxy *countingProxy) {
	t.Helper()
	ctx := context.Background()
	id := pl.diff.id
	before := &gardencorev1beta1.Shoot{}
	if err := env.GardenClient.Get(ctx, client.ObjectKey{Namespace: pl.project, Name: pl.diff.shoot}, before); err != nil {
		t.Fatal(err)
	}
	if err := env.KCPClient.Create(ctx, pl.diff.keb.DeepCopy()); err != nil {
		t.Fatalf("create KEB's Runtime %s: %v", id, err)
	}
	testenv.Eventually(t, 2*time.Minute, "Runtime "+id+" waits for the review", func() (bool, string) {
		rt := &imv1.Runtime{}
		if err := env.KCPClient.Get(ctx, client.ObjectKey{Namespace: kcpNamespace, Name: id}, rt); err != nil {
			return false, err.Error()
		}
		ready := meta.FindStatusCondition(rt.Status.Conditions, imv1.ConditionReady)
		// Its shoot carries no runtime-generation annotation: the generation it runs is unknown, so the state says
		// the Runtime waits; the hold is also its own condition.
		return ready != nil && ready.Reason == string(lifecycle.ReasonAdoptionReviewRequired) &&
			meta.IsStatusConditionTrue(rt.Status.Conditions, lifecycle.ConditionAdoptionReviewRequired), fmt.Sprintf("%s %v", rt.Status.State, rt.Status.Conditions)
	})
	s := &gardencorev1beta1.Shoot{}
	if err := env.GardenClient.Get(ctx, client.ObjectKey{Namespace: pl.project, Name: pl.diff.shoot}, s); err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(s.Spec, before.Spec) || gardener.TakenOver(s) || s.Labels[wire.LabelManagedBy] != wire.ManagedByValue {
		t.Fatalf("held shoot %s: spec changed %v, taken over %v, managed-by %q; want adopted and unchanged", s.Name,
			!apiequality.Semantic.DeepEqual(s.Spec, before.Spec), gardener.TakenOver(s), s.Labels[wire.LabelManagedBy])
	}

	item := func(rep migration.Report) migration.Item {
		for _, it := range rep.Items {
			if it.RuntimeID == id {
				return it
			}
		}
		t.Fatalf("runtime %s is not in the report", id)
		return migration.Item{}
	}
	if it := item(runMigrateReport(t, slices.Clone(args))); it.Outcome != migration.OutcomeRefused || !hasBlocking(it, ".spec.kubernetes.kubelet") || !hasReason(it, migration.ReasonDifferences) {
		t.Errorf("dry run for the held Runtime: %s, problems %v, differences %v; want Refused on .spec.kubernetes.kubelet", it.Outcome, it.Problems, it.Differences)
	}
	approved := runMigrateReport(t, append(slices.Clone(args), "--apply", "--accept", id+":.spec.kubernetes.kubelet"))
	if it := item(approved); it.Outcome != migration.OutcomeDone || len(it.Actions) != 1 || it.Actions[0].Kind != migration.ApproveTakeover || !it.Actions[0].Done {
		t.Fatalf("--apply with the difference accepted: %s, actions %+v, problems %v, differences %v; want Done with %s", it.Outcome, it.Actions, it.Problems, it.Differences, migration.ApproveTakeover)
	}
	if n := writes(proxy.take(), ""); n != 0 {
		t.Errorf("the approval sent %d writes to the garden", n)
	}
	waitRuntimeReady(t, env, id, 3*time.Minute)
	if err := env.GardenClient.Get(ctx, client.ObjectKey{Namespace: pl.project, Name: pl.diff.shoot}, s); err != nil {
		t.Fatal(err)
	}
	rt := &imv1.Runtime{}
	if err := env.KCPClient.Get(ctx, client.ObjectKey{Namespace: kcpNamespace, Name: id}, rt); err != nil {
		t.Fatal(err)
	}
	kubeletChanged := !apiequality.Semantic.DeepEqual(s.Spec.Kubernetes.Kubelet, before.Spec.Kubernetes.Kubelet)
	if !kubeletChanged || !gardener.TakenOver(s) || rt.Annotations[imv1.AnnotationForcePatchReconciliation] != "" {
		t.Errorf("after the approval: kubelet changed %v, taken over %v, force-patch %q; want applied, taken over, the approval consumed",
			kubeletChanged, gardener.TakenOver(s), rt.Annotations[imv1.AnnotationForcePatchReconciliation])
	}
}

// cancelOnLine is a progress writer that cancels the run (as Ctrl-C does) on the first line holding a text.
type cancelOnLine struct {
	text   string
	cancel context.CancelFunc
}

func (c cancelOnLine) Write(p []byte) (int, error) {
	if strings.Contains(string(p), c.text) {
		c.cancel()
	}
	return len(p), nil
}

func runMigrateReport(t *testing.T, args []string) migration.Report {
	t.Helper()
	var out bytes.Buffer
	if err := runMigrate(context.Background(), append(args, "-o", "json"), &out); err != nil {
		t.Fatalf("kim migrate %v: %v\n%s", args, err, out.String())
	}
	var rep migration.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("kim migrate -o json is not a report: %v\n%s", err, out.String())
	}
	return rep
}

func runMigrateText(t *testing.T, args []string) string {
	t.Helper()
	var out bytes.Buffer
	if err := runMigrate(context.Background(), args, &out); err != nil {
		t.Fatalf("kim migrate %v: %v", args, err)
	}
	return out.String()
}

// checkPlan: every good runtime gets a Runtime (and a GardenerCluster where KEB created none), the shoot on a
// SecretBinding is switched by the operator, the shoot whose adoption would change it is refused (its GardenerCluster
// is still created), and bad input is skipped.
func checkPlan(t *testing.T, pl *previousLandscape, rep migration.Report, want migration.Outcome) {
	t.Helper()
	byID := map[string]migration.Item{}
	for _, it := range rep.Items {
		byID[it.RuntimeID] = it
	}
	for _, r := range pl.good {
		it, ok := byID[r.id]
		if !ok {
			t.Errorf("runtime %s is not in the report", r.id)
			continue
		}
		kinds := []migration.ActionKind{}
		for _, a := range it.Actions {
			kinds = append(kinds, a.Kind)
			if want == migration.OutcomeDone && !a.ByOperator && !a.Done {
				t.Errorf("runtime %s: action %s not done: %s", r.id, a.Kind, a.Error)
			}
		}
		wantKinds := []migration.ActionKind{}
		if !r.kebGC {
			wantKinds = append(wantKinds, migration.CreateGardenerCluster)
		}
		wantKinds = append(wantKinds, migration.CreateRuntime)
		if r.binding {
			wantKinds = append(wantKinds, migration.SwitchCredentialsBinding)
		}
		if it.Outcome != want || !slices.Equal(kinds, wantKinds) {
			t.Errorf("runtime %s (shoot %s): %s %v, want %s %v; problems %v, differences %v", r.id, r.shoot, it.Outcome, kinds, want, wantKinds, it.Problems, it.Differences)
		}
		for _, d := range it.Differences {
			if d.Kind == migration.Blocking || d.Kind == migration.Accepted {
				t.Errorf("runtime %s: adoption would change %s (%s -> %s)", r.id, d.Path, d.Have, d.Want)
			}
		}
		wantBy := translate.PredecessorInfrastructureManager
		if r.provisioner {
			wantBy = translate.PredecessorProvisioner
		}
		if it.CreatedBy != string(wantBy) {
			t.Errorf("runtime %s: created by %q, want %q", r.id, it.CreatedBy, wantBy)
		}
	}
	if it := byID[pl.diff.id]; it.Outcome != migration.OutcomeRefused || !hasBlocking(it, ".spec.kubernetes.kubelet") {
		t.Errorf("the shoot whose adoption changes it: %s, differences %v; want Refused on .spec.kubernetes.kubelet", it.Outcome, it.Differences)
	}
	for id, reason := range map[string]migration.Reason{pl.noID: migration.ReasonShootWithoutRuntimeID, pl.ambiguous: migration.ReasonAmbiguous,
		pl.ambiguous2: migration.ReasonAmbiguous, pl.unlabeled: migration.ReasonLabelsMissing} {
		it := byID[id]
		if it.Outcome != migration.OutcomeSkipped || len(it.Actions) != 0 || !hasReason(it, reason) {
			t.Errorf("bad input %s: %s, actions %v, problems %v; want Skipped with %s and no actions", id, it.Outcome, it.Actions, it.Problems, reason)
		}
	}
	s := rep.Summary
	if s.RuntimesCreated != len(pl.good) || s.GardenerClusters != len(pl.good)/2+1 || s.CredentialsBindingSwitch != 1 || s.Skipped != 4 || s.Refused != 1 || s.Failed != 0 {
		t.Errorf("summary %+v", s)
	}
}

func hasBlocking(it migration.Item, prefix string) bool {
	for _, d := range it.Differences {
		if d.Kind == migration.Blocking && strings.HasPrefix(d.Path, prefix) {
			return true
		}
	}
	return false
}

func hasReason(it migration.Item, r migration.Reason) bool {
	for _, p := range it.Problems {
		if p.Reason == r {
			return true
		}
	}
	return false
}

type kcpCounts struct{ runtimes, gardenerClusters int }

func countKCP(t *testing.T, env *testEnv) kcpCounts {
	t.Helper()
	var rts imv1.RuntimeList
	var gcs imv1.GardenerClusterList
	if err := env.KCPClient.List(context.Background(), &rts, client.InNamespace(kcpNamespace)); err != nil {
		t.Fatal(err)
	}
	if err := env.KCPClient.List(context.Background(), &gcs, client.InNamespace(kcpNamespace)); err != nil {
		t.Fatal(err)
	}
	return kcpCounts{len(rts.Items), len(gcs.Items)}
}

func waitRuntimeReady(t *testing.T, env *testEnv, id string, timeout time.Duration) {
	t.Helper()
	testenv.Eventually(t, timeout, "Runtime "+id+" Ready", func() (bool, string) {
		rt := &imv1.Runtime{}
		if err := env.KCPClient.Get(context.Background(), client.ObjectKey{Namespace: kcpNamespace, Name: id}, rt); err != nil {
			return false, err.Error()
		}
		msg := fmt.Sprintf("%s %v", rt.Status.State, rt.Status.Conditions)
		return rt.Status.State == imv1.RuntimeStateReady && rt.Status.ObservedGeneration == rt.Generation, msg
	})
}

// checkAdopted: every good shoot is managed by the operator for its runtime, every GardenerCluster is Ready, and the
// administrators the previous system had are bound by the operator in the runtime. Nothing is written for bad input.
func checkAdopted(t *testing.T, env *testEnv, pl *previousLandscape) {
	t.Helper()
	ctx := context.Background()
	for _, r := range pl.good {
		s := &gardencorev1beta1.Shoot{}
		if err := env.GardenClient.Get(ctx, client.ObjectKey{Namespace: pl.project, Name: r.shoot}, s); err != nil {
			t.Fatal(err)
		}
		if id, _ := translate.RuntimeIDOf(s.Annotations); s.Labels[wire.LabelManagedBy] != wire.ManagedByValue || id != r.id {
			t.Errorf("shoot %s: managed-by %q, runtime %q; want adopted for %s", r.shoot, s.Labels[wire.LabelManagedBy], id, r.id)
		}
		gc := &imv1.GardenerCluster{}
		if err := env.KCPClient.Get(ctx, client.ObjectKey{Namespace: kcpNamespace, Name: r.id}, gc); err != nil || gc.Status.State != imv1.GardenerClusterStateReady {
			t.Errorf("GardenerCluster %s: %v, state %q", r.id, err, gc.Status.State)
		}
	}
	c, err := env.RuntimeClient(pl.project, pl.good[0].shoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, admin := range fixtureAdmins {
		b := &rbacv1.ClusterRoleBinding{}
		if err := c.Get(ctx, client.ObjectKey{Name: runtimeconfig.AdminBindingName(admin)}, b); err != nil {
			t.Errorf("administrator %s is not bound by the operator: %v", admin, err)
		}
	}
	for _, id := range []string{pl.noID, pl.ambiguous, pl.ambiguous2, pl.unlabeled, pl.diff.id} {
		if err := env.KCPClient.Get(ctx, client.ObjectKey{Namespace: kcpNamespace, Name: id}, &imv1.Runtime{}); err == nil {
			t.Errorf("a Runtime %s was created for bad input or a refused shoot", id)
		}
	}
	for _, id := range []string{pl.noID, pl.ambiguous, pl.ambiguous2, pl.unlabeled} {
		if err := env.KCPClient.Get(ctx, client.ObjectKey{Namespace: kcpNamespace, Name: id}, &imv1.GardenerCluster{}); err == nil {
			t.Errorf("a GardenerCluster %s was created for bad input", id)
		}
	}
}
