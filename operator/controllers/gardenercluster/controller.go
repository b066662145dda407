package gardenercluster

import (
	"context"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/app"
)

// Name of the controller in logs and metrics.
const Name = "gardenercluster"

// Controller is the kubeconfig controller as the operator registers it (app.Controller).
type Controller struct {
	// Issuer replaces the Gardener issuer (tests count or fail Gardener calls); nil uses shoots/adminkubeconfig.
	Issuer ports.KubeconfigIssuer
	// Clock replaces the wall clock; nil uses it.
	Clock ports.Clock
	// SkipNameValidation allows a second manager with this controller in the same process (tests and the sandbox
	// restart the operator in-process; controller-runtime refuses duplicate controller names otherwise).
	SkipNameValidation bool
}

var _ app.Controller = Controller{}

// Name implements app.Controller.
func (Controller) Name() string { return Name }

// SetupWithManager implements app.Controller: it wires the reconciler to the manager's cache (GardenerClusters and
// managed Secrets of the watched namespaces) and to the garden cluster's API.
func (c Controller) SetupWithManager(mgr manager.Manager, garden cluster.Cluster, opts app.Options) error {
	policy, err := kubeconfig.NewPolicy(opts.KubeconfigValidity, opts.KubeconfigRotationFraction)
	if err != nil {
		return fmt.Errorf("kubeconfig rotation policy: %w", err)
	}
	issuer := c.Issuer
	if issuer == nil {
		// A dedicated client: the shared garden scheme does not carry AdminKubeconfigRequest. It uses the garden
		// config and so the configured QPS and burst.
		gc, err := gardener.NewIssuerClient(garden.GetConfig())
		if err != nil {
			return err
		}
		issuer = gardener.NewAdminKubeconfigIssuer(gc, opts.GardenNamespace())
	}
	clk := c.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	r := &Reconciler{
		Client:     mgr.GetClient(),
		LiveReader: mgr.GetAPIReader(),
		Issuer:     issuer,
		Store:      kube.NewKubeconfigSecretStore(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetClient()),
		// The garden cache of shoots: a GardenerCluster may only get the kubeconfig of its own runtime's shoot.
		Shoots:   &gardener.Shoots{Client: garden.GetClient(), Live: garden.GetAPIReader(), Namespace: opts.GardenNamespace()},
		Clock:    clk,
		Policy:   policy,
		Recorder: mgr.GetEventRecorder("kim-" + Name),
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		For(&imv1.GardenerCluster{}, builder.WithPredicates(relevantChange())).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(secretOwner)).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.GardenerClusterWorkers, SkipNameValidation: &c.SkipNameValidation}).
		Complete(r)
}

// relevantChange lets through every change except status-only updates (our own status patches).
func relevantChange() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld, e.ObjectNew
		return o.GetGeneration() != n.GetGeneration() ||
			!maps.Equal(o.GetLabels(), n.GetLabels()) ||
			!maps.Equal(o.GetAnnotations(), n.GetAnnotations()) ||
			!o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp()) ||
			len(o.GetFinalizers()) != len(n.GetFinalizers())
	}}
}

// secretOwner maps a managed Secret to its GardenerCluster: the owner annotation, or else the cluster-name label in
// the Secret's namespace (Secrets of older operators).
func secretOwner(_ context.Context, o client.Object) []reconcile.Request {
	if ns, name, ok := strings.Cut(o.GetAnnotations()[kubeconfig.AnnotationOwner], "/"); ok && ns != "" && name != "" {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
	}
	if name := o.GetLabels()[kubeconfig.LabelClusterName]; name != "" {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
	}
	return nil
}
