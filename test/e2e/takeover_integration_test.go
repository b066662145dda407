package e2e

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"

	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/core/domain/kubeconfig"
	shootdomain "github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/internal/mapping"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/kymaruntime"
	"github.com/kyma-project/kim/test/testenv"
	"github.com/kyma-project/kim/test/testenv/keb"
	"github.com/kyma-project/kim/test/testenv/previous"
)

// TestPreviousManagersRuntimesAreDeletableIntegration (issue 39, item 0): Runtimes, GardenerClusters, kubeconfig
// Secrets and shoots exactly as the previous infrastructure manager leaves them (its finalizer on the Runtime, none
// on the GardenerCluster, its labels on the Secret, its rendering of the shoot). One Runtime was deleted by KEB
// while no manager ran (it is Terminating when the operator starts and never reconciled), the other is deleted after
// the operator took it over. Both go, their access goes, their shoots wait hibernated in the deletion window, and
// KEB's credentials-binding step finishes at once.
func TestPreviousManagersRuntimesAreDeletableIntegration(t *testing.T) {
	w := startWorld(t, theWorld)
	azure := keb.GoldenRuntime(t, "azure") // a plan with the long default window: the shoot waits
	deletedWhileDown := freshRuntime(azure, "7a0e0000-0000-4000-8000-00000000d0a1", "c-7a0ed1")
	w.dedicatedBinding(t, deletedWhileDown, "azure-kyma-takeover-1", "azure-kyma-1")
	takenOver := freshRuntime(azure, "7a0e0000-0000-4000-8000-00000000d0a2", "c-7a0ed2")
	w.dedicatedBinding(t, takenOver, "azure-kyma-takeover-2", "azure-kyma-1")
	for _, rt := range []*imv1.Runtime{deletedWhileDown, takenOver} {
		w.leftByPreviousManager(t, rt)
	}
	// KEB deletes the first one while neither manager runs: it stays Terminating, held by the previous finalizer.
	w.deleteAsKEB(t, deletedWhileDown)
	if got := w.runtime(t, deletedWhileDown.Name); got == nil || got.DeletionTimestamp == nil {
		t.Fatalf("runtime %s: %s; want Terminating, held by the previous finalizer", deletedWhileDown.Name, describe(got))
	}

	states := w.watchRuntimeStates(t, takenOver.Name)
	w.startOperator(t, w.writeConfig(t, "operator", deletionConfig(false)))
	t.Run("DeletedBeforeTheSwitch", func(t *testing.T) { w.previousRuntimeGoes(t, deletedWhileDown) })
	t.Run("TakenOverThenDeleted", func(t *testing.T) {
		testenv.Eventually(t, provisionTimeout, "runtime "+takenOver.Name+" taken over", func() (bool, string) {
			got := w.runtime(t, takenOver.Name)
			return got != nil && slices.Contains(got.Finalizers, kymaruntime.Finalizer) && got.Status.ObservedGeneration == got.Generation &&
				readyCondition(got).Reason != "", describe(got)
		})
		// Nothing KEB reads changes at the switch (item 0b): every state the Runtime's status took from the
		// operator's start to the take-over is Ready.
		t.Logf("states of the taken-over runtime at the switch: %v", states())
		for _, st := range states() {
			if !strings.HasPrefix(st, string(imv1.RuntimeStateReady)+" ") {
				t.Errorf("the taken-over runtime left Ready at the switch: states seen %v", states())
				break
			}
		}
		if got := w.runtime(t, takenOver.Name); !slices.Contains(got.Finalizers, kymaruntime.PreviousFinalizer) {
			t.Errorf("the previous finalizer was removed from a live Runtime: %v", got.Finalizers)
		}
		w.deleteAsKEB(t, takenOver)
		w.previousRuntimeGoes(t, takenOver)
	})
}

