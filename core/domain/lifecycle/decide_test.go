package lifecycle_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kyma-project/kim/core/domain/deletion"
	lc "github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/shootstate"
)

var now = time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)

const rtID = "c8a3f1e2-0000-4000-8000-000000000001"

func intent() lc.Intent {
	return lc.Intent{RuntimeID: rtID, Generation: 3, ShootName: "c-1a2b3c", Region: "eu-central-1", DesiredSpecHash: "h3",
		ShootInSync: true}
}

// reconciled is our shoot, with generation 3 of the Runtime applied and reconciled by Gardener.
func reconciled() shootstate.Shoot {
	return shootstate.Shoot{
		Exists: true, Name: "c-1a2b3c", Generation: 5, ObservedGeneration: 5,
		LastOperation: &shootstate.Operation{Type: shootstate.OperationReconcile, State: shootstate.StateSucceeded, Progress: 100, LastUpdate: now.Add(-time.Hour)},
		Marks:         shootstate.Marks{Managed: true, RuntimeID: rtID, AppliedRuntimeGeneration: 3, AppliedSpecHash: "h3"},
	}
}

func ready() lc.Input {
	return lc.Input{Intent: intent(), Shoot: reconciled(),
		Access: lc.Access{GardenerClusterInSync: true, SecretExists: true,
			Configuration: lc.Configuration{DesiredHash: "c3", AppliedHash: "c3", AppliedAt: now.Add(-time.Minute)}}}
}

// creating is ready() while Gardener still runs the Create operation with the kube-apiserver already advertised.
func creating() lc.Input {
	in := ready()
	in.Shoot.LastOperation = &shootstate.Operation{Type: shootstate.OperationCreate, State: shootstate.StateProcessing, Progress: 60}
	in.Shoot.APIServerAdvertised = true
	return in
}

func failedShoot(codes ...shootstate.ErrorCode) shootstate.Shoot {
	s := reconciled()
	s.LastOperation = &shootstate.Operation{Type: shootstate.OperationReconcile, State: shootstate.StateFailed, Progress: 40,
		Description: "infrastructure failed", LastUpdate: now.Add(-10 * time.Second)}
	s.LastErrors = []shootstate.LastError{{Description: "cloud says no", Codes: codes}}
	return s
}

// brief is the part of a decision the table asserts; the message is checked for content separately.
type brief struct {
	Step    lc.Step
	Action  lc.Action
	State   lc.State
	Reason  lc.Reason
	Requeue time.Duration
}

// briefOf leaves out the requeue of Ready decisions: it is the time until the drift period passes (TestDrift).
func briefOf(d lc.Decision) brief {
	b := brief{Step: d.Step, Action: d.Action, State: d.State, Reason: d.Reason, Requeue: d.RequeueAfter}
	if d.State == lc.StateReady {
		b.Requeue = 0
	}
	return b
}

