package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/mapping"
)

// Finalizer keeps a Runtime until its access is removed and its shoot is marked for deletion.
const Finalizer = "infrastructuremanager.kyma-project.io/runtime"

// AnnotationRestore set to "true" on a new Runtime lets it take over a shoot of the same name that waits for
// deletion (instead of that cluster being deleted first). `kim restore` sets it.
const AnnotationRestore = "infrastructuremanager.kyma-project.io/restore"

// ConditionRuntimeConfigured records (in its observedGeneration) the generation whose administrators were configured.
const ConditionRuntimeConfigured = "RuntimeConfigured"

// maxActionsPerReconcile bounds the decide-act loop; every action moves the observation forward, so a handful
// suffices to go from a reconciled shoot to Ready in one reconcile.
const maxActionsPerReconcile = 6

// Reconciler reconciles one Runtime through the domain state machine. It holds no state between reconciles
// except metrics: everything it needs is on the Runtime, the shoot and the KCP objects.
type Reconciler struct {
	Client       client.Client
	Shoots       ports.Shoots
	Seeds        ports.Seeds
	Access       ports.AccessObjects
	Configurator ports.RuntimeConfigurator
	Clock        interface{ Now() time.Time }
	ShootConfig  shoot.Config
	Policy       deletion.Policy
	Recorder     record.EventRecorder
	Metrics      *Metrics
	// Addresses are the control plane's egress CIDRs API server ACLs include; nil: ACLs are refused.
	Addresses ports.ControlPlaneAddresses
	// Credentials switches adopted shoots from SecretBindings to CredentialsBindings; nil: not done.
	Credentials ports.CredentialsMigrator
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rt := &imv1.Runtime{}
	if err := r.Client.Get(ctx, req.NamespacedName, rt); err != nil {
		if apierrors.IsNotFound(err) {
			r.Metrics.SetRuntime(req.String(), "", "")
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get runtime %s: %w", req, err)
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("runtimeID", rt.Name, "shoot", rt.Spec.Shoot.Name))
	if !rt.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, rt)
	}
	if !controllerutil.ContainsFinalizer(rt, Finalizer) {
		controllerutil.AddFinalizer(rt, Finalizer)
		if err := r.Client.Update(ctx, rt); err != nil {
			return ctrl.Result{}, fmt.Errorf("add finalizer to runtime %s: %w", rt.Name, err)
		}
	}
	before := rt.DeepCopy()
	now := r.Clock.Now()
	in, spec, err := r.observe(ctx, rt)
	if err != nil {
		return ctrl.Result{}, err
	}
	d := lifecycle.Decide(in, now)
	for i := 0; i < maxActionsPerReconcile && d.Action != lifecycle.ActionNone; i++ {
		next, stop, err := r.act(ctx, rt, in, spec, d, now)
		if err != nil {
			ctrl.LoggerFrom(ctx).Info("action failed", "action", d.Action, "error", err.Error())
			d = lifecycle.ActionFailed(d, actionError(err))
			break
		}
		in = next
		if stop {
			d.RequeueAfter = time.Second // the observation changed shape (restore): look again from scratch
			break
		}
		d = lifecycle.Decide(in, now)
	}
	r.setStatus(rt, in, d, now)
	if err := r.Client.Status().Patch(ctx, rt, client.MergeFrom(before)); err != nil {
		return ctrl.Result{}, fmt.Errorf("patch status of runtime %s: %w", rt.Name, err)
	}
	r.report(rt, before, d, now)
	if d.Transient {
		return ctrl.Result{}, errors.New(d.Message)
	}
	return ctrl.Result{RequeueAfter: d.RequeueAfter}, nil
}