// watchRuntimeStates records every state (with the Ready condition's reason) the Runtime name's status takes from
// now on, from a watch, so a state held for one status write is seen too; the returned func gives them so far.
func (w *world) watchRuntimeStates(t *testing.T, name string) func() []string {
	t.Helper()
	dyn, err := dynamic.NewForConfig(w.env.KCP)
	if err != nil {
		t.Fatal(err)
	}
	gvr := imv1.GroupVersion.WithResource("runtimes")
	watcher, err := dyn.Resource(gvr).Namespace(kcpNamespace).Watch(t.Context(),
		metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	go func() {
		for ev := range watcher.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			rt := &imv1.Runtime{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, rt); err != nil {
				continue
			}
			st := string(rt.Status.State) + " " + readyCondition(rt).Reason
			mu.Lock()
			if len(seen) == 0 || seen[len(seen)-1] != st {
				seen = append(seen, st)
			}
			mu.Unlock()
		}
	}()
	t.Cleanup(watcher.Stop)
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// leftByPreviousManager creates rt's objects as the previous infrastructure manager leaves them for a Ready runtime:
// the shoot (its rendering, its runtime-id annotation) with its authentication ConfigMap, the Runtime with its
// finalizer and status, the GardenerCluster it created (no finalizer) and the kubeconfig Secret its GardenerCluster
// controller wrote (the GardenerCluster's labels plus managed-by and cluster-name, the last-sync annotation).
func (w *world) leftByPreviousManager(t *testing.T, rt *imv1.Runtime) {
	t.Helper()
	ctx := context.Background()
	s := w.predecessorShoot(t, rt)
	// The previous manager records the Runtime generation it applied; the Runtime below is created: generation 1.
	s.Annotations[shootdomain.AnnotationRuntimeGeneration] = "1"
	if err := previous.Render(s); err != nil {
		t.Fatal(err)
	}
	if err := w.garden.Create(ctx, s); err != nil {
		t.Fatalf("create the previous manager's shoot: %v", err)
	}
	testenv.Eventually(t, stepTimeout, "shoot "+s.Name+" reconciled", func() (bool, string) {
		cur := w.shoot(t, s.Name)
		return cur != nil && shootReconciled(cur), "not yet"
	})

	created := rt.DeepCopy()
	created.Finalizers = []string{kymaruntime.PreviousFinalizer}
	if err := w.kcp.Create(ctx, created); err != nil {
		t.Fatalf("create runtime %s: %v", rt.Name, err)
	}
	created.Status = imv1.RuntimeStatus{State: imv1.RuntimeStateReady, ProvisioningCompleted: true, ObservedGeneration: created.Generation,
		Conditions: []metav1.Condition{{Type: "Provisioned", Status: metav1.ConditionTrue, Reason: "ConfigurationCompleted",
			Message: "Runtime processing completed successfully", LastTransitionTime: metav1.Now(), ObservedGeneration: created.Generation}}}
	if err := w.kcp.Status().Update(ctx, created); err != nil {
		t.Fatalf("status of runtime %s: %v", rt.Name, err)
	}

	labels := map[string]string{}
	for _, k := range []string{"kyma-project.io/instance-id", "kyma-project.io/runtime-id", "kyma-project.io/broker-plan-id",
		"kyma-project.io/broker-plan-name", "kyma-project.io/global-account-id", "kyma-project.io/subaccount-id",
		"operator.kyma-project.io/kyma-name"} {
		labels[k] = rt.Labels[k]
	}
	labels["kyma-project.io/platform-region"] = rt.Spec.Shoot.PlatformRegion
	labels["kyma-project.io/region"] = rt.Spec.Shoot.Region
	labels["kyma-project.io/shoot-name"] = rt.Spec.Shoot.Name
	labels["operator.kyma-project.io/managed-by"] = "infrastructure-manager"
	labels["operator.kyma-project.io/internal"] = "true"
	gc := &imv1.GardenerCluster{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: rt.Name, Labels: labels,
		Annotations: map[string]string{"skr-domain": rt.Spec.Shoot.Name + ".example.invalid"}},
		Spec: imv1.GardenerClusterSpec{Shoot: imv1.Shoot{Name: rt.Spec.Shoot.Name},
			Kubeconfig: imv1.Kubeconfig{Secret: imv1.Secret{Name: kubeconfig.SecretName(rt.Name), Namespace: kcpNamespace, Key: "config"}}}}
	if err := w.kcp.Create(ctx, gc); err != nil {
		t.Fatalf("create the previous manager's GardenerCluster: %v", err)
	}
	secretLabels := map[string]string{"operator.kyma-project.io/cluster-name": rt.Name}
	for k, v := range labels {
		secretLabels[k] = v
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: kubeconfig.SecretName(rt.Name), Labels: secretLabels,
		Annotations: map[string]string{"operator.kyma-project.io/last-sync": time.Now().UTC().Format(time.RFC3339)}},
		StringData: map[string]string{"config": "apiVersion: v1\nkind: Config\n"}}
	if err := w.kcp.Create(ctx, sec); err != nil {
		t.Fatalf("create the previous manager's kubeconfig Secret: %v", err)
	}
}

// predecessorShoot creates the authentication ConfigMap of rt's shoot as the operator renders it and returns the
// shoot the operator would generate for rt, without the operator's labels and with the previous manager's runtime-id
// annotation, for the caller to adjust and create.
func (w *world) predecessorShoot(t *testing.T, rt *imv1.Runtime) *gardencorev1beta1.Shoot {
	t.Helper()
	spec, err := shootdomain.Generate(mapping.Runtime(rt), w.shootConfig)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Authentication != nil {
		data, err := translate.AuthenticationConfigMapData(spec.Authentication)
		if err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: spec.Authentication.ConfigMapName, Namespace: "garden-" + w.project}, Data: data}
		if err := w.garden.Create(context.Background(), cm); err != nil {
			t.Fatalf("create the predecessor's authentication ConfigMap: %v", err)
		}
	}
	s, err := translate.ToShoot(spec)
	if err != nil {
		t.Fatal(err)
	}
	s.Labels = nil
	s.Annotations = map[string]string{shootdomain.AnnotationRuntimeID: rt.Name}
	return s
}

// deleteAsKEB deletes the Runtime as KEB's deprovisioning does (a plain delete).
func (w *world) deleteAsKEB(t *testing.T, rt *imv1.Runtime) {
	t.Helper()
	if err := w.kcp.Delete(context.Background(), &imv1.Runtime{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: rt.Name}}); err != nil {
		t.Fatalf("delete runtime %s: %v", rt.Name, err)
	}
}

// previousRuntimeGoes: the deleted Runtime is NotFound (KEB's wait for it ends), the GardenerCluster and the Secret
// are gone, the shoot waits hibernated with the deletion record, and KEB's binding step finishes.
func (w *world) previousRuntimeGoes(t *testing.T, rt *imv1.Runtime) {
	t.Helper()
	testenv.Eventually(t, stepTimeout, "runtime "+rt.Name+" NotFound", func() (bool, string) {
		got := w.runtime(t, rt.Name)
		if got == nil {
			return true, ""
		}
		return false, describe(got) + " finalizers " + strings.Join(got.Finalizers, ",")
	})
	testenv.Eventually(t, stepTimeout, "access of "+rt.Name+" gone", func() (bool, string) {
		return !w.gardenerClusterExists(t, rt.Name) && w.kubeconfig(t, rt.Name) == nil, "GardenerCluster or Secret still there"
	})
	w.kebFreesBinding(t, rt)
	w.waitHibernatedAndMarked(t, rt)
}
