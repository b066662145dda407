package deletion_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kyma-project/kim/core/domain/cluster"
	"github.com/kyma-project/kim/core/domain/deletion"
)

var now = time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)

const rtID = "c8a3f1e2-0000-4000-8000-000000000001"

func policy() deletion.Policy {
	return deletion.Policy{
		DefaultWindow:      72 * time.Hour,
		PlanWindows:        map[string]time.Duration{"trial": 0, "free": 0, "azure": 24 * time.Hour, "huge": 30 * 24 * time.Hour},
		MaxWindow:          7 * 24 * time.Hour,
		ForceDeletionAfter: 2 * time.Hour,
	}
}

func healthy() cluster.Shoot {
	return cluster.Shoot{Exists: true, Name: "c-1a2b3c", Generation: 2, ObservedGeneration: 2,
		LastOperation: &cluster.Operation{Type: cluster.OperationReconcile, State: cluster.StateSucceeded, Progress: 100},
		Marks:         cluster.Marks{Managed: true, RuntimeID: rtID}}
}

func TestOnRuntimeDeleted(t *testing.T) {
	at := func(d time.Duration) time.Time { return now.Add(d) }
	cases := []struct {
		reason string
		in     deletion.RuntimeInput
		policy func(deletion.Policy) deletion.Policy
		want   deletion.RuntimeDecision
	}{
		{
			reason: "access is removed before anything else",
			in:     deletion.RuntimeInput{RuntimeID: rtID, Plan: "aws", EverReady: true, Shoot: healthy()},
			want:   deletion.RuntimeDecision{Action: deletion.ActionRemoveAccess},
		},
		{
			reason: "default window: hibernate and record due time, runtime ID and plan",
			in:     deletion.RuntimeInput{RuntimeID: rtID, Plan: "aws", EverReady: true, AccessRemoved: true, Shoot: healthy()},
			want: deletion.RuntimeDecision{Action: deletion.ActionMarkShoot, Hibernate: true,
				Record: &cluster.PendingDeletion{RuntimeID: rtID, Plan: "aws", MarkedAt: now, DueAt: at(72 * time.Hour)}},
		},
		{
			reason: "a plan override replaces the default window",
			in:     deletion.RuntimeInput{RuntimeID: rtID, Plan: "azure", EverReady: true, AccessRemoved: true, Shoot: healthy()},
			want: deletion.RuntimeDecision{Action: deletion.ActionMarkShoot, Hibernate: true,
				Record: &cluster.PendingDeletion{RuntimeID: rtID, Plan: "azure", MarkedAt: now, DueAt: at(24 * time.Hour)}},
		},
		{
			reason: "a plan window above the maximum is capped (data privacy)",
			in:     deletion.RuntimeInput{RuntimeID: rtID, Plan: "huge", EverReady: true, AccessRemoved: true, Shoot: healthy()},
			want: deletion.RuntimeDecision{Action: deletion.ActionMarkShoot, Hibernate: true,
				Record: &cluster.PendingDeletion{RuntimeID: rtID, Plan: "huge", MarkedAt: now, DueAt: at(7 * 24 * time.Hour)}},
		},
		{
			reason: "trial has a zero window: due now, no hibernation",
			in:     deletion.RuntimeInput{RuntimeID: rtID, Plan: "trial", EverReady: true, AccessRemoved: true, Shoot: healthy()},
			want: deletion.RuntimeDecision{Action: deletion.ActionMarkShoot,
				Record: &cluster.PendingDeletion{RuntimeID: rtID, Plan: "trial", MarkedAt: now, DueAt: now}},
		},
		{
			reason: "a shoot that never became healthy is deleted at once",
			in: deletion.RuntimeInput{RuntimeID: rtID, Plan: "aws", AccessRemoved: true, Shoot: func() cluster.Shoot {
				s := healthy()
				s.LastOperation = &cluster.Operation{Type: cluster.OperationCreate, State: cluster.StateFailed}
				return s
			}()},
			want: deletion.RuntimeDecision{Action: deletion.ActionMarkShoot,
				Record: &cluster.PendingDeletion{RuntimeID: rtID, Plan: "aws", MarkedAt: now, DueAt: now}},
		},
		{
			reason: "a Runtime that was Ready once keeps its window even if the shoot's last Create is odd",
			in: deletion.RuntimeInput{RuntimeID: rtID, Plan: "aws", EverReady: true, AccessRemoved: true, Shoot: func() cluster.Shoot {
				s := healthy()
				s.LastOperation = &cluster.Operation{Type: cluster.OperationCreate, State: cluster.StateProcessing}
				return s
			}()},
			want: deletion.RuntimeDecision{Action: deletion.ActionMarkShoot, Hibernate: true,
				Record: &cluster.PendingDeletion{RuntimeID: rtID, Plan: "aws", MarkedAt: now, DueAt: at(72 * time.Hour)}},
		},
		{
			reason: "the brake does not stop marking: nothing is deleted by it",
			policy: func(p deletion.Policy) deletion.Policy { p.Frozen = true; return p },
			in:     deletion.RuntimeInput{RuntimeID: rtID, Plan: "trial", EverReady: true, AccessRemoved: true, Shoot: healthy()},
			want: deletion.RuntimeDecision{Action: deletion.ActionMarkShoot,
				Record: &cluster.PendingDeletion{RuntimeID: rtID, Plan: "trial", MarkedAt: now, DueAt: now}},
		},
		{
			reason: "no shoot: release the Runtime",
			in:     deletion.RuntimeInput{RuntimeID: rtID, AccessRemoved: true},
			want:   deletion.RuntimeDecision{Action: deletion.ActionRelease},
		},
		{
			reason: "a foreign shoot with the same name is left untouched and the Runtime released",
			in: deletion.RuntimeInput{RuntimeID: rtID, AccessRemoved: true, EverReady: true, Shoot: func() cluster.Shoot {
				s := healthy()
				s.Marks = cluster.Marks{}
				return s
			}()},
			want: deletion.RuntimeDecision{Action: deletion.ActionRelease},
		},
		{
			reason: "a shoot of another runtime is left untouched",
			in: deletion.RuntimeInput{RuntimeID: rtID, AccessRemoved: true, EverReady: true, Shoot: func() cluster.Shoot {
				s := healthy()
				s.Marks.RuntimeID = "other"
				return s
			}()},
			want: deletion.RuntimeDecision{Action: deletion.ActionRelease},
		},
		{
			reason: "already marked for this runtime: release (idempotent)",
			in: deletion.RuntimeInput{RuntimeID: rtID, AccessRemoved: true, EverReady: true, Shoot: func() cluster.Shoot {
				s := healthy()
				s.Marks.PendingDeletion = &cluster.PendingDeletion{RuntimeID: rtID, MarkedAt: now, DueAt: now.Add(time.Hour)}
				return s
			}()},
			want: deletion.RuntimeDecision{Action: deletion.ActionRelease},
		},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			p := policy()
			if tc.policy != nil {
				p = tc.policy(p)
			}
			got := deletion.OnRuntimeDeleted(tc.in, p, now)
			if got.Message == "" {
				t.Errorf("%s: decision without message", tc.reason)
			}
			got.Message = ""
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

func marked(due time.Duration) cluster.Shoot {
	s := healthy()
	s.HibernationRequested, s.Hibernated = true, true
	s.Marks.PendingDeletion = &cluster.PendingDeletion{RuntimeID: rtID, Plan: "aws", MarkedAt: now.Add(-24 * time.Hour), DueAt: now.Add(due)}
	return s
}

func deleting(since time.Duration, codes ...cluster.ErrorCode) cluster.Shoot {
	s := marked(-time.Hour)
	ts := now.Add(-since)
	s.DeletionTimestamp = &ts
	s.LastOperation = &cluster.Operation{Type: cluster.OperationDelete, State: cluster.StateError, Progress: 30}
	if len(codes) > 0 {
		s.LastErrors = []cluster.LastError{{Description: "cannot delete load balancer", Codes: codes}}
	}
	return s
}

func TestReap(t *testing.T) {
	type want struct {
		Step    deletion.ReapStep
		Action  deletion.ReapAction
		Requeue time.Duration
		Stuck   bool
	}
	cases := []struct {
		reason string
		shoot  cluster.Shoot
		policy func(deletion.Policy) deletion.Policy
		want   want
	}{
		{"inside the window: wait until it closes", marked(3 * time.Hour), nil, want{deletion.StepWaitWindow, deletion.ReapNone, 3 * time.Hour, false}},
		{"window passed: confirm and delete", marked(-time.Second), nil, want{deletion.StepDelete, deletion.ReapDelete, 0, false}},
		{"window closes exactly now: delete", marked(0), nil, want{deletion.StepDelete, deletion.ReapDelete, 0, false}},
		{"a recorded window longer than today's maximum is cut to the maximum", marked(30 * 24 * time.Hour),
			func(p deletion.Policy) deletion.Policy { p.MaxWindow = 24 * time.Hour; return p },
			want{deletion.StepDelete, deletion.ReapDelete, 0, false}},
		{"brake on: a due shoot is not deleted", marked(-time.Hour),
			func(p deletion.Policy) deletion.Policy { p.Frozen = true; return p },
			want{deletion.StepFrozen, deletion.ReapNone, deletion.FrozenRecheck, false}},
		{"brake on: a stuck deletion is not forced", deleting(5*time.Hour, cluster.ErrCleanupClusterResources),
			func(p deletion.Policy) deletion.Policy { p.Frozen = true; return p },
			want{deletion.StepFrozen, deletion.ReapNone, deletion.FrozenRecheck, true}},
		{"a foreign shoot is never deleted", func() cluster.Shoot { s := marked(-time.Hour); s.Marks.Managed = false; return s }(), nil,
			want{deletion.StepIgnore, deletion.ReapNone, 0, false}},
		{"an unreadable due time never means delete now", func() cluster.Shoot {
			s := marked(-time.Hour)
			s.Marks.PendingDeletion.DueAt = time.Time{}
			return s
		}(), nil, want{deletion.StepIgnore, deletion.ReapNone, 0, false}},
		{"an unmarked shoot of ours is not deleted", healthy(), nil, want{deletion.StepIgnore, deletion.ReapNone, 0, false}},
		{"a restore request wins over a passed window", func() cluster.Shoot {
			s := marked(-time.Hour)
			s.Marks.PendingDeletion.RestoreRequested = true
			return s
		}(), nil, want{deletion.StepRestore, deletion.ReapRestore, 0, false}},
		{"deleting without errors: wait until gone", deleting(5 * time.Hour), nil, want{deletion.StepWaitGone, deletion.ReapNone, 0, false}},
		{"stuck on a code Gardener accepts, but not long enough", deleting(time.Hour, cluster.ErrInfraDependencies), nil,
			want{deletion.StepWaitGone, deletion.ReapNone, time.Hour, true}},
		{"stuck long enough on an accepted code: force-delete", deleting(2*time.Hour, cluster.ErrCleanupClusterResources), nil,
			want{deletion.StepForceDelete, deletion.ReapForceDelete, 0, true}},
		{"stuck on a code Gardener does not accept force-deletion for: wait", deleting(9*time.Hour, cluster.ErrInfraQuotaExceeded), nil,
			want{deletion.StepWaitGone, deletion.ReapNone, 0, false}},
		{"force-deletion already set: wait", func() cluster.Shoot {
			s := deleting(9*time.Hour, cluster.ErrConfigurationProblem)
			s.ForceDeletionRequested = true
			return s
		}(), nil, want{deletion.StepWaitGone, deletion.ReapNone, 0, true}},
		{"force-deletion disabled by configuration", deleting(9*time.Hour, cluster.ErrInfraUnauthorized),
			func(p deletion.Policy) deletion.Policy { p.ForceDeletionAfter = 0; return p },
			want{deletion.StepWaitGone, deletion.ReapNone, 0, true}},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			p := policy()
			if tc.policy != nil {
				p = tc.policy(p)
			}
			got := deletion.Reap(tc.shoot, p, now)
			if diff := cmp.Diff(tc.want, want{got.Step, got.Action, got.RequeueAfter, got.Stuck}); diff != "" {
				t.Errorf("%s (-want +got):\n%s\nmessage: %s", tc.reason, diff, got.Message)
			}
			if got.Message == "" {
				t.Errorf("%s: decision without message", tc.reason)
			}
		})
	}
}

