package deletion_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kyma-project/kim/core/domain/deletion"
)

func TestBindingDecisions(t *testing.T) {
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	free := deletion.Binding{Name: "cb", Exists: true, ResourceVersion: "7"}
	dirty := free
	dirty.Dirty, dirty.DirtyLabelled = true, true
	shared, internal, missing := free, free, deletion.Binding{Name: "cb"}
	shared.Shared, internal.Internal = true, true
	dirtyFalse := free
	dirtyFalse.DirtyLabelled = true
	// users is what the reaper read of the other shoots naming the binding: others of them, live waiting for no
	// deletion, no other deletion within its hold.
	users := func(b deletion.Binding, others, live int) deletion.HoldObservation {
		return deletion.HoldObservation{Binding: b, UsersRead: true, OtherUsers: others, LiveUsers: live}
	}
	siblingHeld := users(dirty, 1, 1)
	siblingHeld.OthersHeldUntil = start.Add(time.Minute)
	siblingHolds := users(dirty, 1, 0)
	siblingHolds.Holders, siblingHolds.HoldersHeldUntil = 1, start.Add(time.Minute)
	type want struct {
		Step   deletion.BindingStep
		Record deletion.BindingRelease
	}
	cases := []struct {
		reason string
		got    deletion.BindingDecision
		want   want
	}{
		{"release: no binding named, nothing to do", deletion.OnRelease(deletion.Binding{}, "", deletion.NoSiblingLabel, start, start), want{deletion.BindingDone, ""}},
		{"release: a shared binding is skipped by KEB too", deletion.OnRelease(shared, "", deletion.NoSiblingLabel, start, start), want{deletion.BindingDone, ""}},
		{"release: an internal binding is skipped by KEB too", deletion.OnRelease(internal, "", deletion.NoSiblingLabel, start, start), want{deletion.BindingDone, ""}},
		{"release: a missing binding is not ours to create", deletion.OnRelease(missing, "", deletion.NoSiblingLabel, start, start), want{deletion.BindingDone, ""}},
		{"release: the intent is recorded before the label", deletion.OnRelease(free, "", deletion.NoSiblingLabel, start, start), want{deletion.BindingRecordIntent, deletion.BindingReleasing}},
		{"release: with the intent recorded, label", deletion.OnRelease(free, deletion.BindingReleasing, deletion.NoSiblingLabel, start, start), want{deletion.BindingLabelDirty, deletion.BindingReleased}},
		{"release: dirty after the intent is ours", deletion.OnRelease(dirty, deletion.BindingReleasing, deletion.NoSiblingLabel, start, start), want{deletion.BindingDone, deletion.BindingReleased}},
		{"release: dirty without the intent: read the other deletions first", deletion.OnRelease(dirty, "", deletion.SiblingsNotRead, start, start), want{deletion.BindingListUsers, ""}},
		{"release: dirty without the intent, no sibling's label: someone else's", deletion.OnRelease(dirty, "", deletion.NoSiblingLabel, start, start), want{deletion.BindingDone, deletion.BindingFoundDirty}},
		{"release: dirty with a sibling deletion's label: held for this deletion too", deletion.OnRelease(dirty, "", deletion.SiblingLabelHeld, start, start), want{deletion.BindingDone, deletion.BindingReleased}},
		{"release: dirty after the intent is ours without reading siblings", deletion.OnRelease(dirty, deletion.BindingReleasing, deletion.SiblingsNotRead, start, start), want{deletion.BindingDone, deletion.BindingReleased}},
		{"release: dirty=false is not dirty for KEB's step, so it is labelled", deletion.OnRelease(dirtyFalse, deletion.BindingReleasing, deletion.NoSiblingLabel, start, start), want{deletion.BindingLabelDirty, deletion.BindingReleased}},
		{"release: within the bound it keeps trying", deletion.OnRelease(free, deletion.BindingReleasing, deletion.NoSiblingLabel, start, start.Add(deletion.BindingReleaseTimeout)), want{deletion.BindingLabelDirty, deletion.BindingReleased}},
		{"release: after the bound it gives up", deletion.OnRelease(free, deletion.BindingReleasing, deletion.NoSiblingLabel, start, start.Add(deletion.BindingReleaseTimeout+time.Second)), want{deletion.BindingDone, deletion.BindingNotReleased}},
		{"release: given up stays given up", deletion.OnRelease(free, deletion.BindingNotReleased, deletion.NoSiblingLabel, start, start), want{deletion.BindingDone, deletion.BindingNotReleased}},

		{"restore: our label comes off", deletion.OnRestore(users(dirty, 0, 0), deletion.BindingReleased, start), want{deletion.BindingRemoveDirty, ""}},
		{"restore: our intent's label comes off", deletion.OnRestore(users(dirty, 0, 0), deletion.BindingReleasing, start), want{deletion.BindingRemoveDirty, ""}},
		{"restore: the other deletions not read yet: read them first", deletion.OnRestore(deletion.HoldObservation{Binding: dirty}, deletion.BindingReleased, start), want{deletion.BindingListUsers, ""}},
		{"restore: another deletion holds the label within its hold: it stays for that deletion's KEB step", deletion.OnRestore(siblingHolds, deletion.BindingReleased, start), want{deletion.BindingDone, ""}},
		{"restore: another deletion held the label, its hold is over: ours comes off", deletion.OnRestore(siblingHolds, deletion.BindingReleased, start.Add(time.Minute)), want{deletion.BindingRemoveDirty, ""}},
		{"restore: someone else's label stays", deletion.OnRestore(users(dirty, 0, 0), deletion.BindingFoundDirty, start), want{deletion.BindingDone, ""}},
		{"restore: a label after a given-up release is not ours", deletion.OnRestore(users(dirty, 0, 0), deletion.BindingNotReleased, start), want{deletion.BindingDone, ""}},
		{"restore: nothing to remove", deletion.OnRestore(users(free, 0, 0), deletion.BindingReleased, start), want{deletion.BindingDone, ""}},
		{"restore: a shared binding is never written", deletion.OnRestore(users(shared, 0, 0), deletion.BindingReleased, start), want{deletion.BindingDone, ""}},

		{"gone: no other user, dirty stays (what KEB leaves)", deletion.OnShootGone(users(dirty, 0, 0), deletion.BindingReleased, start), want{deletion.BindingDone, ""}},
		{"gone: another user, our dirty comes off (KEB would not set it)", deletion.OnShootGone(users(dirty, 1, 1), deletion.BindingReleased, start), want{deletion.BindingRemoveDirty, ""}},
		{"gone: only shoots waiting for deletion name it: our label stays for the last of them", deletion.OnShootGone(users(dirty, 2, 0), deletion.BindingReleased, start), want{deletion.BindingDone, ""}},
		{"gone: a sibling deletion within its hold relies on our label: it stays", deletion.OnShootGone(siblingHeld, deletion.BindingReleased, start), want{deletion.BindingDone, ""}},
		{"gone: kept, only shoots waiting for deletion name it: it stays", deletion.OnShootGone(users(dirty, 1, 0), deletion.BindingKept, start), want{deletion.BindingDone, ""}},
		{"gone: another user, someone else's dirty stays", deletion.OnShootGone(users(dirty, 1, 1), deletion.BindingFoundDirty, start), want{deletion.BindingDone, ""}},
		{"gone: no user and not dirty (given up or removed since): label as KEB would", deletion.OnShootGone(users(free, 0, 0), deletion.BindingNotReleased, start), want{deletion.BindingLabelDirty, ""}},
		{"gone: found dirty, label removed since, no user: label as KEB would", deletion.OnShootGone(users(free, 0, 0), deletion.BindingFoundDirty, start), want{deletion.BindingLabelDirty, ""}},
		{"gone: another user and not dirty: left alone", deletion.OnShootGone(users(free, 1, 1), deletion.BindingNotReleased, start), want{deletion.BindingDone, ""}},
		{"gone: untouched deletions are not ours to finish", deletion.OnShootGone(users(free, 0, 0), deletion.BindingUntouched, start), want{deletion.BindingDone, ""}},
		{"gone: shared bindings are never labelled", deletion.OnShootGone(users(shared, 0, 0), deletion.BindingReleased, start), want{deletion.BindingDone, ""}},
		{"gone: returned to the tenant, another user: left alone", deletion.OnShootGone(users(free, 1, 1), deletion.BindingReturned, start), want{deletion.BindingDone, ""}},
		{"gone: returned, a later label someone set, another user: theirs", deletion.OnShootGone(users(dirty, 1, 1), deletion.BindingReturned, start), want{deletion.BindingDone, ""}},
		{"gone: returned, no user left: label as KEB would", deletion.OnShootGone(users(free, 0, 0), deletion.BindingReturned, start), want{deletion.BindingLabelDirty, ""}},
		{"gone: kept for the last user, another user since: our label comes off", deletion.OnShootGone(users(dirty, 1, 1), deletion.BindingKept, start), want{deletion.BindingRemoveDirty, ""}},
		{"restore: a label kept for the last user is ours", deletion.OnRestore(users(dirty, 0, 0), deletion.BindingKept, start), want{deletion.BindingRemoveDirty, ""}},
		{"restore: a label after the return is not ours", deletion.OnRestore(users(dirty, 0, 0), deletion.BindingReturned, start), want{deletion.BindingDone, ""}},
	}
	for _, c := range cases {
		if diff := cmp.Diff(c.want, want{c.got.Step, c.got.Record}); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", c.reason, diff)
		}
		if c.got.Message == "" {
			t.Errorf("%s: no message", c.reason)
		}
	}
}

