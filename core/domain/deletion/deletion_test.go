package deletion_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/domain/shootstate"
)

var now = time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)

const rtID = "c8a3f1e2-0000-4000-8000-000000000001"

func policy() deletion.Policy {
	return deletion.Policy{
		DefaultWindow:      72 * time.Hour,
		PlanWindows:        map[string]time.Duration{"trial": 0, "free": 0, "azure": 24 * time.Hour, "huge": 30 * 24 * time.Hour},
		MaxWindow:          7 * 24 * time.Hour,
		ForceDeletionAfter: 2 * time.Hour,
		Budget:             deletion.Budget{Limit: 3, Per: time.Hour},
	}
}

func healthy() shootstate.Shoot {
	return shootstate.Shoot{Exists: true, Name: "c-1a2b3c", Generation: 2, ObservedGeneration: 2,
		LastOperation: &shootstate.Operation{Type: shootstate.OperationReconcile, State: shootstate.StateSucceeded, Progress: 100},
		Marks:         shootstate.Marks{Managed: true, RuntimeID: rtID}, Live: true, UID: "uid-1", ResourceVersion: "7"}
}

func with(s shootstate.Shoot, change func(*shootstate.Shoot)) shootstate.Shoot {
	change(&s)
	return s
}

// record is the record marking the shoot of rtID at now with the given plan and window.
func record(plan string, window time.Duration) *shootstate.PendingDeletion {
	return &shootstate.PendingDeletion{RuntimeID: rtID, RuntimeNamespace: "kcp-system", Plan: plan, MarkedAt: now,
		DueAt: now.Add(window), Window: window}
}

// kcpRecord is the KCP record of deleting the shoot of rtID at now with the given window.
func kcpRecord(window time.Duration) *deletion.KCPRecord {
	return &deletion.KCPRecord{RuntimeID: rtID, RuntimeNamespace: "kcp-system", ShootName: "c-1a2b3c", ShootUID: "uid-1", MarkedAt: now,
		DueAt: now.Add(window)}
}