func TestRestorable(t *testing.T) {
	cases := []struct {
		reason string
		shoot  cluster.Shoot
		want   error
	}{
		{"a marked hibernated shoot of ours can be restored", marked(time.Hour), nil},
		{"after the window, while not yet deleted (brake), it can still be restored", marked(-time.Hour), nil},
		{"a foreign shoot cannot", func() cluster.Shoot { s := marked(time.Hour); s.Marks.Managed = false; return s }(), deletion.ErrNotOurs},
		{"a missing shoot cannot", cluster.Shoot{}, deletion.ErrNotOurs},
		{"a live shoot is not pending deletion", healthy(), deletion.ErrNotPendingDeletion},
		{"a shoot Gardener deletes cannot come back", deleting(time.Minute), deletion.ErrDeletionInProgress},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			if got := deletion.Restorable(tc.shoot); !errors.Is(got, tc.want) {
				t.Errorf("%s: got %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}

func TestPolicy(t *testing.T) {
	p := policy()
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), `plan "huge"`) {
		t.Errorf("a plan window above the maximum must be reported by name, got %v", err)
	}
	delete(p.PlanWindows, "huge")
	if err := p.Validate(); err != nil {
		t.Errorf("valid policy rejected: %v", err)
	}
	bad := deletion.Policy{DefaultWindow: -time.Hour}
	if err := bad.Validate(); err == nil {
		t.Error("a negative window must be rejected")
	}
	windows := map[string]time.Duration{"trial": 0, "free": 0, "azure": 24 * time.Hour, "aws": 72 * time.Hour, "": 72 * time.Hour}
	for plan, want := range windows {
		if got := p.Window(plan); got != want {
			t.Errorf("window of plan %q = %s, want %s", plan, got, want)
		}
	}
}