func TestDecide(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		reason      string
		in          func() lc.Input
		want        brief
		msgContains []string
	}{
		{
			reason: "an invalid spec fails at once with the field in the message",
			in: func() lc.Input {
				in := ready()
				in.Intent.Invalid = &lc.Problem{Field: "spec.shoot.networking.nodes", Message: "not a CIDR"}
				return in
			},
			want:        brief{lc.StepValidate, lc.ActionNone, lc.StateFailed, lc.ReasonSpecInvalid, lc.SlowRecheck},
			msgContains: []string{"spec.shoot.networking.nodes", "not a CIDR"},
		},
		{
			reason: "no shoot yet: create it",
			in:     func() lc.Input { return lc.Input{Intent: intent()} },
			want:   brief{lc.StepApplyShoot, lc.ActionApplyShoot, lc.StatePending, lc.ReasonCreatingShoot, 0},
		},
		{
			reason: "enforceSeedLocation without a seed check asks for one before creating",
			in: func() lc.Input {
				in := lc.Input{Intent: intent(), Access: lc.Access{Configuration: lc.Configuration{DesiredHash: "c3"}}}
				in.Intent.EnforceSeedLocation = true
				return in
			},
			want: brief{lc.StepCheckSeed, lc.ActionCheckSeed, lc.StatePending, lc.ReasonCheckingSeed, 0},
		},
		{
			reason: "enforceSeedLocation with no seed in the region fails with a clear condition",
			in: func() lc.Input {
				in := lc.Input{Intent: intent(), SeedAvailable: &no}
				in.Intent.EnforceSeedLocation = true
				return in
			},
			want:        brief{lc.StepCheckSeed, lc.ActionNone, lc.StateFailed, lc.ReasonSeedNotAvailable, lc.SlowRecheck},
			msgContains: []string{"eu-central-1", "enforceSeedLocation"},
		},
		{
			reason: "enforceSeedLocation with a seed creates the shoot",
			in: func() lc.Input {
				in := lc.Input{Intent: intent(), SeedAvailable: &yes}
				in.Intent.EnforceSeedLocation = true
				return in
			},
			want: brief{lc.StepApplyShoot, lc.ActionApplyShoot, lc.StatePending, lc.ReasonCreatingShoot, 0},
		},
		{
			reason: "the seed check is not repeated for an existing shoot",
			in: func() lc.Input {
				in := ready()
				in.Intent.EnforceSeedLocation = true
				return in
			},
			want: brief{lc.StepReady, lc.ActionNone, lc.StateReady, lc.ReasonReady, 0},
		},
		{
			reason: "a shoot the previous infrastructure manager created for this runtime is adopted, not a name clash",
			in: func() lc.Input {
				in := ready()
				in.Shoot.Marks = shootstate.Marks{RuntimeID: rtID}
				return in
			},
			want:        brief{lc.StepResolveShootName, lc.ActionAdoptShoot, lc.StatePending, lc.ReasonAdoptingShoot, 0},
			msgContains: []string{"previous infrastructure manager"},
		},
		{
			reason: "an unmarked shoot of another runtime is a name clash",
			in: func() lc.Input {
				in := ready()
				in.Shoot.Marks = shootstate.Marks{RuntimeID: "another-runtime"}
				return in
			},
			want: brief{lc.StepResolveShootName, lc.ActionNone, lc.StateFailed, lc.ReasonShootNameTaken, lc.SlowRecheck},
		},
		{
			reason: "an unmarked shoot being deleted is not adopted",
			in: func() lc.Input {
				in := ready()
				in.Shoot.Marks = shootstate.Marks{RuntimeID: rtID}
				in.Shoot.DeletionTimestamp = &now
				return in
			},
			want: brief{lc.StepResolveShootName, lc.ActionNone, lc.StateFailed, lc.ReasonShootNameTaken, lc.SlowRecheck},
		},
		{
			reason: "everything observed: Ready",
			in:     ready,
			want:   brief{lc.StepReady, lc.ActionNone, lc.StateReady, lc.ReasonReady, 0},
		},
		{
			reason: "a spec change leaves Ready at once: apply the new generation",
			in: func() lc.Input {
				in := ready()
				in.Intent.Generation = 4
				return in
			},
			want:        brief{lc.StepApplyShoot, lc.ActionApplyShoot, lc.StatePending, lc.ReasonUpdatingShoot, 0},
			msgContains: []string{"generation 4"},
		},
		{
			reason: "a shoot spec changed by someone else is re-applied (drift)",
			in: func() lc.Input {
				in := ready()
				in.Shoot.Generation, in.Shoot.ObservedGeneration = 6, 6
				in.Intent.ShootInSync = false
				return in
			},
			want:        brief{lc.StepApplyShoot, lc.ActionApplyShoot, lc.StatePending, lc.ReasonUpdatingShoot, 0},
			msgContains: []string{"outside the operator"},
		},
		{
			reason: "a generation Gardener bumped itself (seed binding, maintenance) is no drift while our values hold",
			in: func() lc.Input {
				in := ready()
				in.Shoot.Generation, in.Shoot.ObservedGeneration = 6, 6
				return in
			},
			want: brief{lc.StepReady, lc.ActionNone, lc.StateReady, lc.ReasonReady, 0},
		},
		{
			reason: "a changed operator configuration re-applies the shoot",
			in: func() lc.Input {
				in := ready()
				in.Intent.DesiredSpecHash = "h4"
				return in
			},
			want: brief{lc.StepApplyShoot, lc.ActionApplyShoot, lc.StatePending, lc.ReasonUpdatingShoot, 0},
		},
		{
			reason: "the force annotation re-applies an unchanged spec",
			in: func() lc.Input {
				in := ready()
				in.Intent.ForcePatch = true
				return in
			},
			want:        brief{lc.StepApplyShoot, lc.ActionApplyShoot, lc.StatePending, lc.ReasonUpdatingShoot, 0},
			msgContains: []string{"forced"},
		},
		{
			reason: "suspended patching keeps a new generation unapplied and says so (not Ready)",
			in: func() lc.Input {
				in := ready()
				in.Intent.Generation, in.Intent.SuspendPatch = 4, true
				return in
			},
			want:        brief{lc.StepApplyShoot, lc.ActionNone, lc.StatePending, lc.ReasonPatchSuspended, 0},
			msgContains: []string{"suspend-patch-reconciliation"},
		},
		{
			reason: "forcing while suspended applies once",
			in: func() lc.Input {
				in := ready()
				in.Intent.SuspendPatch, in.Intent.ForcePatch = true, true
				in.Intent.ShootInSync = false
				return in
			},
			want:        brief{lc.StepApplyShoot, lc.ActionApplyShoot, lc.StatePending, lc.ReasonUpdatingShoot, 0},
			msgContains: []string{"forced by annotation"},
		},
		{
			reason: "suspended patching ignores drift and stays Ready",
			in: func() lc.Input {
				in := ready()
				in.Intent.SuspendPatch = true
				in.Shoot.Generation, in.Shoot.ObservedGeneration = 6, 6
				in.Intent.ShootInSync = false
				return in
			},
			want: brief{lc.StepReady, lc.ActionNone, lc.StateReady, lc.ReasonReady, 0},
		},
		{
			reason: "after an apply Gardener has not seen the new generation: wait for the watch",
			in: func() lc.Input {
				in := ready()
				in.Shoot.Generation = 6
				return in
			},
			want: brief{lc.StepWaitForGardener, lc.ActionNone, lc.StatePending, lc.ReasonWaitingForGardener, 0},
		},
		{
			reason: "Gardener processing: Pending with Gardener's progress in the message",
			in: func() lc.Input {
				in := ready()
				in.Shoot.LastOperation = &shootstate.Operation{Type: shootstate.OperationCreate, State: shootstate.StateProcessing, Progress: 42, Description: "waiting for nodes"}
				return in
			},
			want:        brief{lc.StepWaitForGardener, lc.ActionNone, lc.StatePending, lc.ReasonWaitingForGardener, 0},
			msgContains: []string{"Create Processing (42%)", "waiting for nodes"},
		},
		{
			reason: "Gardener still creating but the kube-apiserver is advertised: create the GardenerCluster meanwhile",
			in: func() lc.Input {
				in := creating()
				in.Access = lc.Access{}
				return in
			},
			want:        brief{lc.StepEnsureGardenerCluster, lc.ActionEnsureGardenerCluster, lc.StatePending, lc.ReasonWaitingForGardener, 0},
			msgContains: []string{"Create Processing", "GardenerCluster " + rtID},
		},
		{
			reason: "Gardener still creating, the Secret exists: configure the runtime meanwhile",
			in: func() lc.Input {
				in := creating()
				in.Access.Configuration.AppliedHash = ""
				return in
			},
			want: brief{lc.StepConfigureRuntime, lc.ActionConfigureRuntime, lc.StatePending, lc.ReasonWaitingForGardener, 0},
		},
		{
			reason: "Gardener still creating, GardenerCluster there but no Secret yet: wait (the Secret's watch brings the next step)",
			in: func() lc.Input {
				in := creating()
				in.Access.SecretExists, in.Access.Configuration.AppliedHash = false, ""
				return in
			},
			want: brief{lc.StepWaitForGardener, lc.ActionNone, lc.StatePending, lc.ReasonWaitingForGardener, 0},
		},
		{
			reason: "Gardener still creating and access all set up early: still Pending until Gardener succeeds",
			in:     creating,
			want:   brief{lc.StepWaitForGardener, lc.ActionNone, lc.StatePending, lc.ReasonWaitingForGardener, 0},
		},
		{
			reason: "no kube-apiserver advertised yet: nothing to set up early",
			in: func() lc.Input {
				in := creating()
				in.Shoot.APIServerAdvertised = false
				in.Access = lc.Access{}
				return in
			},
			want: brief{lc.StepWaitForGardener, lc.ActionNone, lc.StatePending, lc.ReasonWaitingForGardener, 0},
		},
		{
			reason: "a hibernating shoot has no kube-apiserver to configure early",
			in: func() lc.Input {
				in := creating()
				in.Shoot.HibernationRequested = true
				in.Access.Configuration.AppliedHash = ""
				return in
			},
			want: brief{lc.StepWaitForGardener, lc.ActionNone, lc.StatePending, lc.ReasonWaitingForGardener, 0},
		},
		{
			reason: "Gardener in Error state retries by itself: keep waiting",
			in: func() lc.Input {
				in := ready()
				in.Shoot.LastOperation.State = shootstate.StateError
				return in
			},
			want: brief{lc.StepWaitForGardener, lc.ActionNone, lc.StatePending, lc.ReasonWaitingForGardener, 0},
		},
		{
			reason: "unauthenticated is not retryable: Failed with Gardener's message",
			in: func() lc.Input {
				in := ready()
				in.Shoot = failedShoot(shootstate.ErrInfraUnauthenticated)
				return in
			},
			want:        brief{lc.StepWaitForGardener, lc.ActionNone, lc.StateFailed, lc.ReasonGardenerFailed, 0},
			msgContains: []string{"ERR_INFRA_UNAUTHENTICATED", "cloud says no", "credentials"},
		},
		{
			reason: "unauthorized next to a retryable code is still not retryable",
			in: func() lc.Input {
				in := ready()
				in.Shoot = failedShoot(shootstate.ErrInfraQuotaExceeded, shootstate.ErrInfraUnauthorized)
				return in
			},
			want: brief{lc.StepWaitForGardener, lc.ActionNone, lc.StateFailed, lc.ReasonGardenerFailed, 0},
		},
		{
			reason: "quota exceeded just happened: Pending, retry scheduled after the first backoff",
			in: func() lc.Input {
				in := ready()
				in.Shoot = failedShoot(shootstate.ErrInfraQuotaExceeded)
				return in
			},
			want:        brief{lc.StepWaitForGardener, lc.ActionNone, lc.StatePending, lc.ReasonGardenerRetryScheduled, 20 * time.Second},
			msgContains: []string{"ERR_INFRA_QUOTA_EXCEEDED"},
		},
		{
			reason: "rate limits after the backoff passed: ask Gardener to retry",
			in: func() lc.Input {
				in := ready()
				in.Shoot = failedShoot(shootstate.ErrInfraRateLimitsExceeded)
				in.Shoot.LastOperation.LastUpdate = now.Add(-time.Minute)
				return in
			},
			want: brief{lc.StepWaitForGardener, lc.ActionRetryShoot, lc.StatePending, lc.ReasonGardenerRetryScheduled, 0},
		},
		{
			reason: "the second failure of the same generation waits twice as long",
			in: func() lc.Input {
				in := ready()
				in.Shoot = failedShoot(shootstate.ErrInfraDependencies)
				in.Shoot.LastOperation.LastUpdate = now.Add(-40 * time.Second)
				in.Shoot.Marks.RetryAttempts, in.Shoot.Marks.RetryShootGeneration = 1, 5
				in.Shoot.Marks.RetryRequestedAt = now.Add(-2 * time.Minute)
				return in
			},
			want: brief{lc.StepWaitForGardener, lc.ActionNone, lc.StatePending, lc.ReasonGardenerRetryScheduled, 20 * time.Second},
		},
		{
			reason: "a retry was requested and Gardener has not started it: do not ask again",
			in: func() lc.Input {
				in := ready()
				in.Shoot = failedShoot(shootstate.ErrRetryableConfigurationProblem)
				in.Shoot.LastOperation.LastUpdate = now.Add(-time.Hour)
				in.Shoot.Marks.RetryAttempts, in.Shoot.Marks.RetryShootGeneration = 1, 5
				in.Shoot.Marks.RetryRequestedAt = now.Add(-time.Second)
				return in
			},
			want: brief{lc.StepWaitForGardener, lc.ActionNone, lc.StatePending, lc.ReasonGardenerRetryScheduled, 0},
		},
		{
			reason: "retry counts of an older shoot generation do not count",
			in: func() lc.Input {
				in := ready()
				in.Shoot = failedShoot(shootstate.ErrConfigurationProblem)
				in.Shoot.LastOperation.LastUpdate = now.Add(-31 * time.Second)
				in.Shoot.Marks.RetryAttempts, in.Shoot.Marks.RetryShootGeneration = 7, 4
				in.Shoot.Marks.RetryRequestedAt = now.Add(-time.Hour)
				return in
			},
			want: brief{lc.StepWaitForGardener, lc.ActionRetryShoot, lc.StatePending, lc.ReasonGardenerRetryScheduled, 0},
		},
		{
			reason: "a failure without codes is retried a few times, then Failed",
			in: func() lc.Input {
				in := ready()
				in.Shoot = failedShoot()
				in.Shoot.Marks.RetryAttempts, in.Shoot.Marks.RetryShootGeneration = 3, 5
				return in
			},
			want:        brief{lc.StepWaitForGardener, lc.ActionNone, lc.StateFailed, lc.ReasonGardenerFailed, 0},
			msgContains: []string{"3 retries"},
		},
		{
			reason: "a stale failure of an older generation is not acted on: wait for Gardener",
			in: func() lc.Input {
				in := ready()
				in.Shoot = failedShoot(shootstate.ErrInfraUnauthorized)
				in.Shoot.Generation = 6
				return in
			},
			want: brief{lc.StepWaitForGardener, lc.ActionNone, lc.StatePending, lc.ReasonWaitingForGardener, 0},
		},
		{
			reason: "reconciled without GardenerCluster: create it",
			in: func() lc.Input {
				in := ready()
				in.Access = lc.Access{}
				return in
			},
			want: brief{lc.StepEnsureGardenerCluster, lc.ActionEnsureGardenerCluster, lc.StatePending, lc.ReasonCreatingGardenerCluster, 0},
		},
		{
			reason: "Ready needs the kubeconfig Secret",
			in: func() lc.Input {
				in := ready()
				in.Access.SecretExists = false
				return in
			},
			want: brief{lc.StepWaitForKubeconfig, lc.ActionNone, lc.StatePending, lc.ReasonWaitingForKubeconfig, 0},
		},
		{
			reason: "Ready needs the runtime's desired configuration reached",
			in: func() lc.Input {
				in := ready()
				in.Access.Configuration.DesiredHash = "c4"
				return in
			},
			want: brief{lc.StepConfigureRuntime, lc.ActionConfigureRuntime, lc.StatePending, lc.ReasonConfiguringRuntime, 0},
		},
		{
			reason: "a shoot of another runtime of ours blocks the name: Failed, never touched",
			in: func() lc.Input {
				in := ready()
				in.Shoot.Marks.RuntimeID = "other"
				return in
			},
			want:        brief{lc.StepResolveShootName, lc.ActionNone, lc.StateFailed, lc.ReasonShootNameTaken, lc.SlowRecheck},
			msgContains: []string{"runtime other"},
		},
		{
			reason: "a shoot without our marks is foreign: Failed, never touched",
			in: func() lc.Input {
				in := ready()
				in.Shoot.Marks = shootstate.Marks{}
				return in
			},
			want:        brief{lc.StepResolveShootName, lc.ActionNone, lc.StateFailed, lc.ReasonShootNameTaken, lc.SlowRecheck},
			msgContains: []string{"no runtime of this operator"},
		},
		{
			reason: "a new Runtime reusing the name of a cluster pending deletion waits for its window, never shortens it",
			in: func() lc.Input {
				return lc.Input{Intent: intent(), Shoot: pendingDeletion("old-runtime"), DeletionPolicy: deletionPolicy()}
			},
			want:        brief{lc.StepResolveShootName, lc.ActionNone, lc.StatePending, lc.ReasonOldClusterPendingDeletion, time.Hour + time.Second},
			msgContains: []string{"old-runtime", now.Add(time.Hour).Format(time.RFC3339), "fresh cluster"},
		},
		{
			reason: "the privacy cap shortens the wait of a new Runtime as it shortens the window",
			in: func() lc.Input {
				in := lc.Input{Intent: intent(), Shoot: pendingDeletion("old-runtime"), DeletionPolicy: deletionPolicy()}
				in.Shoot.Marks.PendingDeletion.DueAt = now.Add(30 * 24 * time.Hour)
				return in
			},
			want: brief{lc.StepResolveShootName, lc.ActionNone, lc.StatePending, lc.ReasonOldClusterPendingDeletion, 7*24*time.Hour - time.Hour + time.Second},
		},
		{
			reason: "after the window the new Runtime waits for the reaper; provisioning deletes nothing",
			in: func() lc.Input {
				in := lc.Input{Intent: intent(), Shoot: pendingDeletion("old-runtime"), DeletionPolicy: deletionPolicy()}
				in.Shoot.Marks.PendingDeletion.DueAt = now.Add(-time.Minute)
				return in
			},
			want:        brief{lc.StepResolveShootName, lc.ActionNone, lc.StatePending, lc.ReasonOldClusterPendingDeletion, lc.OldClusterRecheck},
			msgContains: []string{"old-runtime", "reaper"},
		},
		{
			reason: "the old cluster is being deleted: wait and say so",
			in: func() lc.Input {
				in := lc.Input{Intent: intent(), Shoot: pendingDeletion("old-runtime"), DeletionPolicy: deletionPolicy()}
				in.Shoot.DeletionTimestamp = &now
				return in
			},
			want: brief{lc.StepResolveShootName, lc.ActionNone, lc.StatePending, lc.ReasonOldClusterDeleting, 0},
		},
		{
			reason: "with deletions stopped a due old cluster keeps the name: say so",
			in: func() lc.Input {
				in := lc.Input{Intent: intent(), Shoot: pendingDeletion("old-runtime"), DeletionsFrozen: true, DeletionPolicy: deletionPolicy()}
				in.Shoot.Marks.PendingDeletion.DueAt = now.Add(-time.Minute)
				return in
			},
			want: brief{lc.StepResolveShootName, lc.ActionNone, lc.StatePending, lc.ReasonDeletionsFrozen, lc.FrozenRecheck},
		},
		{
			reason: "the deleted Runtime created again with the same ID takes its cluster back at once",
			in: func() lc.Input {
				return lc.Input{Intent: intent(), Shoot: pendingDeletion(rtID), DeletionsFrozen: true, DeletionPolicy: deletionPolicy()}
			},
			want:        brief{lc.StepResolveShootName, lc.ActionRestoreCluster, lc.StatePending, lc.ReasonRestoringCluster, 0},
			msgContains: []string{rtID, "taking shoot"},
		},
		{
			reason: "the same ID after the window (not yet reaped) still takes its cluster back",
			in: func() lc.Input {
				in := lc.Input{Intent: intent(), Shoot: pendingDeletion(rtID), DeletionPolicy: deletionPolicy()}
				in.Shoot.Marks.PendingDeletion.DueAt = now.Add(-time.Minute)
				return in
			},
			want: brief{lc.StepResolveShootName, lc.ActionRestoreCluster, lc.StatePending, lc.ReasonRestoringCluster, 0},
		},
		{
			reason: "a record naming this runtime on the cluster of another runtime (forged) hands nothing over",
			in: func() lc.Input {
				in := lc.Input{Intent: intent(), Shoot: pendingDeletion(rtID), DeletionPolicy: deletionPolicy()}
				in.Shoot.Marks.RuntimeID = "other-runtime"
				return in
			},
			want: brief{lc.StepResolveShootName, lc.ActionNone, lc.StatePending, lc.ReasonOldClusterPendingDeletion, time.Hour + time.Second},
		},
		{
			reason: "the same ID whose cluster Gardener already deletes waits for a fresh one",
			in: func() lc.Input {
				in := lc.Input{Intent: intent(), Shoot: pendingDeletion(rtID), DeletionPolicy: deletionPolicy()}
				in.Shoot.DeletionTimestamp = &now
				return in
			},
			want: brief{lc.StepResolveShootName, lc.ActionNone, lc.StatePending, lc.ReasonOldClusterDeleting, 0},
		},
		{
			reason: "our own shoot deleted by someone else: wait until gone, then it is created again",
			in: func() lc.Input {
				in := ready()
				in.Shoot.DeletionTimestamp = &now
				return in
			},
			want: brief{lc.StepResolveShootName, lc.ActionNone, lc.StatePending, lc.ReasonShootBeingDeleted, 0},
		},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			got := lc.Decide(tc.in(), now)
			if diff := cmp.Diff(tc.want, briefOf(got)); diff != "" {
				t.Errorf("%s: decision (-want +got):\n%s\nmessage: %s", tc.reason, diff, got.Message)
			}
			if got.Message == "" {
				t.Errorf("%s: every decision needs a message", tc.reason)
			}
			for _, s := range tc.msgContains {
				if !strings.Contains(got.Message, s) {
					t.Errorf("%s: message %q lacks %q", tc.reason, got.Message, s)
				}
			}
		})
	}
}

