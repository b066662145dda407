// Package serviceaccountkubeconfig is the controller of ServiceAccountKubeconfigs on the shared reconcile skeleton:
// it maps the custom resource to the least-privilege kubeconfig use case (core/usecase.IdentityKubeconfigs) and its
// results to status, events and metrics. Runtimes are reached through the ports the composition root builds.
package serviceaccountkubeconfig

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

	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
)

// Name of the controller in logs, metrics and the --controllers flag.
const Name = "serviceaccountkubeconfig"

// Finalizer keeps a ServiceAccountKubeconfig until its runtime objects and Secret are removed (or the runtime is
// gone, or did not answer within the cleanup timeout).
const Finalizer = "infrastructuremanager.kyma-project.io/serviceaccountkubeconfig"

// runtimeIDField indexes ServiceAccountKubeconfigs by spec.runtimeID, to find those of a runtime whose admin
// kubeconfig Secret changed.
const runtimeIDField = "spec.runtimeID"

// RBAC in KCP: the objects are only patched (finalizer, force annotation), never updated; kubeconfig Secrets are
// created, applied and deleted, admin kubeconfig Secrets read (markers of the GardenerCluster controller grant
// both); events use the events.k8s.io API. Nothing is granted in runtimes: the admin kubeconfig is used there.
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=serviceaccountkubeconfigs,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=serviceaccountkubeconfigs/status,verbs=get;patch
// +kubebuilder:rbac:groups="",namespace=kcp-system,resources=secrets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,namespace=kcp-system,resources=events,verbs=create;patch

// Deps is what the ServiceAccountKubeconfig controller is built from; the composition root (operator/app) fills
// it. The garden is not used: runtimes are reached through the admin kubeconfig Secrets in the KCP.
type Deps struct {
	Clock ports.Clock
	// Identities reaches runtimes through their admin kubeconfigs (ServiceAccounts, RBAC, TokenRequests); Secrets
	// stores the least-privilege kubeconfigs in the KCP.
	Identities ports.RuntimeIdentities
	Secrets    ports.IdentityKubeconfigStore
	// Access is the landscape's part of the no-escalation policy.
	Access sakubeconfig.AccessPolicy
	// RotationFraction is the share of a kubeconfig's validity after which it is rotated (the kubeconfig policy's).
	RotationFraction float64
	// CleanupTimeout bounds how long a deletion waits for an unreachable runtime (0: the domain's default).
	CleanupTimeout time.Duration
	// Workers are the concurrent reconciles (--serviceaccount-kubeconfig-workers).
	Workers int
}

// Reconciler is the ServiceAccountKubeconfig reconciler: the skeleton with this package's hooks.
type Reconciler = skeleton.Reconciler[*imv1.ServiceAccountKubeconfig, observed, usecase.IdentityResult]

// NewReconciler builds the reconciler on the manager's clients and deps (Workers is not used).
func NewReconciler(c client.Client, live client.Reader, deps Deps, m *Metrics, recorder events.EventRecorder) (*Reconciler, error) {
	return skeleton.NewReconciler(Reconciler{Client: c, Live: live, Clock: deps.Clock, Recorder: recorder, Finalizer: Finalizer,
		New: func() *imv1.ServiceAccountKubeconfig { return &imv1.ServiceAccountKubeconfig{} },
		Hooks: &hooks{metrics: m, identities: &usecase.IdentityKubeconfigs{Runtimes: deps.Identities, Secrets: deps.Secrets,
			Access: deps.Access, RotationFraction: deps.RotationFraction, CleanupTimeout: deps.CleanupTimeout}}})
}

// AddToManager registers the controller with the KCP manager.
func AddToManager(mgr manager.Manager, deps Deps) error {
	r, err := NewReconciler(mgr.GetClient(), mgr.GetAPIReader(), deps, NewMetrics(nil), mgr.GetEventRecorder("kim-"+Name))
	if err != nil {
		return fmt.Errorf("%s controller: %w", Name, err)
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &imv1.ServiceAccountKubeconfig{}, runtimeIDField,
		func(o client.Object) []string {
			if s, ok := o.(*imv1.ServiceAccountKubeconfig); ok {
				return []string{s.Spec.RuntimeID}
			}
			return nil
		}); err != nil {
		return fmt.Errorf("index ServiceAccountKubeconfigs by runtime: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		// Every change but status-only and label-only updates (our own status patches; the request reads no label).
		For(&imv1.ServiceAccountKubeconfig{}, builder.WithPredicates(skeleton.IgnoreStatusOnly(false))).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(secretOwners(mgr.GetClient()))).
		// Calls to runtimes happen at rotations and spec changes only, each bounded by a timeout: a few workers keep up
		// with thousands of objects (--serviceaccount-kubeconfig-workers, default 5).
		WithOptions(controller.Options{MaxConcurrentReconciles: deps.Workers}).
		Complete(r)
}

// secretOwners maps a Secret to the ServiceAccountKubeconfigs it concerns: the owner of a kubeconfig Secret written
// for one (someone changed or deleted it), and every ServiceAccountKubeconfig of a runtime whose admin kubeconfig
// Secret changed (the runtime became reachable, or was re-created).
func secretOwners(c client.Reader) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		if ns, name, ok := strings.Cut(o.GetAnnotations()[sakubeconfig.AnnotationOwner], "/"); ok && ns == o.GetNamespace() && name != "" {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
		}
		runtimeID, ok := strings.CutPrefix(o.GetName(), "kubeconfig-")
		if !ok {
			return nil
		}
		var list imv1.ServiceAccountKubeconfigList
		if err := c.List(ctx, &list, client.InNamespace(o.GetNamespace()), client.MatchingFields{runtimeIDField: runtimeID}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "list ServiceAccountKubeconfigs of a runtime", "runtimeID", runtimeID)
			return nil
		}
		out := make([]reconcile.Request, 0, len(list.Items))
		for _, s := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Name}})
		}
		return out
	}
}
