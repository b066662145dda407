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
	type want struct {
		Step   deletion.BindingStep
		Record deletion.BindingRelease
	}
	cases := []struct {
		reason string
		got    deletion.BindingDecision
		want   want
	}{
		{"release: no binding named, nothing to do", deletion.OnRelease(deletion.Binding{}, "", start, start), want{deletion.BindingDone, ""}},
		{"release: a shared binding is skipped by KEB too", deletion.OnRelease(shared, "", start, start), want{deletion.BindingDone, ""}},
		{"release: an internal binding is skipped by KEB too", deletion.OnRelease(internal, "", start, start), want{deletion.BindingDone, ""}},
		{"release: a missing binding is not ours to create", deletion.OnRelease(missing, "", start, start), want{deletion.BindingDone, ""}},
		{"release: the intent is recorded before the label", deletion.OnRelease(free, "", start, start), want{deletion.BindingRecordIntent, deletion.BindingReleasing}},
		{"release: with the intent recorded, label", deletion.OnRelease(free, deletion.BindingReleasing, start, start), want{deletion.BindingLabelDirty, deletion.BindingReleased}},
		{"release: dirty after the intent is ours", deletion.OnRelease(dirty, deletion.BindingReleasing, start, start), want{deletion.BindingDone, deletion.BindingReleased}},
		{"release: dirty without the intent is someone else's", deletion.OnRelease(dirty, "", start, start), want{deletion.BindingDone, deletion.BindingFoundDirty}},
		{"release: dirty=false is not dirty for KEB's step, so it is labelled", deletion.OnRelease(dirtyFalse, deletion.BindingReleasing, start, start), want{deletion.BindingLabelDirty, deletion.BindingReleased}},
		{"release: within the bound it keeps trying", deletion.OnRelease(free, deletion.BindingReleasing, start, start.Add(deletion.BindingReleaseTimeout)), want{deletion.BindingLabelDirty, deletion.BindingReleased}},
		{"release: after the bound it gives up", deletion.OnRelease(free, deletion.BindingReleasing, start, start.Add(deletion.BindingReleaseTimeout+time.Second)), want{deletion.BindingDone, deletion.BindingNotReleased}},
		{"release: given up stays given up", deletion.OnRelease(free, deletion.BindingNotReleased, start, start), want{deletion.BindingDone, deletion.BindingNotReleased}},

		{"restore: our label comes off", deletion.OnRestore(dirty, deletion.BindingReleased), want{deletion.BindingRemoveDirty, ""}},
		{"restore: our intent's label comes off", deletion.OnRestore(dirty, deletion.BindingReleasing), want{deletion.BindingRemoveDirty, ""}},
		{"restore: someone else's label stays", deletion.OnRestore(dirty, deletion.BindingFoundDirty), want{deletion.BindingDone, ""}},
		{"restore: a label after a given-up release is not ours", deletion.OnRestore(dirty, deletion.BindingNotReleased), want{deletion.BindingDone, ""}},
		{"restore: nothing to remove", deletion.OnRestore(free, deletion.BindingReleased), want{deletion.BindingDone, ""}},
		{"restore: a shared binding is never written", deletion.OnRestore(shared, deletion.BindingReleased), want{deletion.BindingDone, ""}},

		{"gone: no other user, dirty stays (what KEB leaves)", deletion.OnShootGone(dirty, deletion.BindingReleased, false), want{deletion.BindingDone, ""}},
		{"gone: another user, our dirty comes off (KEB would not set it)", deletion.OnShootGone(dirty, deletion.BindingReleased, true), want{deletion.BindingRemoveDirty, ""}},
		{"gone: another user, someone else's dirty stays", deletion.OnShootGone(dirty, deletion.BindingFoundDirty, true), want{deletion.BindingDone, ""}},
		{"gone: no user and not dirty (given up or removed since): label as KEB would", deletion.OnShootGone(free, deletion.BindingNotReleased, false), want{deletion.BindingLabelDirty, ""}},
		{"gone: found dirty, label removed since, no user: label as KEB would", deletion.OnShootGone(free, deletion.BindingFoundDirty, false), want{deletion.BindingLabelDirty, ""}},
		{"gone: another user and not dirty: left alone", deletion.OnShootGone(free, deletion.BindingNotReleased, true), want{deletion.BindingDone, ""}},
		{"gone: untouched deletions are not ours to finish", deletion.OnShootGone(free, deletion.BindingUntouched, false), want{deletion.BindingDone, ""}},
		{"gone: shared bindings are never labelled", deletion.OnShootGone(shared, deletion.BindingReleased, false), want{deletion.BindingDone, ""}},
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
