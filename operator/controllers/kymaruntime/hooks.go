package kymaruntime

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	"github.com/kyma-project/kim/internal/mapping"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
)

// Finalizer keeps a Runtime until its access is removed and its shoot is marked for deletion.
const Finalizer = "infrastructuremanager.kyma-project.io/runtime"

// PreviousFinalizer is the previous infrastructure manager's finalizer on Runtimes (its api/v1 Finalizer): it
// kept a Runtime until that manager's deletion was done. Runtimes created before the switch-over carry it; it
// stands for the duty of Finalizer, so the operator takes it over: a Runtime being deleted that carries it is torn
// down as if it carried Finalizer, and it is removed with Finalizer (skeleton.Reconciler.Predecessors).
const PreviousFinalizer = "runtime-controller.infrastructure-manager.kyma-project.io/deletion-hook"

// conditionRuntimeConfigured is the condition earlier versions of the operator recorded the configured generation
// in; status.runtimeConfiguration replaced it and it is removed.
const conditionRuntimeConfigured = "RuntimeConfigured"

// Reconciler is the Runtime reconciler: the skeleton with this package's hooks.
type Reconciler = skeleton.Reconciler[*imv1.Runtime, usecase.RuntimeRequest, usecase.ProvisionResult]

// NewReconciler builds the Runtime reconciler on the manager's clients and the use cases; Gardener's progress is
// written into a Runtime's status at most every progressEvery (0: every change).
func NewReconciler(c client.Client, live client.Reader, clock ports.Clock, recorder events.EventRecorder, m *Metrics,
	provision *usecase.Provisioner, teardown *usecase.Teardown, progressEvery time.Duration) (*Reconciler, error) {
	return skeleton.NewReconciler(Reconciler{Client: c, Live: live, Clock: clock, Recorder: recorder, Finalizer: Finalizer,
		Predecessors: []string{PreviousFinalizer}, New: func() *imv1.Runtime { return &imv1.Runtime{} },
		Hooks: &hooks{provision: provision, teardown: teardown, metrics: m, progressEvery: progressEvery}, AwaitStatus: statusAwait})
}

// statusAwait bounds how long a Runtime reconcile waits for the cache to show its status write. Shoot events come
// every few seconds while Gardener works; one that arrives before the cache saw the recorded configuration hash would
// configure the runtime again with the same state.
const statusAwait = 2 * time.Second

// hooks are the Runtime controller's part of the skeleton: CR <-> provisioning and teardown use cases. They hold
// no state between reconciles except metrics.
type hooks struct {
	provision     *usecase.Provisioner
	teardown      *usecase.Teardown
	metrics       *Metrics
	progressEvery time.Duration
}

type state = skeleton.State[*imv1.Runtime]

// LogValues implements skeleton.LogKeys.
func (h *hooks) LogValues(rt *imv1.Runtime) []any {
	return []any{"runtimeID", mapping.RuntimeID(rt), "shoot", rt.Spec.Shoot.Name}
}

// Observe implements skeleton.Hooks. The runtime ID is the mapping's (mapping.RuntimeID).
func (h *hooks) Observe(s *state) usecase.RuntimeRequest {
	rt := s.Obj
	domain := mapping.Runtime(rt)
	req := usecase.RuntimeRequest{Runtime: domain, Namespace: rt.Namespace, UID: string(rt.UID), Labels: rt.Labels,
		Plan:           rt.Labels[imv1.LabelBrokerPlanName],
		SuspendPatch:   rt.Annotations[imv1.AnnotationSuspendPatchReconciliation] == "true",
		ForcePatch:     rt.Annotations[imv1.AnnotationForcePatchReconciliation] == "true",
		AuditLogAccess: ptr.Deref(rt.Spec.AuditLogAccessEnabled, false), AuditLogCR: rt.Status.AuditLogCR,
		InstanceID: rt.Labels[imv1.LabelInstanceID], InstanceName: rt.Labels[imv1.LabelKymaName], EverReady: rt.Status.ProvisioningCompleted,
		StateReady: rt.Status.State == imv1.RuntimeStateReady, ShootInSyncRecord: rt.Status.ShootInSync}
	if rc := rt.Status.RuntimeConfiguration; rc != nil {
		req.Configured = usecase.RecordedConfiguration{Hash: rc.Hash, AppliedAt: timeOf(rc.AppliedAt), ShootReconciledAt: timeOf(rc.ShootReconciledAt),
			Bootstrap: runtimeconfig.BootstrapRecord{Hash: rc.BootstrapHash, Failed: rc.BootstrapFailed}}
	}
	return req
}

// Act implements skeleton.Hooks.
func (h *hooks) Act(ctx context.Context, _ *state, req usecase.RuntimeRequest, now time.Time) (usecase.ProvisionResult, error) {
	return h.provision.Provision(ctx, req, now)
}