func TestOnRuntimeDeleted(t *testing.T) {
	base := deletion.RuntimeInput{RuntimeID: rtID, Namespace: "kcp-system", Plan: "aws", EverReady: true, AccessRemoved: true, Shoot: healthy()}
	in := func(change func(*deletion.RuntimeInput)) deletion.RuntimeInput {
		out := base
		change(&out)
		return out
	}
	mark := func(plan string, window time.Duration, hibernate bool) deletion.RuntimeDecision {
		return deletion.RuntimeDecision{Action: deletion.ActionMarkShoot, Hibernate: hibernate, KeepRestoreDocument: true, Record: record(plan, window),
			KCPRecord: kcpRecord(window)}
	}
	cases := []struct {
		reason string
		in     deletion.RuntimeInput
		policy func(deletion.Policy) deletion.Policy
		want   deletion.RuntimeDecision
	}{
		{"access is removed before anything else", in(func(i *deletion.RuntimeInput) { i.AccessRemoved = false }), nil,
			deletion.RuntimeDecision{Action: deletion.ActionRemoveAccess}},
		{"a cached observation is confirmed live first (a cache miss must not release an unmarked shoot)",
			in(func(i *deletion.RuntimeInput) { i.Shoot = shootstate.Shoot{} }), nil,
			deletion.RuntimeDecision{Action: deletion.ActionConfirmShoot}},
		{"a cached observation of an existing shoot is confirmed live too",
			in(func(i *deletion.RuntimeInput) { i.Shoot.Live = false }), nil,
			deletion.RuntimeDecision{Action: deletion.ActionConfirmShoot}},
		{"default window: hibernate and record due time, window, runtime ID, namespace and plan", base, nil, mark("aws", 72*time.Hour, true)},
		{"a plan override replaces the default window", in(func(i *deletion.RuntimeInput) { i.Plan = "azure" }), nil, mark("azure", 24*time.Hour, true)},
		{"a plan window above the maximum is capped (data privacy)", in(func(i *deletion.RuntimeInput) { i.Plan = "huge" }), nil,
			mark("huge", 7*24*time.Hour, true)},
		{"trial has a zero window: due now, no hibernation", in(func(i *deletion.RuntimeInput) { i.Plan = "trial" }), nil, mark("trial", 0, false)},
		{"a relabelled plan cannot shorten the window of the plan recorded at creation",
			in(func(i *deletion.RuntimeInput) { i.Plan = "trial"; i.Shoot.Marks.Plan = "aws" }), nil, mark("aws", 72*time.Hour, true)},
		{"an upgraded plan (free to azure) takes the longer window of the new plan",
			in(func(i *deletion.RuntimeInput) { i.Plan = "azure"; i.Shoot.Marks.Plan = "free" }), nil, mark("azure", 24*time.Hour, true)},
		{"a shoot that never became healthy is deleted at once", in(func(i *deletion.RuntimeInput) {
			i.EverReady = false
			i.Shoot.LastOperation = &shootstate.Operation{Type: shootstate.OperationCreate, State: shootstate.StateFailed}
		}), nil, mark("aws", 0, false)},
		{"a Runtime that was Ready once keeps its window even if the shoot's last Create is odd", in(func(i *deletion.RuntimeInput) {
			i.Shoot.LastOperation = &shootstate.Operation{Type: shootstate.OperationCreate, State: shootstate.StateProcessing}
		}), nil, mark("aws", 72*time.Hour, true)},
		{"the brake does not stop marking: nothing is deleted by it", in(func(i *deletion.RuntimeInput) { i.Plan = "trial" }),
			func(p deletion.Policy) deletion.Policy { p.Frozen = true; return p }, mark("trial", 0, false)},
		{"a Runtime too large for the record is still marked, without the document", in(func(i *deletion.RuntimeInput) {
			i.RestoreDocumentSize = deletion.MaxRestoreDocument + 1
		}), nil, deletion.RuntimeDecision{Action: deletion.ActionMarkShoot, Hibernate: true, Record: record("aws", 72*time.Hour),
			KCPRecord: kcpRecord(72 * time.Hour)}},
		{"no shoot (confirmed live): release the Runtime", in(func(i *deletion.RuntimeInput) { i.Shoot = shootstate.Shoot{Live: true} }), nil,
			deletion.RuntimeDecision{Action: deletion.ActionRelease}},
		{"a predecessor's shoot of this runtime is adopted before it is marked (never orphaned)", in(func(i *deletion.RuntimeInput) {
			i.Shoot.Marks.Managed = false
		}), nil, deletion.RuntimeDecision{Action: deletion.ActionAdoptShoot}},
		{"a foreign shoot with the same name is left untouched and the Runtime released", in(func(i *deletion.RuntimeInput) {
			i.Shoot.Marks = shootstate.Marks{}
		}), nil, deletion.RuntimeDecision{Action: deletion.ActionRelease}},
		{"a shoot of another runtime is left untouched", in(func(i *deletion.RuntimeInput) { i.Shoot.Marks.RuntimeID = "other" }), nil,
			deletion.RuntimeDecision{Action: deletion.ActionRelease}},
		{"a shoot waiting for the deletion of another runtime is left untouched", in(func(i *deletion.RuntimeInput) {
			i.Shoot.Marks.PendingDeletion = &shootstate.PendingDeletion{RuntimeID: "other", MarkedAt: now, DueAt: now.Add(time.Hour)}
		}), nil, deletion.RuntimeDecision{Action: deletion.ActionRelease}},
		{"already marked for this runtime: release (idempotent), recording the deletion in the KCP", in(func(i *deletion.RuntimeInput) {
			i.Shoot.Marks.PendingDeletion = &shootstate.PendingDeletion{RuntimeID: rtID, MarkedAt: now, DueAt: now.Add(72 * time.Hour), Window: 72 * time.Hour}
		}), nil, deletion.RuntimeDecision{Action: deletion.ActionRelease, KCPRecord: &deletion.KCPRecord{RuntimeID: rtID,
			RuntimeNamespace: "kcp-system", ShootName: "c-1a2b3c", ShootUID: "uid-1", MarkedAt: now, DueAt: now.Add(72 * time.Hour)}}},
		{"a record on the shoot that someone forged (window 0, marked a week ago) is not copied into the KCP", in(func(i *deletion.RuntimeInput) {
			week := now.Add(-7 * 24 * time.Hour)
			i.Shoot.Marks.PendingDeletion = &shootstate.PendingDeletion{RuntimeID: rtID, Plan: "trial", MarkedAt: week, DueAt: week}
		}), nil, deletion.RuntimeDecision{Action: deletion.ActionRelease, KCPRecord: &deletion.KCPRecord{RuntimeID: rtID,
			RuntimeNamespace: "kcp-system", ShootName: "c-1a2b3c", ShootUID: "uid-1", MarkedAt: now, DueAt: now.Add(72 * time.Hour)}}},
		{"a marked shoot of this runtime that Gardener deletes already is not recorded again", in(func(i *deletion.RuntimeInput) {
			i.Shoot.Marks.PendingDeletion = &shootstate.PendingDeletion{RuntimeID: rtID, MarkedAt: now.Add(-time.Hour), DueAt: now.Add(-time.Hour)}
			i.Shoot.DeletionTimestamp = &now
		}), nil, deletion.RuntimeDecision{Action: deletion.ActionRelease}},
		{"a record naming this runtime on the shoot of another runtime is not recorded in the KCP", in(func(i *deletion.RuntimeInput) {
			i.Shoot.Marks.RuntimeID = "other"
			i.Shoot.Marks.PendingDeletion = &shootstate.PendingDeletion{RuntimeID: rtID, MarkedAt: now, DueAt: now}
		}), nil, deletion.RuntimeDecision{Action: deletion.ActionRelease}},
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

func marked(due time.Duration) shootstate.Shoot {
	s := healthy()
	s.HibernationRequested, s.Hibernated = true, true
	marked := now.Add(-24 * time.Hour)
	s.Marks.PendingDeletion = &shootstate.PendingDeletion{RuntimeID: rtID, Plan: "aws", MarkedAt: marked, DueAt: now.Add(due),
		Window: now.Add(due).Sub(marked)}
	return s
}

func deleting(since time.Duration, codes ...shootstate.ErrorCode) shootstate.Shoot {
	s := marked(-time.Hour)
	ts := now.Add(-since)
	s.DeletionTimestamp = &ts
	s.LastOperation = &shootstate.Operation{Type: shootstate.OperationDelete, State: shootstate.StateError, Progress: 30}
	if len(codes) > 0 {
		s.LastErrors = []shootstate.LastError{{Description: "cannot delete load balancer", Codes: codes}}
	}
	return s
}

func TestReap(t *testing.T) {
	yes, no := true, false
	type want struct {
		Step    deletion.ReapStep
		Action  deletion.ReapAction
		Requeue time.Duration
		Stuck   bool
		Stop    deletion.Stop
	}
	confirmed := func(s shootstate.Shoot) deletion.ReapInput { return deletion.ReapInput{Shoot: s, RuntimeExists: &no} }
	cases := []struct {
		reason string
		in     deletion.ReapInput
		policy func(deletion.Policy) deletion.Policy
		want   want
	}{
		{"inside the window: wait until it closes", confirmed(marked(3 * time.Hour)), nil,
			want{deletion.StepWaitWindow, deletion.ReapNone, 3 * time.Hour, false, ""}},
		{"window passed, confirmed live and runtime gone: delete", confirmed(marked(-time.Second)), nil,
			want{deletion.StepDelete, deletion.ReapDelete, 0, false, ""}},
		{"window closes exactly now: delete", confirmed(marked(0)), nil, want{deletion.StepDelete, deletion.ReapDelete, 0, false, ""}},
		{"window passed on a cached observation: confirm first", deletion.ReapInput{Shoot: with(marked(-time.Hour), func(s *shootstate.Shoot) { s.Live = false })},
			nil, want{deletion.StepConfirm, deletion.ReapConfirm, 0, false, ""}},
		{"window passed, live, but the KCP not asked yet: confirm first", deletion.ReapInput{Shoot: marked(-time.Hour)}, nil,
			want{deletion.StepConfirm, deletion.ReapConfirm, 0, false, ""}},
		{"the runtime of the record exists again: never delete, look again soon", deletion.ReapInput{Shoot: marked(-time.Hour), RuntimeExists: &yes}, nil,
			want{deletion.StepRuntimeExists, deletion.ReapNone, deletion.RuntimeRecheck, false, ""}},
		{"a recorded window longer than today's maximum is cut to the maximum", confirmed(marked(30 * 24 * time.Hour)),
			func(p deletion.Policy) deletion.Policy { p.MaxWindow = 24 * time.Hour; return p },
			want{deletion.StepDelete, deletion.ReapDelete, 0, false, ""}},
		{"brake on: a due shoot is not deleted", confirmed(marked(-time.Hour)),
			func(p deletion.Policy) deletion.Policy { p.Frozen = true; return p },
			want{deletion.StepFrozen, deletion.ReapNone, deletion.FrozenRecheck, false, deletion.StopBrake}},
		{"dynamic brake on: a due shoot is not deleted", deletion.ReapInput{Shoot: marked(-time.Hour), RuntimeExists: &no, Guard: deletion.Guard{Frozen: true}},
			nil, want{deletion.StepFrozen, deletion.ReapNone, deletion.FrozenRecheck, false, deletion.StopBrake}},
		{"breaker tripped: a due shoot is not deleted", deletion.ReapInput{Shoot: marked(-time.Hour), RuntimeExists: &no, Guard: deletion.Guard{Tripped: true}},
			nil, want{deletion.StepFrozen, deletion.ReapNone, deletion.FrozenRecheck, false, deletion.StopBreaker}},
		{"our clock far ahead of the API server's: nothing is deleted", deletion.ReapInput{Shoot: marked(-time.Hour), RuntimeExists: &no,
			Guard: deletion.Guard{ClockAhead: time.Hour}}, nil,
			want{deletion.StepFrozen, deletion.ReapNone, deletion.FrozenRecheck, false, deletion.StopClockAhead}},
		{"a little drift is tolerated", deletion.ReapInput{Shoot: marked(-time.Hour), RuntimeExists: &no, Guard: deletion.Guard{ClockAhead: 30 * time.Second}},
			nil, want{deletion.StepDelete, deletion.ReapDelete, 0, false, ""}},
		{"the API server's time unknown: nothing is deleted", deletion.ReapInput{Shoot: marked(-time.Hour), RuntimeExists: &no,
			Guard: deletion.Guard{ClockUnknown: true}}, nil,
			want{deletion.StepFrozen, deletion.ReapNone, deletion.FrozenRecheck, false, deletion.StopClockUnsure}},
		{"brake on: a stuck deletion is not forced", confirmed(deleting(5*time.Hour, shootstate.ErrCleanupClusterResources)),
			func(p deletion.Policy) deletion.Policy { p.Frozen = true; return p },
			want{deletion.StepFrozen, deletion.ReapNone, deletion.FrozenRecheck, true, deletion.StopBrake}},
		{"a foreign shoot is never deleted", confirmed(with(marked(-time.Hour), func(s *shootstate.Shoot) { s.Marks.Managed = false })), nil,
			want{deletion.StepIgnore, deletion.ReapNone, 0, false, ""}},
		{"an unreadable due time never means delete now", confirmed(with(marked(-time.Hour), func(s *shootstate.Shoot) {
			s.Marks.PendingDeletion.DueAt = time.Time{}
		})), nil, want{deletion.StepInvalidRecord, deletion.ReapNone, 0, false, ""}},
		{"a record without runtime is not trusted", confirmed(with(marked(-time.Hour), func(s *shootstate.Shoot) {
			s.Marks.PendingDeletion.RuntimeID = ""
		})), nil, want{deletion.StepInvalidRecord, deletion.ReapNone, 0, false, ""}},
		// Consistent otherwise (due exactly its window after the mark), so only the check of the mark can refuse it.
		{"a record marked in the future is not trusted", confirmed(with(marked(-time.Hour), func(s *shootstate.Shoot) {
			pd := s.Marks.PendingDeletion
			pd.MarkedAt, pd.Window, pd.DueAt = now.Add(time.Hour), 0, now.Add(time.Hour)
		})), nil, want{deletion.StepInvalidRecord, deletion.ReapNone, 0, false, ""}},
		{"a shoot record without a KCP record is never reaped", unbacked(confirmed(marked(-time.Hour))), nil,
			want{deletion.StepUnbacked, deletion.ReapNone, deletion.UnbackedRecheck, false, ""}},
		{"a stuck deletion without a KCP record is not forced", unbacked(confirmed(deleting(9*time.Hour, shootstate.ErrCleanupClusterResources))), nil,
			want{deletion.StepUnbacked, deletion.ReapNone, deletion.UnbackedRecheck, false, ""}},
		{"a KCP record of another shoot with the same name (other UID) does not back the record",
			withRecord(confirmed(marked(-time.Hour)), func(r *deletion.KCPRecord) { r.ShootUID = "uid-old" }), nil,
			want{deletion.StepUnbacked, deletion.ReapNone, deletion.UnbackedRecheck, false, ""}},
		{"a KCP record of another runtime does not back the record",
			withRecord(confirmed(marked(-time.Hour)), func(r *deletion.KCPRecord) { r.RuntimeID = "other" }), nil,
			want{deletion.StepUnbacked, deletion.ReapNone, deletion.UnbackedRecheck, false, ""}},
		{"a forged consistent shoot record (window 0, marked a week ago) waits for the KCP's due time",
			withRecord(confirmed(with(marked(3*time.Hour), func(s *shootstate.Shoot) {
				pd := s.Marks.PendingDeletion
				pd.MarkedAt, pd.Window, pd.DueAt = now.Add(-7*24*time.Hour), 0, now.Add(-7*24*time.Hour)
			})), func(r *deletion.KCPRecord) { r.MarkedAt, r.DueAt = now.Add(-time.Hour), now.Add(2*time.Hour) }), nil,
			want{deletion.StepWaitWindow, deletion.ReapNone, 2 * time.Hour, false, ""}},
		{"a shoot record due later than the KCP's postpones the deletion", withRecord(confirmed(marked(3*time.Hour)),
			func(r *deletion.KCPRecord) { r.DueAt = now.Add(-time.Hour) }), nil,
			want{deletion.StepWaitWindow, deletion.ReapNone, 3 * time.Hour, false, ""}},
		{"a brake value the operator does not understand stops deletions", deletion.ReapInput{Shoot: marked(-time.Hour), RuntimeExists: &no,
			Guard: deletion.Guard{Frozen: true, BrakeInvalid: "yes"}}, nil,
			want{deletion.StepFrozen, deletion.ReapNone, deletion.FrozenRecheck, false, deletion.StopBrakeValue}},
		{"a due time edited below the recorded window is not trusted", confirmed(with(marked(3*time.Hour), func(s *shootstate.Shoot) {
			s.Marks.PendingDeletion.DueAt = now.Add(-time.Hour)
		})), nil, want{deletion.StepInvalidRecord, deletion.ReapNone, 0, false, ""}},
		{"an unmarked shoot of ours is not deleted", confirmed(healthy()), nil, want{deletion.StepIgnore, deletion.ReapNone, 0, false, ""}},
		{"a restore request wins over a passed window", confirmed(with(marked(-time.Hour), func(s *shootstate.Shoot) {
			s.Marks.PendingDeletion.RestoreRequested = true
		})), nil, want{deletion.StepRestore, deletion.ReapRestore, 0, false, ""}},
		{"a restore request does not keep the cluster beyond the privacy cap", confirmed(with(marked(-time.Hour), func(s *shootstate.Shoot) {
			s.Marks.PendingDeletion.RestoreRequested = true
			s.Marks.PendingDeletion.MarkedAt = now.Add(-8 * 24 * time.Hour)
		})), nil, want{deletion.StepDelete, deletion.ReapDelete, 0, false, ""}},
		{"deleting without errors: wait until gone", confirmed(deleting(5 * time.Hour)), nil, want{deletion.StepWaitGone, deletion.ReapNone, 0, false, ""}},
		{"stuck on a code Gardener accepts, but not long enough", confirmed(deleting(time.Hour, shootstate.ErrInfraDependencies)), nil,
			want{deletion.StepWaitGone, deletion.ReapNone, time.Hour, true, ""}},
		{"stuck long enough on an accepted code: force-delete", confirmed(deleting(2*time.Hour, shootstate.ErrCleanupClusterResources)), nil,
			want{deletion.StepForceDelete, deletion.ReapForceDelete, 0, true, ""}},
		{"stuck long enough, cached: confirm before forcing", deletion.ReapInput{Shoot: with(deleting(2*time.Hour, shootstate.ErrCleanupClusterResources),
			func(s *shootstate.Shoot) { s.Live = false })}, nil, want{deletion.StepConfirm, deletion.ReapConfirm, 0, true, ""}},
		{"stuck on a code Gardener does not accept force-deletion for: wait", confirmed(deleting(9*time.Hour, shootstate.ErrInfraQuotaExceeded)), nil,
			want{deletion.StepWaitGone, deletion.ReapNone, 0, false, ""}},
		{"force-deletion already set: wait", confirmed(with(deleting(9*time.Hour, shootstate.ErrConfigurationProblem), func(s *shootstate.Shoot) {
			s.ForceDeletionRequested = true
		})), nil, want{deletion.StepWaitGone, deletion.ReapNone, 0, true, ""}},
		{"force-deletion disabled by configuration", confirmed(deleting(9*time.Hour, shootstate.ErrInfraUnauthorized)),
			func(p deletion.Policy) deletion.Policy { p.ForceDeletionAfter = 0; return p },
			want{deletion.StepWaitGone, deletion.ReapNone, 0, true, ""}},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			p := policy()
			if tc.policy != nil {
				p = tc.policy(p)
			}
			got := deletion.Reap(backed(tc.in), p, now)
			if diff := cmp.Diff(tc.want, want{got.Step, got.Action, got.RequeueAfter, got.Stuck, got.Stop}); diff != "" {
				t.Errorf("%s (-want +got):\n%s\nmessage: %s", tc.reason, diff, got.Message)
			}
			if got.Message == "" {
				t.Errorf("%s: decision without message", tc.reason)
			}
		})
	}
}

