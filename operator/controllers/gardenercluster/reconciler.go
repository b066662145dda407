// Package gardenercluster keeps the kubeconfig Secret of every GardenerCluster filled with a valid admin kubeconfig:
// it issues one through Gardener when the rotation policy says so (and only then), rotates on demand, and removes
// the Secret with the GardenerCluster.
package gardenercluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// Finalizer keeps a GardenerCluster until its kubeconfig Secret is gone.
const Finalizer = "infrastructuremanager.kyma-project.io/kubeconfig-secret"

// Retry intervals after Gardener refused a kubeconfig for a reason a quick retry does not fix. Transient errors
// are returned instead and retried with the controller's exponential backoff.
const (
	retryShootNotReady = 30 * time.Second
	retryShootNotFound = time.Minute
	retryForbidden     = 5 * time.Minute
)

// RBAC in KCP, least privilege: GardenerClusters are only patched (finalizer, force annotation) never updated;
// Secrets are written by server-side apply (patch; create for the first apply) and deleted; events use the
// events.k8s.io API. Requesting admin kubeconfigs needs shoots/adminkubeconfig create in the Gardener project,
// which is granted there, not by this role.
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=gardenerclusters,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=gardenerclusters/status,verbs=get;patch
// +kubebuilder:rbac:groups="",namespace=kcp-system,resources=secrets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,namespace=kcp-system,resources=events,verbs=create;patch

// Reconciler reconciles GardenerClusters. Its dependencies are ports, so tests run it on fakes.
type Reconciler struct {
	// Client reads GardenerClusters (cached) and patches them.
	Client client.Client
	// LiveReader reads GardenerClusters from the API server, to confirm a decision before calling Gardener.
	LiveReader client.Reader
	Issuer     ports.KubeconfigIssuer
	Store      ports.KubeconfigSecretStore
	// Shoots reads shoots from the garden cache, to refuse a shoot of another runtime; nil skips that check.
	Shoots   ports.ShootReader
	Clock    ports.Clock
	Policy   kubeconfig.Policy
	Recorder events.EventRecorder
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var gc imv1.GardenerCluster
	if err := r.Client.Get(ctx, req.NamespacedName, &gc); apierrors.IsNotFound(err) {
		return ctrl.Result{}, r.deleteOrphans(ctx, req.NamespacedName)
	} else if err != nil {
		return ctrl.Result{}, fmt.Errorf("get gardener cluster %s: %w", req.NamespacedName, err)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("runtimeID", gc.Name, "shoot", gc.Spec.Shoot.Name)
	ctx = ctrl.LoggerInto(ctx, log)
	if !gc.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, &gc)
	}
	if err := r.ensureFinalizer(ctx, &gc); err != nil {
		return ctrl.Result{}, err
	}
	before := gc.DeepCopy()
	res, err := r.reconcileSecret(ctx, &gc, before)
	if statusChanged(before, &gc) {
		// A merge patch of the status carries no resourceVersion: it cannot conflict with writers of other fields.
		if perr := r.Client.Status().Patch(ctx, &gc, client.MergeFrom(before)); perr != nil && !apierrors.IsNotFound(perr) {
			err = errors.Join(err, fmt.Errorf("patch status of gardener cluster %s: %w", req.NamespacedName, perr))
		}
	}
	return res, err
}

func secretRef(gc *imv1.GardenerCluster) ports.SecretRef {
	s := gc.Spec.Kubeconfig.Secret
	return ports.SecretRef{Namespace: s.Namespace, Name: s.Name, Key: s.Key}
}

func forced(gc *imv1.GardenerCluster) bool {
	return gc.Annotations[imv1.AnnotationForceKubeconfigRotation] == "true"
}

// observation is what one decision about a GardenerCluster's Secret was taken on.
type observation struct {
	decision kubeconfig.Decision
	md       ports.KubeconfigSecretMetadata
	verdict  kubeconfig.SecretVerdict
	shoot    kubeconfig.ShootRef
}

