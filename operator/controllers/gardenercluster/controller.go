// Package gardenercluster maps GardenerClusters to the kubeconfig rotation use case (core/usecase.Rotator) and its
// results to status, on the shared reconcile skeleton: the Secret of every GardenerCluster holds a valid admin
// kubeconfig, issued only when the rotation policy says so, rotated on demand and removed with the GardenerCluster.
package gardenercluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
)

// Name of the controller in logs, metrics and the --controllers flag.
const Name = "gardenercluster"

// Finalizer keeps a GardenerCluster until its kubeconfig Secret is gone. GardenerClusters created by KEB before
// this operator get it on their first reconcile: that is how their Secrets are adopted.
const Finalizer = "infrastructuremanager.kyma-project.io/kubeconfig-secret"

// RBAC in KCP, least privilege: GardenerClusters are only patched (finalizer, force annotation) never updated;
// Secrets are written by server-side apply (patch; create for the first apply) and deleted; events use the
// events.k8s.io API. Requesting admin kubeconfigs needs shoots/adminkubeconfig create in the Gardener project,
// which is granted there, not by this role.
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=gardenerclusters,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=gardenerclusters/status,verbs=get;patch
// +kubebuilder:rbac:groups="",namespace=kcp-system,resources=secrets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,namespace=kcp-system,resources=events,verbs=create;patch

// Deps is what the GardenerCluster controller is built from; the composition root (operator/app) fills it.
type Deps struct {
	Clock ports.Clock
	// Issuer asks Gardener for admin kubeconfigs; Secrets keeps them in the KCP.
	Issuer  ports.KubeconfigIssuer
	Secrets ports.KubeconfigSecretStore
	// Shoots is the garden's cache of shoots: a GardenerCluster may only get the kubeconfig of its own runtime's
	// shoot.
	Shoots ports.Shoots
	// Policy says when a kubeconfig is issued and rotated.
	Policy kubeconfig.Policy
	// Workers are the concurrent reconciles (--gardener-cluster-workers).
	Workers int
}

// Reconciler is the GardenerCluster reconciler: the skeleton with this package's hooks.
type Reconciler = skeleton.Reconciler[*imv1.GardenerCluster, ports.KubeconfigRequest, usecase.RotationResult]

// NewReconciler builds the reconciler on the manager's clients and deps (Workers is not used).
func NewReconciler(c client.Client, live client.Reader, deps Deps, m *Metrics, recorder events.EventRecorder) (*Reconciler, error) {
	return skeleton.NewReconciler(Reconciler{Client: c, Live: live, Clock: deps.Clock, Recorder: recorder, Finalizer: Finalizer,
		New: func() *imv1.GardenerCluster { return &imv1.GardenerCluster{} },
		Hooks: &hooks{rotator: &usecase.Rotator{Issuer: countingIssuer{deps.Issuer, m}, Store: deps.Secrets, Shoots: deps.Shoots,
			Policy: deps.Policy}, metrics: m}, AwaitStatus: statusAwait})
}

// statusAwait bounds how long a reconcile that wrote the status waits for the cache to show it. The Secret written
// with the first kubeconfig brings the next reconcile at once; on a cache without the recorded success it confirmed
// the GardenerCluster live again (about every other new cluster, issue 29).
const statusAwait = 2 * time.Second

// AddToManager registers the controller with the KCP manager: GardenerClusters and managed Secrets of the watched
// namespaces.
func AddToManager(mgr manager.Manager, deps Deps) error {
	r, err := NewReconciler(mgr.GetClient(), mgr.GetAPIReader(), deps, NewMetrics(nil), mgr.GetEventRecorder("kim-"+Name))
	if err != nil {
		return fmt.Errorf("%s controller: %w", Name, err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		// Every change but status-only updates (our own status patches); labels are part of the request.
		For(&imv1.GardenerCluster{}, builder.WithPredicates(skeleton.IgnoreStatusOnly(true))).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(secretOwner)).
		WithOptions(controller.Options{MaxConcurrentReconciles: deps.Workers}).
		Complete(r)
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