// noKCPRecord marks a ReapInput whose shoot record has no KCP record (see backed).
var noKCPRecord = &deletion.KCPRecord{RuntimeID: "no KCP record"}

func unbacked(in deletion.ReapInput) deletion.ReapInput {
	in.Record = noKCPRecord
	return in
}

// kcpRecordOf is the KCP record the operator wrote with the shoot's record.
func kcpRecordOf(s shootstate.Shoot) *deletion.KCPRecord {
	pd := s.Marks.PendingDeletion
	return &deletion.KCPRecord{RuntimeID: pd.RuntimeID, RuntimeNamespace: pd.RuntimeNamespace, ShootName: s.Name, ShootUID: s.UID,
		MarkedAt: pd.MarkedAt, DueAt: pd.DueAt}
}

// withRecord changes the KCP record that backs the input's shoot record.
func withRecord(in deletion.ReapInput, change func(*deletion.KCPRecord)) deletion.ReapInput {
	in.Record = kcpRecordOf(in.Shoot)
	change(in.Record)
	return in
}

// backed gives a marked shoot the KCP record the operator wrote with it, unless the case says otherwise.
func backed(in deletion.ReapInput) deletion.ReapInput {
	switch {
	case in.Record == noKCPRecord:
		in.Record = nil
	case in.Record == nil && in.Shoot.Marks.PendingDeletion != nil:
		in.Record = kcpRecordOf(in.Shoot)
	}
	return in
}

