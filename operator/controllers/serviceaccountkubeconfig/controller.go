// Package serviceaccountkubeconfig is the controller of ServiceAccountKubeconfigs: it maps the custom resource to
// the least-privilege kubeconfig use case (core/usecase.IdentityKubeconfigs) and its results to status, events
// and metrics.
package serviceaccountkubeconfig

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

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

	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/app"
)

// Name of the controller in logs and metrics.
const Name = "serviceaccountkubeconfig"

// runtimeIDField indexes ServiceAccountKubeconfigs by spec.runtimeID, to find those of a runtime whose admin
// kubeconfig Secret changed.
const runtimeIDField = "spec.runtimeID"

// Controller is the ServiceAccountKubeconfig controller as the operator registers it (app.Controller).
type Controller struct {
	// Identities replaces the runtime adapter (tests); nil reaches runtimes through their admin kubeconfig Secrets.
	Identities ports.RuntimeIdentities
	// Clock replaces the wall clock; nil uses it.
	Clock ports.Clock
	// CleanupTimeout bounds how long a deletion waits for an unreachable runtime (0: the domain's default).
	CleanupTimeout time.Duration
	// SkipNameValidation allows a second manager with this controller in the same process (tests, the sandbox).
	SkipNameValidation bool
}

var _ app.Controller = Controller{}

// Name implements app.Controller.
func (Controller) Name() string { return Name }

// SetupWithManager implements app.Controller. The garden is not used: runtimes are reached through the admin
// kubeconfig Secrets in the KCP.
func (c Controller) SetupWithManager(mgr manager.Manager, _ cluster.Cluster, opts app.Options) error {
	ids := c.Identities
	if ids == nil {
		ids = &kube.RuntimeIdentities{KCP: mgr.GetClient()}
	}
	clk := c.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	var access sakubeconfig.AccessPolicy
	if opts.Config != nil {
		access.ClusterWideSecretsNamespaces = opts.Config.ServiceAccountKubeconfigs.ClusterWideSecretsNamespaces
	}
	r := &Reconciler{
		Client:     mgr.GetClient(),
		LiveReader: mgr.GetAPIReader(),
		UseCase: &usecase.IdentityKubeconfigs{
			Runtimes: ids, Secrets: kube.NewIdentityKubeconfigStore(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetClient()),
			Access: access, RotationFraction: opts.KubeconfigRotationFraction, CleanupTimeout: c.CleanupTimeout,
		},
		Clock:    clk,
		Recorder: mgr.GetEventRecorder("kim-" + Name),
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
		For(&imv1.ServiceAccountKubeconfig{}, builder.WithPredicates(relevantChange())).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(secretOwners(mgr.GetClient()))).
		// Calls to runtimes happen at rotations and spec changes only, each bounded by a timeout: a few workers keep up
		// with thousands of objects (--serviceaccount-kubeconfig-workers, default 5).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.ServiceAccountKubeconfigWorkers, SkipNameValidation: &c.SkipNameValidation}).
		Complete(r)
}

// relevantChange lets through every change except status-only updates (our own status patches).
func relevantChange() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld, e.ObjectNew
		return o.GetGeneration() != n.GetGeneration() ||
			!maps.Equal(o.GetAnnotations(), n.GetAnnotations()) ||
			!o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp()) ||
			len(o.GetFinalizers()) != len(n.GetFinalizers())
	}}
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