func deletionPolicy() deletion.Policy {
	return deletion.Policy{DefaultWindow: 72 * time.Hour, MaxWindow: 7 * 24 * time.Hour, Budget: deletion.DefaultBudget()}
}

func pendingDeletion(owner string) shootstate.Shoot {
	s := reconciled()
	s.Marks.RuntimeID = owner
	s.HibernationRequested = true
	s.Marks.PendingDeletion = &shootstate.PendingDeletion{RuntimeID: owner, Plan: "azure", MarkedAt: now.Add(-time.Hour), DueAt: now.Add(time.Hour)}
	return s
}

// TestProvisioningWalk folds every action's result back into the input, as a controller does, and checks the
// walk from nothing to Ready visits the named steps in order.
func TestProvisioningWalk(t *testing.T) {
	in := lc.Input{Intent: intent(), Access: lc.Access{Configuration: lc.Configuration{DesiredHash: "c3"}}}
	in.Intent.EnforceSeedLocation = true
	var steps []lc.Step
	for i := 0; i < 20; i++ {
		d := lc.Decide(in, now)
		steps = append(steps, d.Step)
		switch d.Action {
		case lc.ActionCheckSeed:
			in = in.WithSeed(true)
		case lc.ActionApplyShoot:
			s := shootstate.Shoot{Exists: true, Name: "c-1a2b3c", Generation: 1,
				Marks: shootstate.Marks{Managed: true, RuntimeID: rtID, AppliedRuntimeGeneration: 3, AppliedSpecHash: "h3"}}
			in = in.WithAppliedShoot(s)
		case lc.ActionEnsureGardenerCluster:
			in = in.WithGardenerCluster()
		case lc.ActionConfigureRuntime:
			in = in.WithRuntimeConfigured(now)
		case lc.ActionNone:
			switch d.Reason {
			case lc.ReasonWaitingForGardener: // the watch delivers Gardener's success
				in.Shoot.ObservedGeneration = 1
				in.Shoot.LastOperation = &shootstate.Operation{Type: shootstate.OperationCreate, State: shootstate.StateSucceeded, Progress: 100}
			case lc.ReasonWaitingForKubeconfig: // the kubeconfig controller writes the Secret
				in.Access.SecretExists = true
			}
		}
		if d.State == lc.StateReady {
			break
		}
	}
	want := []lc.Step{lc.StepCheckSeed, lc.StepApplyShoot, lc.StepWaitForGardener, lc.StepEnsureGardenerCluster,
		lc.StepWaitForKubeconfig, lc.StepConfigureRuntime, lc.StepReady}
	if diff := cmp.Diff(want, steps); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}

