package e2e

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/sandbox/gardenlet"
	"github.com/kyma-project/kim/test/testenv"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// Deletion windows of the test configuration, by broker plan (see writeConfig). The aws window is short so the
// reaper's deletion is observed; the default (azure, gcp) is long so recovery and name reuse happen inside it.
const (
	awsWindow     = 30 * time.Second
	defaultWindow = time.Hour
	// provisionTimeout bounds waits for a whole provisioning. Each shoot has its own runtime API server here, and
	// their starts are serialised: on a machine with a load of 20, four shoots of parallel scenarios waited four
	// minutes at "Create Processing 0 %" (the gardenlet's description now says when a shoot waits for its server).
	provisionTimeout = 8 * time.Minute
	// stepTimeout bounds waits for a single Gardener operation and the operator's reaction.
	stepTimeout = 2 * time.Minute
	// bindingHold is deletion.bindingReleaseHold of the test configuration: short, so a sibling's binding is seen
	// coming back, and long enough for KEB's step double to run inside it right after the Runtime is gone.
	bindingHold = 30 * time.Second
)

func deletionConfig(freeze bool) map[string]any {
	return map[string]any{
		"defaultGracePeriod": defaultWindow.String(),
		// gcp: the shoot-name reuse scenario waits for the old cluster's window, which is never shortened.
		"planGracePeriods":   map[string]any{"trial": "0s", "free": "0s", "aws": awsWindow.String(), "gcp": awsWindow.String()},
		"maxGracePeriod":     "720h",
		"forceDeletionAfter": forceDeletionAfter.String(),
		"freeze":             freeze,
		"bindingReleaseHold": bindingHold.String(),
	}
}

// TestRuntimeLifecycleIntegration runs the operator on garden-in-a-box with KEB-shaped Runtimes of several plans
// through provisioning, updates, Gardener failures, drift correction, the patch annotations, enforceSeedLocation
// (issue 6) and safe deletion, recovery, shoot-name reuse, force-deletion and the emergency brake (issue 7). One
// environment is shared; independent scenarios run in parallel.
func TestRuntimeLifecycleIntegration(t *testing.T) {
	w := startWorld(t, theWorld)
	// Inside the runtimes: a short drift period so objects deleted by hand come back within the test, and a short
	// timeout so a paused runtime API server is reported quickly, and a short backoff cap so it is configured soon
	// after it answers again, however many times it failed meanwhile.
	w.runtimeSection = map[string]any{"driftPeriod": runtimeDriftPeriod.String(), "timeout": runtimeTimeout.String(),
		"maxRetryDelay": runtimeMaxRetryDelay.String()}
	stop := w.startOperator(t, w.writeConfig(t, "operator", deletionConfig(false)))

	trial := keb.LoadRuntime(t, testenv.RepoRoot()+"/operator/api/v1/testdata/keb-runtime-trial.yaml")
	aws, azure, gcp := keb.GoldenRuntime(t, "aws"), keb.GoldenRuntime(t, "azure"), keb.GoldenRuntime(t, "gcp")

	t.Run("ProvisionPlans", func(t *testing.T) {
		w.provisionPlans(t, trial, aws, azure, gcp)
	})
	if t.Failed() {
		return
	}
	t.Run("AfterReady", func(t *testing.T) {
		concurrently(t, append([]scenario{
			{"UpdatesThenDeletionAfterWindow", func(t *testing.T) {
				w.updates(t, aws)
				if !t.Failed() {
					w.deletionAfterWindow(t, aws)
				}
			}},
			{"NonRetryableFailureThenRecoveryInWindow", func(t *testing.T) {
				w.nonRetryableFailure(t, azure)
				if !t.Failed() {
					w.recoveryInWindow(t, azure)
				}
			}},
			{"RetryableFailureThenShootNameReuse", func(t *testing.T) {
				w.retryableFailure(t, gcp)
				if !t.Failed() {
					w.shootNameReuse(t, gcp)
				}
			}},
			{"SameIDRecreateTakesClusterBack", func(t *testing.T) { w.sameIDRecreateTakesClusterBack(t, azure) }},
			{"KEBBindingReleasedThenRestored", func(t *testing.T) { w.bindingReleasedThenRestored(t, azure) }},
			{"KEBBindingReleasedUntilTheShootIsGone", func(t *testing.T) { w.bindingReleasedUntilTheShootIsGone(t, aws) }},
			{"KEBBindingReturnedToTheSibling", func(t *testing.T) { w.bindingReturnedToTheSibling(t, azure) }},
			{"GardenerClusterConfusedDeputy", func(t *testing.T) { w.confusedDeputy(t, trial) }},
		}, append(append(w.patchingScenarios(trial), w.landscapeScenarios(trial)...), w.runtimeConfigScenarios(trial, aws)...)...)...)
	})
	t.Run("StaleStateNearTheDeadline", func(t *testing.T) { w.staleStateNearTheDeadline(t, aws) })
	stop()
	t.Run("EmergencyBrake", func(t *testing.T) {
		w.startOperator(t, w.writeConfig(t, "operator-frozen", deletionConfig(true)))
		w.emergencyBrake(t, trial)
	})
}

