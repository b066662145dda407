package migrate

import (
	"context"
	"fmt"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/migration"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// apply performs the planned actions of one item in order: the GardenerCluster first (so kubeconfig management
// starts even if the Runtime fails), then the Runtime. A failed action stops the item; running again retries it
// (every action is a plain create, and "exists already with the planned content" counts as done).
func (m *Migrator) apply(ctx context.Context, land *landscape, it *migration.Item) {
	if it.Outcome != migration.OutcomePlanned && it.Outcome != migration.OutcomeRefused {
		return
	}
	key := it.Namespace + "/" + it.RuntimeID
	failed := false
	for i := range it.Actions {
		a := &it.Actions[i]
		if a.ByOperator {
			continue
		}
		var err error
		switch a.Kind {
		case migration.CreateGardenerCluster:
			err = m.createGardenerCluster(ctx, land, it)
		case migration.CreateRuntime:
			err = m.createRuntime(ctx, land.runtime(key))
		case migration.ApproveTakeover:
			err = m.approveTakeover(ctx, land.live[key])
		default:
			err = fmt.Errorf("unknown action %s", a.Kind)
		}
		if err != nil {
			a.Error, failed = err.Error(), true
			break
		}
		a.Done = true
	}
	switch {
	case failed:
		it.Outcome = migration.OutcomeFailed
	case it.Outcome == migration.OutcomePlanned:
		it.Outcome = migration.OutcomeDone
	}
}

// GardenerCluster is the GardenerCluster KEB would have created for the runtime: named by the runtime ID, with
// KEB's labels, the shoot, the kubeconfig Secret kubeconfig-<runtimeID> (key config) and the runtime's domain.
func GardenerCluster(namespace, runtimeID, shootName, domain string, labels map[string]string) *imv1.GardenerCluster {
	gc := &imv1.GardenerCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: imv1.GroupVersion.String(), Kind: "GardenerCluster"},
		ObjectMeta: metav1.ObjectMeta{Name: runtimeID, Namespace: namespace, Labels: maps.Clone(labels)},
		Spec: imv1.GardenerClusterSpec{
			Shoot: imv1.Shoot{Name: shootName},
			Kubeconfig: imv1.Kubeconfig{Secret: imv1.Secret{
				Name: kubeconfig.SecretName(runtimeID), Namespace: namespace, Key: kubeconfig.SecretKey}},
		},
	}
	if domain != "" {
		gc.Annotations = map[string]string{imv1.AnnotationSKRDomain: domain}
	}
	return gc
}

func (m *Migrator) createGardenerCluster(ctx context.Context, land *landscape, it *migration.Item) error {
	domain := ""
	if s := land.shoots[it.Shoot]; s != nil && s.Spec.DNS != nil {
		domain = ptr.Deref(s.Spec.DNS.Domain, "")
	}
	var labels map[string]string
	for _, k := range land.kymas {
		if k.Namespace == it.Namespace && k.Name == it.RuntimeID {
			labels = k.Labels
		}
	}
	want := GardenerCluster(it.Namespace, it.RuntimeID, it.Shoot, domain, labels)
	err := m.KCP.Create(ctx, want.DeepCopy())
	if !apierrors.IsAlreadyExists(err) {
		return classifyCreate("GardenerCluster", want.Name, err)
	}
	// Created meanwhile (the operator does so for a Runtime): fine if it names the same shoot and Secret.
	got := &imv1.GardenerCluster{}
	if err := m.KCP.Get(ctx, client.ObjectKeyFromObject(want), got); err != nil {
		return fmt.Errorf("GardenerCluster %s exists already and cannot be read: %w", want.Name, err)
	}
	if got.Spec != want.Spec {
		return fmt.Errorf("GardenerCluster %s exists already for shoot %s, Secret %s", want.Name, got.Spec.Shoot.Name, got.Spec.Kubeconfig.Secret.Name)
	}
	return nil
}

func (m *Migrator) createRuntime(ctx context.Context, rt *imv1.Runtime) error {
	if rt == nil {
		return fmt.Errorf("no Runtime was prepared")
	}
	err := m.KCP.Create(ctx, rt.DeepCopy())
	if apierrors.IsAlreadyExists(err) {
		// Someone (KEB, a person, a concurrent run) created it meanwhile: the operator manages it; never overwrite.
		got := &imv1.Runtime{}
		if gerr := m.KCP.Get(ctx, client.ObjectKeyFromObject(rt), got); gerr == nil && got.Spec.Shoot.Name == rt.Spec.Shoot.Name {
			return nil
		}
	}
	return classifyCreate("Runtime", rt.Name, err)
}

// approveTakeover sets the force-patch annotation on the existing Runtime rt, pinned to the version whose
// differences were reviewed: a Runtime changed since (KEB updated it) is not approved, a second run reviews it again.
func (m *Migrator) approveTakeover(ctx context.Context, rt *imv1.Runtime) error {
	if rt == nil {
		return fmt.Errorf("no Runtime was observed")
	}
	patch := client.MergeFromWithOptions(rt.DeepCopy(), client.MergeFromWithOptimisticLock{})
	approved := rt.DeepCopy()
	metav1.SetMetaDataAnnotation(&approved.ObjectMeta, imv1.AnnotationForcePatchReconciliation, "true")
	if err := m.KCP.Patch(ctx, approved, patch); err != nil {
		if apierrors.IsConflict(err) {
			return fmt.Errorf("approve Runtime %s: it changed since it was reviewed; run again to review the new version: %w", rt.Name, err)
		}
		return fmt.Errorf("approve Runtime %s: %w", rt.Name, err)
	}
	return nil
}

func classifyCreate(kind, name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("create %s %s: %w", kind, name, err)
}
