package migrate

import (
	"context"
	"errors"
	"fmt"
	"sync"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/migration"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// KymaGVK is the kind of KEB's Kyma resources (lifecycle-manager's API; the operator does not own it).
var KymaGVK = schema.GroupVersionKind{Group: "operator.kyma-project.io", Version: "v1beta2", Kind: "Kyma"}

// landscape is what one run observed, read once at its start.
type landscape struct {
	kymas     []migration.Kyma
	shoots    map[string]*gardencorev1beta1.Shoot
	shootList []migration.Shoot
	existing  migration.Existing
	// controlPlaneCIDRs are the control plane's egress addresses (shoot.acl.configMap); cidrsProblem says why they
	// could not be read.
	controlPlaneCIDRs []string
	cidrsProblem      string

	mu       sync.Mutex
	runtimes map[string]*imv1.Runtime // prepared Runtimes by namespace/runtimeID
	// live are the Runtimes that exist, by namespace/runtimeID.
	live map[string]*imv1.Runtime
}

func (l *landscape) setRuntime(key string, rt *imv1.Runtime) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runtimes[key] = rt
}

func (l *landscape) runtime(key string) *imv1.Runtime {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.runtimes[key]
}

// observe lists the Kyma resources, GardenerClusters and Runtimes of the namespace and the shoots of the project.
func (m *Migrator) observe(ctx context.Context) (*landscape, error) {
	land := &landscape{shoots: map[string]*gardencorev1beta1.Shoot{}, runtimes: map[string]*imv1.Runtime{}, live: map[string]*imv1.Runtime{},
		existing: migration.Existing{GardenerClusters: map[string]bool{}, Runtimes: map[string]bool{}}}
	kymas := &unstructured.UnstructuredList{}
	kymas.SetGroupVersionKind(KymaGVK.GroupVersion().WithKind(KymaGVK.Kind + "List"))
	if err := m.KCP.List(ctx, kymas, client.InNamespace(m.Namespace)); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("list Kyma resources: the KCP has no %s API (lifecycle-manager's CRD): %w", KymaGVK.GroupVersion(), err)
		}
		return nil, fmt.Errorf("list Kyma resources in %s: %w", m.Namespace, err)
	}
	for _, k := range kymas.Items {
		land.kymas = append(land.kymas, migration.Kyma{Namespace: k.GetNamespace(), Name: k.GetName(), Labels: k.GetLabels()})
	}
	var gcs imv1.GardenerClusterList
	if err := m.KCP.List(ctx, &gcs, client.InNamespace(m.Namespace)); err != nil {
		return nil, fmt.Errorf("list GardenerClusters in %s: %w", m.Namespace, err)
	}
	for _, gc := range gcs.Items {
		land.existing.GardenerClusters[gc.Namespace+"/"+gc.Name] = true
	}
	var rts imv1.RuntimeList
	if err := m.KCP.List(ctx, &rts, client.InNamespace(m.Namespace)); err != nil {
		return nil, fmt.Errorf("list Runtimes in %s: %w", m.Namespace, err)
	}
	for i := range rts.Items {
		rt := &rts.Items[i]
		land.existing.Runtimes[rt.Namespace+"/"+rt.Name] = true
		land.live[rt.Namespace+"/"+rt.Name] = rt
	}
	var shoots gardencorev1beta1.ShootList
	if err := m.Garden.List(ctx, &shoots, client.InNamespace(m.GardenNamespace)); err != nil {
		return nil, fmt.Errorf("list shoots in %s: %w", m.GardenNamespace, err)
	}
	for i := range shoots.Items {
		s := &shoots.Items[i]
		land.shoots[s.Name] = s
		id, by := translate.RuntimeIDOf(s.Annotations)
		land.shootList = append(land.shootList, migration.Shoot{Name: s.Name, RuntimeID: id, CreatedBy: string(by),
			Managed: s.Labels[wire.LabelManagedBy] == wire.ManagedByValue, Deleting: s.DeletionTimestamp != nil,
			TakenOver: gardener.TakenOver(s)})
	}
	if m.ACLConfigMap != nil && m.Config.ACL.Enabled {
		addresses := &kube.ControlPlaneAddresses{Reader: m.KCP, Key: *m.ACLConfigMap}
		cidrs, err := addresses.EgressCIDRs(ctx)
		switch {
		case errors.Is(err, ports.ErrAddressesInvalid):
			land.cidrsProblem = err.Error()
		case err != nil:
			return nil, fmt.Errorf("control plane egress addresses: %w", err)
		}
		land.controlPlaneCIDRs = cidrs
	}
	return land, nil
}