// provisionPlans creates the Runtimes as KEB does and checks them at Ready (issue 6, acceptance 1).
func (w *world) provisionPlans(t *testing.T, runtimes ...*imv1.Runtime) {
	ctx := context.Background()
	for _, rt := range runtimes {
		if err := w.kcp.Create(ctx, rt.DeepCopy()); err != nil {
			t.Fatalf("create runtime %s: %v", rt.Name, err)
		}
	}
	var wg sync.WaitGroup
	for _, rt := range runtimes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(rt.Labels[imv1.LabelBrokerPlanName], func(t *testing.T) {
				w.checkProvisioned(t, rt)
			})
		}()
	}
	wg.Wait()
	// Gardener changes shoots itself while creating them (seed binding, defaults, completed versions); none of
	// that may be taken for drift. One provisioning applies the shoot once, and its authentication ConfigMap.
	_, byVerb := testenv.GardenerRequests(t)
	if applies, limit := byVerb["apply/success"]+byVerb["apply/error"], 2*len(runtimes); applies > float64(limit) {
		t.Errorf("%v apply requests to Gardener for %d provisionings, want at most %d (shoot and ConfigMap once each)", applies, len(runtimes), limit)
	}
	// A create that finds the shoot already there (a cache that had not seen it yet) is counted as a create too:
	// each one also re-applied the ConfigMap (issue 14, P1).
	if creates := byVerb["create/success"] + byVerb["create/error"]; creates > float64(len(runtimes)) {
		t.Errorf("%v create requests to Gardener for %d provisionings, want at most one each", creates, len(runtimes))
	}
}

func (w *world) checkProvisioned(t *testing.T, want *imv1.Runtime) {
	sawPending := false
	var rt *imv1.Runtime
	testenv.Eventually(t, provisionTimeout, "runtime "+want.Name+" Ready", func() (bool, string) {
		rt = w.runtime(t, want.Name)
		if rt != nil && rt.Status.State == imv1.RuntimeStatePending {
			sawPending = true
		}
		return rt != nil && rt.Status.State == imv1.RuntimeStateReady, describe(rt)
	})
	if !sawPending {
		t.Errorf("runtime %s was never seen Pending before Ready", rt.Name)
	}
	if !rt.Status.ProvisioningCompleted {
		t.Error("status.provisioningCompleted is false at Ready")
	}
	s := w.shoot(t, rt.Spec.Shoot.Name)
	if s == nil || s.Status.LastOperation == nil || s.Status.LastOperation.State != gardencorev1beta1.LastOperationStateSucceeded {
		t.Fatalf("runtime Ready but shoot %s is not reconciled: %+v", rt.Spec.Shoot.Name, s)
	}
	if rt.Status.ShootLastOperation == nil || rt.Status.ShootLastOperation.State != gardencorev1beta1.LastOperationStateSucceeded {
		t.Errorf("status.shootLastOperation not mirrored: %+v", rt.Status.ShootLastOperation)
	}
	w.checkShootMatchesGenerated(t, rt)
	gc := &imv1.GardenerCluster{}
	if err := w.kcp.Get(context.Background(), client.ObjectKey{Namespace: kcpNamespace, Name: rt.Name}, gc); err != nil {
		t.Fatalf("GardenerCluster of Ready runtime: %v", err)
	}
	for _, k := range []string{imv1.LabelRuntimeID, imv1.LabelBrokerPlanName, "kyma-project.io/global-account-id", "kyma-project.io/shoot-name"} {
		if gc.Labels[k] != rt.Labels[k] {
			t.Errorf("GardenerCluster label %s = %q, want %q", k, gc.Labels[k], rt.Labels[k])
		}
	}
	if gc.Annotations[imv1.AnnotationSKRDomain] != ptr.Deref(s.Spec.DNS.Domain, "") {
		t.Errorf("GardenerCluster skr-domain %q, want the shoot's domain %q", gc.Annotations[imv1.AnnotationSKRDomain], ptr.Deref(s.Spec.DNS.Domain, ""))
	}
	kc := w.kubeconfig(t, rt.Name)
	if len(kc) == 0 {
		t.Fatal("kubeconfig Secret missing or empty at Ready")
	}
	checkKubeconfigWorks(t, kc)
	w.checkAdminBindings(t, rt.Spec.Shoot.Name, rt.Spec.Security.Administrators)
}