// Status implements skeleton.Hooks. An error of the use case writes nothing: it is retried with backoff.
func (h *hooks) Status(ctx context.Context, s *state, res usecase.ProvisionResult, err error, now time.Time) skeleton.Result {
	if err != nil {
		return skeleton.Result{}
	}
	rt, d := s.Obj, res.Decision
	before := rt.DeepCopy()
	out := skeleton.Result{RequeueAfter: d.RequeueAfter, Events: h.events(res.Events)}
	if res.ClearForcePatch {
		out.ClearAnnotations = []string{imv1.AnnotationForcePatchReconciliation}
	}
	if d.Transient {
		ctrl.LoggerFrom(ctx).Info("action failed", "step", d.Step, "reason", d.Reason, "message", d.Message)
		out.Retry = fmt.Errorf("%s", d.Message)
	}
	setStatus(rt, res, now)
	if res.AuditLogCR != "" {
		rt.Status.AuditLogCR = res.AuditLogCR
	}
	if due, held := holdProgress(before.Status, &rt.Status, h.progressEvery, rt.CreationTimestamp.Time, now); held {
		h.metrics.progressHeld.Inc()
		out.RequeueAfter = sooner(out.RequeueAfter, due)
	}
	keepRecordForALaterWrite(before, rt)
	out.Events = append(out.Events, h.report(rt, before, d, now)...)
	return out
}

// keepRecordForALaterWrite leaves the status's record of the shoot found in sync as it was when the record is the
// only change: alone it is worth no write. Written alone, the first pass of a version that keeps it would write
// every Runtime of the fleet once, and a restart or a hand-over would no longer be free of writes. It goes with the
// next write for another reason, at the latest Gardener's next report on the shoot; until then a restart compares
// that shoot, as it did before there was a record.
func keepRecordForALaterWrite(before, rt *imv1.Runtime) {
	rec := rt.Status.ShootInSync
	if rec == before.Status.ShootInSync {
		return
	}
	rt.Status.ShootInSync = before.Status.ShootInSync
	if skeleton.StatusChanged(before, rt) {
		rt.Status.ShootInSync = rec
	}
}

// Finalize implements skeleton.FinalizeHandler: the teardown use case, and the Runtime goes when it says so.
func (h *hooks) Finalize(ctx context.Context, s *state, now time.Time) (skeleton.Result, error) {
	rt := s.Obj
	var out skeleton.Result
	if rt.Status.State != imv1.RuntimeStateTerminating {
		rt.Status.State = imv1.RuntimeStateTerminating
		out.Events = append(out.Events, skeleton.Event{Reason: "Deleting", Action: "Teardown",
			Message: fmt.Sprintf("Removing access and marking shoot %s for deletion", rt.Spec.Shoot.Name)})
	}
	doc, err := mapping.RestoreDocument(rt)
	if err != nil {
		return out, err
	}
	res, err := h.teardown.Run(ctx, usecase.TeardownRequest{RuntimeID: mapping.RuntimeID(rt), Namespace: rt.Namespace, ShootName: rt.Spec.Shoot.Name,
		Plan: rt.Labels[imv1.LabelBrokerPlanName], EverReady: rt.Status.ProvisioningCompleted, RestoreDocument: doc,
		CredentialsBinding: rt.Spec.Shoot.SecretBindingName, DeletionStarted: deletionStarted(rt)}, now)
	out.Events = append(out.Events, h.events(res.Events)...)
	ctrl.LoggerFrom(ctx).Info("runtime deletion step", "release", res.Release, "message", res.Message)
	setDeprovisioned(rt, res, err, now)
	if err != nil {
		return out, err
	}
	out.RequeueAfter, out.Release = res.RequeueAfter, res.Release
	if res.Release {
		h.metrics.SetRuntime(rt.Namespace+"/"+rt.Name, "", "")
	}
	return out, nil
}

// Gone implements skeleton.GoneHandler: a Runtime that no longer exists is forgotten by the metrics.
func (h *hooks) Gone(_ context.Context, s *state, _ time.Time) (skeleton.Result, error) {
	h.metrics.SetRuntime(s.Key().String(), "", "")
	return skeleton.Result{}, nil
}

// events counts the use case's events and returns them for the skeleton to record (clipped: appending to them
// leaves the use case's result alone).
func (h *hooks) events(evs []usecase.Event) []skeleton.Event {
	for _, e := range evs {
		h.metrics.count(e.Reason)
	}
	return slices.Clip(evs)
}

// deletionStarted is when the Runtime's deletion began (zero when it has no deletion timestamp).
func deletionStarted(rt *imv1.Runtime) time.Time {
	if rt.DeletionTimestamp == nil {
		return time.Time{}
	}
	return rt.DeletionTimestamp.Time
}