// observe builds the domain input: the intent from the Runtime (with the generated spec), the shoot and access.
func (r *Reconciler) observe(ctx context.Context, rt *imv1.Runtime) (lifecycle.Input, shoot.Spec, error) {
	name := rt.Spec.Shoot.Name
	observed, err := r.Shoots.Get(ctx, name)
	if err != nil {
		return lifecycle.Input{}, shoot.Spec{}, fmt.Errorf("observe shoot %s: %w", name, err)
	}
	it := lifecycle.Intent{
		RuntimeID: rt.Name, Generation: rt.Generation, ShootName: name, Region: rt.Spec.Shoot.Region,
		EnforceSeedLocation: rt.Spec.Shoot.EnforceSeedLocation != nil && *rt.Spec.Shoot.EnforceSeedLocation,
		SuspendPatch:        rt.Annotations[imv1.AnnotationSuspendPatchReconciliation] == "true",
		ForcePatch:          rt.Annotations[imv1.AnnotationForcePatchReconciliation] == "true",
		RestoreRequested:    rt.Annotations[AnnotationRestore] == "true",
	}
	domainRuntime := mapping.Runtime(rt)
	shootConfig, err := r.shootConfig(ctx, domainRuntime)
	if err != nil {
		return lifecycle.Input{}, shoot.Spec{}, err
	}
	// fresh is what the Runtime and the configuration ask for; its hash changes only when they do. The spec to
	// apply to an existing shoot also takes what the update rules keep from it (completed or maintained versions,
	// zone order), which Gardener changes without anything to re-apply.
	fresh, genErr := shoot.Generate(domainRuntime, shootConfig)
	spec := fresh
	owned := observed.OwnedBy(rt.Name) && observed.Marks.PendingDeletion == nil
	if genErr == nil && owned {
		cur, err := r.Shoots.Current(ctx, name)
		if err != nil {
			return lifecycle.Input{}, shoot.Spec{}, fmt.Errorf("observe shoot %s: %w", name, err)
		}
		if cur != nil {
			spec, genErr = shoot.GenerateUpdate(domainRuntime, shootConfig, *cur)
		}
	}
	if genErr != nil {
		it.Invalid = &lifecycle.Problem{Field: "spec", Message: genErr.Error()}
		if ve := shoot.AsValidationError(genErr); ve != nil {
			it.Invalid = &lifecycle.Problem{Field: ve.Field, Message: fmt.Sprintf("%s (%s)", ve.Message, ve.Reason)}
		}
	} else {
		it.DesiredSpecHash = specHash(fresh)
		if owned {
			if it.ShootInSync, err = r.Shoots.InSync(ctx, desiredShoot(rt, spec, it.DesiredSpecHash)); err != nil {
				return lifecycle.Input{}, shoot.Spec{}, fmt.Errorf("observe shoot %s: %w", name, err)
			}
		}
	}
	in := lifecycle.Input{Intent: it, Shoot: observed, DeletionsFrozen: r.Policy.Frozen}
	if genErr == nil && observed.Exists {
		if in.Access.GardenerClusterInSync, err = r.Access.InSync(ctx, r.gardenerCluster(rt, spec)); err != nil {
			return lifecycle.Input{}, shoot.Spec{}, err
		}
		if in.Access.SecretExists, err = r.Access.KubeconfigReady(ctx, rt.Namespace, rt.Name); err != nil {
			return lifecycle.Input{}, shoot.Spec{}, err
		}
	}
	if c := meta.FindStatusCondition(rt.Status.Conditions, ConditionRuntimeConfigured); c != nil && c.Status == "True" {
		in.Access.ConfiguredGeneration = c.ObservedGeneration
	}
	return in, spec, nil
}