// checkUpdate changes a Ready Runtime and asserts that its state left Ready before the simulated Gardener finished
// reconciling the change, and that it is Ready again afterwards (issue 6, acceptance 2).
func (w *world) checkUpdate(t *testing.T, name string, change func(*imv1.Runtime)) *gardencorev1beta1.Shoot {
	t.Helper()
	shootName := w.runtime(t, name).Spec.Shoot.Name
	before := w.shoot(t, shootName)
	begin := time.Now()
	gen := w.updateRuntime(t, name, change)
	testenv.Eventually(t, stepTimeout, "runtime "+name+" to report generation "+itoa(gen), func() (bool, string) {
		rt := w.runtime(t, name)
		if rt.Status.ObservedGeneration < gen {
			return false, describe(rt)
		}
		if rt.Status.State == imv1.RuntimeStateReady {
			t.Fatalf("runtime reported Ready for generation %d without leaving Ready first: %s", gen, describe(rt))
		}
		// The Runtime was read before the shoot: if Gardener has not finished now, it had not when the Runtime
		// left Ready.
		s := w.shoot(t, shootName)
		if s.Generation > before.Generation && s.Status.ObservedGeneration >= s.Generation &&
			s.Status.LastOperation != nil && s.Status.LastOperation.State == gardencorev1beta1.LastOperationStateSucceeded {
			t.Fatalf("the simulated Gardener finished (shoot generation %d) before the runtime left Ready: %s", s.Generation, describe(rt))
		}
		t.Logf("runtime left Ready %s after the update (%s), Gardener still working on shoot generation %d",
			time.Since(begin).Round(time.Millisecond), describe(rt), s.Generation)
		return true, ""
	})
	w.waitReady(t, name, stepTimeout)
	s := w.shoot(t, shootName)
	if s.Generation <= before.Generation {
		t.Errorf("the shoot was not changed (generation %d)", s.Generation)
	}
	return s
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

func (w *world) updates(t *testing.T, rt *imv1.Runtime) {
	const extra = "extra-pool"
	s := w.checkUpdate(t, rt.Name, func(r *imv1.Runtime) { r.Spec.Shoot.Provider.Workers[0].Maximum = 5 })
	if got := worker(s, "cpu-worker-0"); got == nil || got.Maximum != 5 {
		t.Fatalf("shoot worker maximum after update: %+v, want 5", got)
	}
	s = w.checkUpdate(t, rt.Name, func(r *imv1.Runtime) {
		pool := *r.Spec.Shoot.Provider.Workers[0].DeepCopy()
		pool.Name, pool.Minimum, pool.Maximum, pool.Zones = extra, 1, 2, pool.Zones[:1]
		r.Spec.Shoot.Provider.AdditionalWorkers = &[]gardencorev1beta1.Worker{pool}
	})
	if got := worker(s, extra); got == nil || got.Minimum != 1 || got.Maximum != 2 {
		t.Fatalf("additional pool in the shoot: %+v (pools %v)", got, workerPools(s))
	}
	s = w.checkUpdate(t, rt.Name, func(r *imv1.Runtime) { r.Spec.Shoot.Provider.AdditionalWorkers = &[]gardencorev1beta1.Worker{} })
	if worker(s, extra) != nil {
		t.Fatalf("removed pool %s is still in the shoot: pools %v", extra, workerPools(s))
	}
	if got := worker(s, "cpu-worker-0"); got == nil || got.Maximum != 5 {
		t.Fatalf("cpu-worker-0 after removing the additional pool: %+v", got)
	}
}

// injectFault makes the next Reconcile of the shoot fail with the given Gardener error code and message.
func (w *world) injectFault(t *testing.T, shootName, code, message string) {
	w.patchShoot(t, shootName, func(s *gardencorev1beta1.Shoot) {
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, gardenlet.AnnotationFailWith, code)
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, gardenlet.AnnotationFailOperation, "Reconcile")
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, gardenlet.AnnotationFailMessage, message)
	})
}