// decide reads the Secret's metadata in the given mode, checks that the GardenerCluster may write it and may have
// the shoot's kubeconfig (a refusal is returned as the error, wrapping the kubeconfig package's errors), and
// applies the rotation policy.
func (r *Reconciler) decide(ctx context.Context, gc *imv1.GardenerCluster, mode ports.ReadMode) (observation, error) {
	md, err := r.Store.ReadMetadata(ctx, secretRef(gc), mode)
	ex, err := existing(md, err)
	if err != nil {
		return observation{}, err
	}
	o := observation{md: md}
	if o.verdict, err = kubeconfig.CheckSecret(gc.Namespace, gc.Name, gc.Spec.Kubeconfig.Secret.Namespace, ex); err != nil {
		return o, err
	}
	if o.shoot, err = r.shootRef(ctx, gc); err != nil {
		return o, err
	}
	rec := kubeconfig.Recorded{}
	if ex != nil {
		rec = kubeconfig.Recorded{SecretExists: true, HasKubeconfig: md.HasKubeconfig,
			IssuedAt: md.Annotations[kubeconfig.AnnotationLastSync], ExpiresAt: md.Annotations[kubeconfig.AnnotationExpiresAt],
			Shoot: kubeconfig.ShootRef{Name: md.Annotations[kubeconfig.AnnotationShootName], UID: md.Annotations[kubeconfig.AnnotationShootUID]}}
	}
	o.decision = r.Policy.Decide(r.Clock.Now(), gc.Name, rec, forced(gc), o.shoot)
	return o, nil
}