func TestRestorable(t *testing.T) {
	cases := []struct {
		reason string
		shoot  shootstate.Shoot
		want   error
	}{
		{"a marked hibernated shoot of ours can be restored", marked(time.Hour), nil},
		{"after the window, while not yet deleted (brake), it can still be restored", marked(-time.Hour), nil},
		{"not beyond the privacy limit", with(marked(-time.Hour), func(s *shootstate.Shoot) {
			s.Marks.PendingDeletion.MarkedAt = now.Add(-8 * 24 * time.Hour)
		}), deletion.ErrPrivacyLimit},
		{"a foreign shoot cannot", with(marked(time.Hour), func(s *shootstate.Shoot) { s.Marks.Managed = false }), deletion.ErrNotOurs},
		{"a missing shoot cannot", shootstate.Shoot{}, deletion.ErrNotOurs},
		{"a live shoot is not pending deletion", healthy(), deletion.ErrNotPendingDeletion},
		{"a shoot Gardener deletes cannot come back", deleting(time.Minute), deletion.ErrDeletionInProgress},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			if got := deletion.Restorable(tc.shoot, policy(), now); !errors.Is(got, tc.want) {
				t.Errorf("%s: got %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}

func TestParseBrake(t *testing.T) {
	for _, tc := range []struct {
		value       string
		frozen, bad bool
	}{
		{"true", true, false}, {" true\n", true, false}, {"false", false, false}, {"", false, false},
		{"True", true, true}, {"TRUE", true, true}, {"yes", true, true}, {"1", true, true}, {"flase", true, true}, {"no", true, true},
	} {
		frozen, err := deletion.ParseBrake(tc.value)
		if frozen != tc.frozen || (err != nil) != tc.bad || (err != nil && !errors.Is(err, deletion.ErrBrakeValue)) {
			t.Errorf("ParseBrake(%q) = %v, %v; want frozen %v, refused %v", tc.value, frozen, err, tc.frozen, tc.bad)
		}
	}
}

func TestPolicyDueIsTheLaterOfBothRecords(t *testing.T) {
	p := policy()
	pd := shootstate.PendingDeletion{RuntimeID: rtID, MarkedAt: now.Add(-7 * 24 * time.Hour), DueAt: now.Add(-7 * 24 * time.Hour)}
	kcp := deletion.KCPRecord{MarkedAt: now, DueAt: now.Add(72 * time.Hour)}
	if got := p.Due(pd, kcp); !got.Equal(now.Add(72 * time.Hour)) {
		t.Errorf("a forged early shoot record: due %s, want the KCP's %s", got, now.Add(72*time.Hour))
	}
	pd.DueAt = now.Add(100 * time.Hour)
	pd.MarkedAt = now
	if got := p.Due(pd, kcp); !got.Equal(now.Add(100 * time.Hour)) {
		t.Errorf("a later shoot record: due %s, want %s", got, now.Add(100*time.Hour))
	}
	kcp.DueAt = now.Add(30 * 24 * time.Hour)
	pd.DueAt = now
	if got := p.Due(pd, kcp); !got.Equal(now.Add(p.MaxWindow)) {
		t.Errorf("the KCP's due beyond the privacy limit: %s, want %s", got, now.Add(p.MaxWindow))
	}
}

func TestMigrationRecord(t *testing.T) {
	p := policy()
	s := healthy()
	week := now.Add(-7 * 24 * time.Hour)
	forged := shootstate.PendingDeletion{RuntimeID: rtID, RuntimeNamespace: "kcp-system", Plan: "aws", MarkedAt: week, DueAt: week}
	got := p.MigrationRecord(s, forged, now)
	want := deletion.KCPRecord{RuntimeID: rtID, RuntimeNamespace: "kcp-system", ShootName: s.Name, ShootUID: s.UID, MarkedAt: now,
		DueAt: now.Add(72 * time.Hour)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("an old record at the migration is given a full window from now (-want +got):\n%s", diff)
	}
	later := shootstate.PendingDeletion{RuntimeID: rtID, Plan: "aws", MarkedAt: now, DueAt: now.Add(100 * time.Hour), Window: 100 * time.Hour}
	if got := p.MigrationRecord(s, later, now); !got.DueAt.Equal(now.Add(100 * time.Hour)) {
		t.Errorf("the migration never brings a record forward: due %s, want %s", got.DueAt, now.Add(100*time.Hour))
	}
}