func TestBindingHoldDecisions(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	free := deletion.Binding{Name: "cb", Exists: true, ResourceVersion: "7"}
	dirty := free
	dirty.Dirty, dirty.DirtyLabelled = true, true
	dirtyFalse := free
	dirtyFalse.DirtyLabelled = true
	sharedDirty := dirty
	sharedDirty.Shared = true
	// read: users other shoots name the binding, all waiting for no deletion.
	read := func(b deletion.Binding, users int, heldUntil time.Time) deletion.HoldObservation {
		return deletion.HoldObservation{Binding: b, UsersRead: true, OtherUsers: users, LiveUsers: users, OthersHeldUntil: heldUntil}
	}
	waiting := read(dirty, 2, now.Add(time.Hour))
	waiting.LiveUsers = 0
	type want struct {
		Step   deletion.BindingStep
		Record deletion.BindingRelease
		Until  time.Time
	}
	cases := []struct {
		reason   string
		o        deletion.HoldObservation
		recorded deletion.BindingRelease
		want     want
	}{
		{"someone else's label is never this deletion's", read(dirty, 1, time.Time{}), deletion.BindingFoundDirty, want{deletion.BindingDone, deletion.BindingFoundDirty, time.Time{}}},
		{"a given-up release has no label", read(dirty, 1, time.Time{}), deletion.BindingNotReleased, want{deletion.BindingDone, deletion.BindingNotReleased, time.Time{}}},
		{"kept: decided already", read(dirty, 1, time.Time{}), deletion.BindingKept, want{deletion.BindingDone, deletion.BindingKept, time.Time{}}},
		{"released, label gone: nothing of ours left", deletion.HoldObservation{Binding: free}, deletion.BindingReleased, want{deletion.BindingDone, deletion.BindingReturned, time.Time{}}},
		{"released, dirty=false is not our label", deletion.HoldObservation{Binding: dirtyFalse}, deletion.BindingReleased, want{deletion.BindingDone, deletion.BindingReturned, time.Time{}}},
		{"released, shared since: never written", deletion.HoldObservation{Binding: sharedDirty}, deletion.BindingReleased, want{deletion.BindingDone, deletion.BindingReturned, time.Time{}}},
		{"released, dirty: read the users first", deletion.HoldObservation{Binding: dirty}, deletion.BindingReleased, want{deletion.BindingListUsers, deletion.BindingReleased, time.Time{}}},
		{"last user: the label stays", read(dirty, 0, time.Time{}), deletion.BindingReleased, want{deletion.BindingDone, deletion.BindingKept, time.Time{}}},
		{"another user, another deletion's hold runs: wait for it", read(dirty, 2, now.Add(time.Hour)), deletion.BindingReleased, want{deletion.BindingWait, deletion.BindingReleased, now.Add(time.Hour)}},
		{"only shoots waiting for deletion name it: kept for the last of them, whatever their holds", waiting, deletion.BindingReleased, want{deletion.BindingDone, deletion.BindingKept, time.Time{}}},
		{"another user, every hold over: the label comes off", read(dirty, 1, now), deletion.BindingReleased, want{deletion.BindingRemoveDirty, deletion.BindingReturned, time.Time{}}},
	}
	for _, c := range cases {
		d := deletion.OnHoldEnd(c.o, c.recorded, now)
		if diff := cmp.Diff(c.want, want{d.Step, d.Record, d.Until}); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", c.reason, diff)
		}
		if d.Message == "" {
			t.Errorf("%s: no message", c.reason)
		}
	}
	p := deletion.Policy{}
	rec := deletion.KCPRecord{MarkedAt: now}
	if got := p.BindingHoldEnd(rec); !got.Equal(now.Add(deletion.DefaultBindingReleaseHold)) {
		t.Errorf("hold end without a setting: %s; want the default %s after the mark", got, deletion.DefaultBindingReleaseHold)
	}
	p.BindingReleaseHold = 3 * time.Hour
	if got := p.BindingHoldEnd(rec); !got.Equal(now.Add(3 * time.Hour)) {
		t.Errorf("hold end with 3h: %s", got)
	}
	p.BindingReleaseHold = -time.Second
	if p.MaxWindow = time.Hour; p.Validate() == nil {
		t.Error("a negative hold was accepted")
	}
}