func (w *world) clearFault(t *testing.T, shootName string) {
	w.patchShoot(t, shootName, func(s *gardencorev1beta1.Shoot) {
		for _, k := range []string{gardenlet.AnnotationFailWith, gardenlet.AnnotationFailOperation, gardenlet.AnnotationFailMessage} {
			delete(s.Annotations, k)
		}
	})
}

// nonRetryableFailure: a Gardener error the operator cannot retry ends in Failed with Gardener's message (issue 6,
// acceptance 3); when Gardener later reconciles successfully the runtime is Ready again.
func (w *world) nonRetryableFailure(t *testing.T, rt *imv1.Runtime) {
	const msg = "simulated: the cloud provider rejected the credentials of binding azure-kyma-1"
	shootName := rt.Spec.Shoot.Name
	w.injectFault(t, shootName, string(gardencorev1beta1.ErrorInfraUnauthenticated), msg)
	gen := w.updateRuntime(t, rt.Name, func(r *imv1.Runtime) { r.Spec.Shoot.Provider.Workers[0].Maximum++ })
	var got *imv1.Runtime
	testenv.Eventually(t, stepTimeout, "runtime Failed", func() (bool, string) {
		got = w.runtime(t, rt.Name)
		return got.Status.ObservedGeneration == gen && got.Status.State == imv1.RuntimeStateFailed, describe(got)
	})
	c := readyCondition(got)
	if c.Reason != string(lifecycle.ReasonGardenerFailed) || !strings.Contains(c.Message, msg) {
		t.Errorf("Ready condition %s: %q, want reason %s with Gardener's message %q", c.Reason, c.Message, lifecycle.ReasonGardenerFailed, msg)
	}
	if len(got.Status.ShootLastErrors) == 0 || len(got.Status.ShootLastErrors[0].Codes) == 0 ||
		got.Status.ShootLastErrors[0].Codes[0] != gardencorev1beta1.ErrorInfraUnauthenticated {
		t.Errorf("status.shootLastErrors not mirrored: %+v", got.Status.ShootLastErrors)
	}
	w.clearFault(t, shootName)
	w.waitReady(t, rt.Name, stepTimeout)
}

// retryableFailure: a Gardener error that may clear (quota) keeps the runtime Pending, the operator asks Gardener to
// retry after its backoff, and the runtime becomes Ready on its own once the cause is gone (issue 6, acceptance 3).
func (w *world) retryableFailure(t *testing.T, rt *imv1.Runtime) {
	shootName := rt.Spec.Shoot.Name
	w.injectFault(t, shootName, string(gardencorev1beta1.ErrorInfraQuotaExceeded), "simulated: quota of CPUs in europe-west3 exceeded")
	gen := w.updateRuntime(t, rt.Name, func(r *imv1.Runtime) { r.Spec.Shoot.Provider.Workers[0].Maximum++ })
	notFailed := func(got *imv1.Runtime) {
		if got.Status.ObservedGeneration == gen && got.Status.State == imv1.RuntimeStateFailed {
			t.Fatalf("a retryable Gardener error made the runtime Failed: %s", describe(got))
		}
	}
	// Two waits, each with its own budget: the simulated gardenlet failing the update (slow when the machine is
	// busy), then the operator's retry after its backoff (30 s). The runtime must never report Failed meanwhile.
	testenv.Eventually(t, stepTimeout, "the runtime to report the retryable failure", func() (bool, string) {
		got := w.runtime(t, rt.Name)
		notFailed(got)
		return got.Status.ObservedGeneration == gen && readyCondition(got).Reason == string(lifecycle.ReasonGardenerRetryScheduled), describe(got)
	})
	testenv.Eventually(t, stepTimeout, "the operator to request a Gardener retry", func() (bool, string) {
		got := w.runtime(t, rt.Name)
		notFailed(got)
		s := w.shoot(t, shootName)
		return s.Annotations[gardener.AnnotationRetryAttempts] != "", describe(got)
	})
	w.clearFault(t, shootName)
	w.waitReady(t, rt.Name, stepTimeout)
}