func creatingUnconfigured() lc.Input {
	in := creating()
	in.Access.Configuration.AppliedHash = ""
	return in
}

// TestProvisioningWalkWithEarlyAccess: when Gardener advertises the kube-apiserver during the Create operation,
// access is set up meanwhile, and Gardener's Succeeded needs no further action to reach Ready.
func TestProvisioningWalkWithEarlyAccess(t *testing.T) {
	in := lc.Input{Intent: intent(), Access: lc.Access{Configuration: lc.Configuration{DesiredHash: "c3"}}}
	type moment struct {
		Step   lc.Step
		Action lc.Action
	}
	var walk []moment
	gardenerDone := false
	for i := 0; i < 20; i++ {
		d := lc.Decide(in, now)
		walk = append(walk, moment{d.Step, d.Action})
		if d.State == lc.StateReady {
			break
		}
		switch d.Action {
		case lc.ActionApplyShoot:
			in = in.WithAppliedShoot(shootstate.Shoot{Exists: true, Name: "c-1a2b3c", Generation: 1,
				Marks: shootstate.Marks{Managed: true, RuntimeID: rtID, AppliedRuntimeGeneration: 3, AppliedSpecHash: "h3"}})
		case lc.ActionEnsureGardenerCluster:
			in = in.WithGardenerCluster()
		case lc.ActionConfigureRuntime:
			in = in.WithRuntimeConfigured(now)
		case lc.ActionNone:
			switch {
			case in.Shoot.LastOperation == nil: // Gardener starts creating and advertises the kube-apiserver
				in.Shoot.ObservedGeneration = 1
				in.Shoot.LastOperation = &shootstate.Operation{Type: shootstate.OperationCreate, State: shootstate.StateProcessing, Progress: 30}
				in.Shoot.APIServerAdvertised = true
			case !in.Access.SecretExists: // the kubeconfig controller writes the Secret
				in.Access.SecretExists = true
			default: // Gardener finishes
				in.Shoot.LastOperation = &shootstate.Operation{Type: shootstate.OperationCreate, State: shootstate.StateSucceeded, Progress: 100}
				gardenerDone = true
			}
		}
	}
	want := []moment{
		{lc.StepApplyShoot, lc.ActionApplyShoot}, {lc.StepWaitForGardener, lc.ActionNone},
		{lc.StepEnsureGardenerCluster, lc.ActionEnsureGardenerCluster}, {lc.StepWaitForGardener, lc.ActionNone},
		{lc.StepConfigureRuntime, lc.ActionConfigureRuntime}, {lc.StepWaitForGardener, lc.ActionNone},
		{lc.StepReady, lc.ActionNone},
	}
	if diff := cmp.Diff(want, walk); diff != "" {
		t.Errorf("walk (-want +got):\n%s", diff)
	}
	if !gardenerDone {
		t.Error("Ready before Gardener reported Succeeded")
	}
}