// act performs one decided action and folds its result into the input. stop asks to end this reconcile.
func (r *Reconciler) act(ctx context.Context, rt *imv1.Runtime, in lifecycle.Input, spec shoot.Spec, d lifecycle.Decision, now time.Time) (lifecycle.Input, bool, error) {
	name := rt.Spec.Shoot.Name
	switch d.Action {
	case lifecycle.ActionCheckSeed:
		ok, err := r.Seeds.SeedAvailable(ctx, rt.Spec.Shoot.Provider.Type, rt.Spec.Shoot.Region)
		return in.WithSeed(ok), false, err
	case lifecycle.ActionApplyShoot:
		ctrl.LoggerFrom(ctx).Info("applying shoot", "reason", d.Reason, "message", d.Message)
		if err := r.migrateCredentialsBinding(ctx, rt, spec); err != nil {
			return in, false, err
		}
		s, err := r.Shoots.Apply(ctx, desiredShoot(rt, spec, in.Intent.DesiredSpecHash))
		if err != nil {
			return in, false, err
		}
		// People see why their shoot was changed: creation, a new generation, configuration, drift, or force.
		r.Recorder.Event(rt, "Normal", "ShootApplied", d.Message)
		if in.Intent.ForcePatch {
			if err := r.clearAnnotation(ctx, rt, imv1.AnnotationForcePatchReconciliation); err != nil {
				return in, false, err
			}
		}
		return in.WithAppliedShoot(s), false, nil
	case lifecycle.ActionRetryShoot:
		attempts := 0
		if in.Shoot.Marks.RetryShootGeneration == in.Shoot.Generation {
			attempts = in.Shoot.Marks.RetryAttempts
		}
		s, err := r.Shoots.RequestRetry(ctx, name, attempts+1, now)
		return in.WithShoot(s), false, err
	case lifecycle.ActionDeleteOldCluster:
		if err := r.Shoots.Delete(ctx, name); err != nil {
			return in, false, err
		}
		r.Metrics.deletionsExecuted.Inc()
		s, err := r.Shoots.Get(ctx, name)
		if err == nil && !s.Deleting() && s.Exists {
			return in, true, nil // the cache has not seen the deletion yet
		}
		return in.WithShoot(s), false, err
	case lifecycle.ActionRestoreCluster:
		s, err := r.Shoots.CancelDeletion(ctx, name, rt.Name)
		if err != nil {
			return in, false, err
		}
		r.Metrics.recoveries.Inc()
		r.Recorder.Eventf(rt, "Normal", "ClusterRestored", "Shoot %s taken over from pending deletion and woken up", name)
		return in.WithShoot(s), true, nil
	case lifecycle.ActionAdoptShoot:
		s, err := r.Shoots.Adopt(ctx, name, rt.Name)
		if err != nil {
			return in, false, err
		}
		r.Recorder.Eventf(rt, "Normal", "ShootAdopted", "Shoot %s, created for this runtime by the previous infrastructure manager, is now managed by this operator", name)
		return in.WithShoot(s), true, nil
	case lifecycle.ActionEnsureGardenerCluster:
		return in.WithGardenerCluster(), false, r.Access.Ensure(ctx, r.gardenerCluster(rt, spec))
	case lifecycle.ActionConfigureRuntime:
		err := r.Configurator.Configure(ctx, ports.RuntimeConfig{RuntimeID: rt.Name, Administrators: rt.Spec.Security.Administrators})
		return in.WithRuntimeConfigured(), false, err
	}
	return in, true, fmt.Errorf("unknown action %q", d.Action)
}

// shootApply is the desired state of the Runtime's shoot; InSync and Apply must see the same one.
func desiredShoot(rt *imv1.Runtime, spec shoot.Spec, hash string) ports.ShootApply {
	return ports.ShootApply{Spec: spec, RuntimeID: rt.Name, RuntimeGeneration: rt.Generation, SpecHash: hash}
}

func (r *Reconciler) gardenerCluster(rt *imv1.Runtime, spec shoot.Spec) ports.GardenerClusterSpec {
	gc := ports.GardenerClusterSpec{Namespace: rt.Namespace, RuntimeID: rt.Name, OwnerUID: string(rt.UID),
		ShootName: rt.Spec.Shoot.Name, SecretName: kube.SecretName(rt.Name), SecretKey: kube.SecretKey, Labels: map[string]string{}}
	for k, v := range rt.Labels {
		gc.Labels[k] = v
	}
	if spec.DNS != nil {
		gc.SKRDomain = spec.DNS.Domain
	}
	return gc
}

func (r *Reconciler) clearAnnotation(ctx context.Context, rt *imv1.Runtime, key string) error {
	before := rt.DeepCopy()
	delete(rt.Annotations, key)
	if err := r.Client.Patch(ctx, rt, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("remove annotation %s from runtime %s: %w", key, rt.Name, err)
	}
	return nil
}

func actionError(err error) lifecycle.ActionError {
	return lifecycle.ActionError{Message: err.Error(),
		Permanent: errors.Is(err, ports.ErrShootRejected) || errors.Is(err, ports.ErrShootNotManaged)}
}

// specHash identifies a generated spec; equal specs hash equally because encoding/json sorts map keys.
func specHash(s shoot.Spec) string {
	raw, err := json.Marshal(s)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:12])
}