// refused tells an ownership refusal from a failure to read.
func refused(err error) bool {
	for _, e := range []error{kubeconfig.ErrSecretOtherNamespace, kubeconfig.ErrSecretNotOwned, kubeconfig.ErrShootOfAnotherRuntime,
		kubeconfig.ErrShootPendingDeletion} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// reconcileSecret decides from the Secret's metadata and issues a kubeconfig only when the policy says so. It
// updates gc's status in memory; the caller patches the difference to before.
func (r *Reconciler) reconcileSecret(ctx context.Context, gc, before *imv1.GardenerCluster) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	o, err := r.decide(ctx, gc, ports.ReadCached)
	if refused(err) {
		r.refuse(gc, err)
		return ctrl.Result{RequeueAfter: retryRefused}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	fresh := false
	if o.decision.Issue {
		// The cache may lag behind our own last write or the removal of the force annotation; confirm with the API
		// server before spending a Gardener call, so one rotation never becomes two.
		live, err := r.confirm(ctx, gc)
		if err != nil || live == nil {
			return ctrl.Result{}, err
		}
		o, err = r.decide(ctx, live, ports.ReadLive)
		useLive(gc, before, live)
		if refused(err) {
			r.refuse(gc, err)
			return ctrl.Result{RequeueAfter: retryRefused}, nil
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		fresh = true
	}
	d := o.decision
	if !d.Issue && !fresh && !succeeded(gc) {
		// The cache may not show the status written a moment ago (the reconcile right after the first kubeconfig,
		// triggered by our own Secret write, often runs before the status patch reached the cache). Without this
		// read, markValid would replace KubeconfigSecretCreated with KubeconfigSecretValid. Only clusters without a
		// recorded success pay for it, once.
		live, err := r.confirm(ctx, gc)
		if err != nil || live == nil {
			return ctrl.Result{}, err
		}
		useLive(gc, before, live)
	}
	if !d.Issue {
		if missing := kubeconfig.LabelsMissing(o.md.Labels, kubeconfig.SecretLabels(gc.Labels, gc.Name)); missing != nil {
			if err := r.Store.EnsureLabels(ctx, secretRef(gc), missing); err != nil {
				return ctrl.Result{}, fmt.Errorf("sync labels of the kubeconfig secret: %w", err)
			}
		}
		ExpirationTimestamp.WithLabelValues(gc.Name, gc.Spec.Shoot.Name).Set(float64(d.ExpiresAt.Unix()))
		markValid(gc, d.Detail)
		return ctrl.Result{RequeueAfter: requeueAt(d.RotateAt, r.Clock.Now())}, nil
	}
	log.Info("issuing kubeconfig", "trigger", d.Trigger, "why", d.Detail)
	return r.issue(ctx, gc, o)
}

// useLive makes the live GardenerCluster the one this reconcile works on and the baseline of the status patch, so
// the patch carries only what this reconcile changes, not the difference between a stale cache and the server.
func useLive(gc, before, live *imv1.GardenerCluster) {
	live.DeepCopyInto(before)
	live.DeepCopyInto(gc)
}

// confirm re-reads the GardenerCluster from the API server; nil when it is gone or being deleted.
func (r *Reconciler) confirm(ctx context.Context, gc *imv1.GardenerCluster) (*imv1.GardenerCluster, error) {
	var live imv1.GardenerCluster
	err := r.LiveReader.Get(ctx, types.NamespacedName{Namespace: gc.Namespace, Name: gc.Name}, &live)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("confirm gardener cluster %s/%s: %w", gc.Namespace, gc.Name, err)
	}
	if !live.DeletionTimestamp.IsZero() {
		return nil, nil
	}
	return &live, nil
}

// provisioning reports whether err only says that the shoot is not there or not ready yet, for a cluster that never
// had a kubeconfig.
func provisioning(gc *imv1.GardenerCluster, err error) bool {
	never := gc.Status.State == "" || gc.Status.State == imv1.GardenerClusterStatePending
	return never && (errors.Is(err, ports.ErrShootNotReady) || errors.Is(err, ports.ErrShootNotFound))
}

func (r *Reconciler) issue(ctx context.Context, gc *imv1.GardenerCluster, o observation) (ctrl.Result, error) {
	d := o.decision
	log := ctrl.LoggerFrom(ctx)
	issued, err := r.Issuer.IssueAdminKubeconfig(ctx, gc.Spec.Shoot.Name, r.Policy.Validity)
	GardenerRequests.WithLabelValues(outcome(err)).Inc()
	if err != nil {
		msg := fmt.Sprintf("Gardener did not issue a kubeconfig for shoot %s: %v", gc.Spec.Shoot.Name, err)
		if provisioning(gc, err) {
			// KEB creates the GardenerCluster together with the Runtime: a shoot that is still being created is
			// the normal case, not an error.
			setCondition(gc, imv1.GardenerClusterStatePending, metav1.ConditionFalse, ReasonWaitingForShoot, msg)
			r.Recorder.Eventf(gc, nil, "Normal", ReasonWaitingForShoot, "IssueKubeconfig", msg)
		} else {
			setCondition(gc, imv1.GardenerClusterStateError, metav1.ConditionFalse, ReasonFailedToGetKubeconfig, msg)
			r.Recorder.Eventf(gc, nil, "Warning", ReasonFailedToGetKubeconfig, "IssueKubeconfig", msg)
		}
		switch {
		case errors.Is(err, ports.ErrShootNotReady):
			return ctrl.Result{RequeueAfter: retryShootNotReady}, nil
		case errors.Is(err, ports.ErrShootNotFound):
			return ctrl.Result{RequeueAfter: retryShootNotFound}, nil
		case errors.Is(err, ports.ErrForbidden):
			log.Error(err, "Gardener refused the admin kubeconfig; check the operator's Gardener credentials")
			return ctrl.Result{RequeueAfter: retryForbidden}, nil
		}
		return ctrl.Result{}, fmt.Errorf("issue kubeconfig: %w", err)
	}
	now := r.Clock.Now()
	ref := secretRef(gc)
	if err := r.write(ctx, gc, o, ports.KubeconfigSecret{
		Ref: ref, OwnerNamespace: gc.Namespace, OwnerName: gc.Name, OwnerLabels: gc.Labels,
		Kubeconfig: issued.Kubeconfig, IssuedAt: now, ExpiresAt: issued.ExpiresAt, Shoot: o.shoot,
	}); refused(err) {
		r.refuse(gc, err)
		return ctrl.Result{RequeueAfter: retryRefused}, nil
	} else if err != nil {
		msg := fmt.Sprintf("writing the kubeconfig to Secret %s failed: %v", ref, err)
		setCondition(gc, imv1.GardenerClusterStateError, metav1.ConditionFalse, ReasonFailedToWriteSecret, msg)
		r.Recorder.Eventf(gc, nil, "Warning", ReasonFailedToWriteSecret, "WriteSecret", msg)
		return ctrl.Result{}, fmt.Errorf("write kubeconfig secret: %w", err)
	}
	ExpirationTimestamp.WithLabelValues(gc.Name, gc.Spec.Shoot.Name).Set(float64(issued.ExpiresAt.Unix()))
	reason, verb := ReasonSecretCreated, "created"
	if d.Trigger.Rotation() {
		reason, verb = ReasonSecretRotated, "rotated"
		Rotations.WithLabelValues(triggerLabel(d.Trigger)).Inc()
	}
	msg := fmt.Sprintf("kubeconfig Secret %s %s (%s), valid until %s", ref, verb, d.Trigger, kubeconfig.FormatTime(issued.ExpiresAt))
	setCondition(gc, imv1.GardenerClusterStateReady, metav1.ConditionTrue, reason, msg)
	r.Recorder.Eventf(gc, nil, "Normal", reason, "WriteSecret", msg)
	log.Info("kubeconfig written", "trigger", d.Trigger, "expiresAt", kubeconfig.FormatTime(issued.ExpiresAt))

	if forced(gc) {
		if err := r.clearForceAnnotation(ctx, gc); err != nil {
			return ctrl.Result{}, err
		}
	}
	rotateAt := r.Policy.RotateAt(gc.Name, now, issued.ExpiresAt)
	return ctrl.Result{RequeueAfter: requeueAt(rotateAt, now)}, nil
}

// write stores the issued kubeconfig in the Secret that was checked: a create when it did not exist, otherwise
// pinned to the version whose ownership was checked. Should the Secret change between the check and the write
// (someone else writes it), it is read and checked again, and the same kubeconfig written: Gardener is not asked
// twice.
func (r *Reconciler) write(ctx context.Context, gc *imv1.GardenerCluster, o observation, s ports.KubeconfigSecret) error {
	md, verdict := o.md, o.verdict
	for attempt := 0; ; attempt++ {
		s.ExpectAbsent = verdict == kubeconfig.SecretAbsent
		s.Precondition = ports.Precondition{UID: md.UID, ResourceVersion: md.ResourceVersion}
		err := r.Store.Write(ctx, s)
		if !errors.Is(err, ports.ErrConflict) || attempt == 2 {
			return err
		}
		var rerr error
		md, rerr = r.Store.ReadMetadata(ctx, s.Ref, ports.ReadLive)
		ex, rerr := existing(md, rerr)
		if rerr != nil {
			return rerr
		}
		if verdict, rerr = kubeconfig.CheckSecret(gc.Namespace, gc.Name, s.Ref.Namespace, ex); rerr != nil {
			return rerr
		}
	}
}

// clearForceAnnotation removes the force-rotation annotation with a merge patch that names only that key: it needs
// no resourceVersion and leaves every other field alone.
func (r *Reconciler) clearForceAnnotation(ctx context.Context, gc *imv1.GardenerCluster) error {
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:null}}}`, imv1.AnnotationForceKubeconfigRotation)
	target := &imv1.GardenerCluster{ObjectMeta: metav1.ObjectMeta{Name: gc.Name, Namespace: gc.Namespace}}
	if err := r.Client.Patch(ctx, target, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("remove force-rotation annotation: %w", err)
	}
	delete(gc.Annotations, imv1.AnnotationForceKubeconfigRotation)
	return nil
}

// requeueAt is the delay until t, at least a second so a rotation point that just passed does not spin.
func requeueAt(t, now time.Time) time.Duration {
	return max(t.Sub(now), time.Second)
}