func TestActionFailed(t *testing.T) {
	apply := lc.Decision{Step: lc.StepApplyShoot, Action: lc.ActionApplyShoot, State: lc.StatePending, Reason: lc.ReasonUpdatingShoot}
	configure := lc.Decision{Step: lc.StepConfigureRuntime, Action: lc.ActionConfigureRuntime, State: lc.StatePending}
	gc := lc.Decision{Step: lc.StepEnsureGardenerCluster, Action: lc.ActionEnsureGardenerCluster, Reason: lc.ReasonCreatingGardenerCluster}
	earlyConfigure := lc.Decide(creatingUnconfigured(), now)
	cases := []struct {
		reason string
		d      lc.Decision
		err    lc.ActionError
		want   brief
		trans  bool
	}{
		{"a shoot the garden rejects as invalid fails the Runtime", apply, lc.ActionError{Permanent: true, Message: "machine type x not in cloud profile"},
			brief{lc.StepApplyShoot, lc.ActionNone, lc.StateFailed, lc.ReasonShootRejected, lc.SlowRecheck}, false},
		{"an unreachable garden keeps Pending and retries", apply, lc.ActionError{Message: "timeout"},
			brief{lc.StepApplyShoot, lc.ActionNone, lc.StatePending, lc.ReasonGardenerUnavailable, 0}, true},
		{"a runtime API server that does not answer keeps Pending", configure, lc.ActionError{Message: "connection refused"},
			brief{lc.StepConfigureRuntime, lc.ActionNone, lc.StatePending, lc.ReasonRuntimeConfigFailed, 0}, true},
		{"a GardenerCluster write conflict keeps the step's reason", gc, lc.ActionError{Message: "conflict"},
			brief{lc.StepEnsureGardenerCluster, lc.ActionNone, lc.StatePending, lc.ReasonCreatingGardenerCluster, 0}, true},
		{"configuring early while Gardener works is retried later without reporting a failure", earlyConfigure,
			lc.ActionError{Permanent: true, Message: "connection refused"},
			brief{lc.StepConfigureRuntime, lc.ActionNone, lc.StatePending, lc.ReasonWaitingForGardener, lc.EarlyRetry}, false},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			got := lc.ActionFailed(tc.d, tc.err)
			if diff := cmp.Diff(tc.want, briefOf(got)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
			if got.Transient != tc.trans {
				t.Errorf("%s: transient = %v, want %v", tc.reason, got.Transient, tc.trans)
			}
			if !strings.Contains(got.Message, tc.err.Message) {
				t.Errorf("%s: message %q lacks the cause %q", tc.reason, got.Message, tc.err.Message)
			}
		})
	}
}
