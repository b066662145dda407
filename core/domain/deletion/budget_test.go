package deletion_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim/core/domain/deletion"
)

func TestPolicy(t *testing.T) {
	p := policy()
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), `plan "huge"`) {
		t.Errorf("a plan window above the maximum must be reported by name, got %v", err)
	}
	delete(p.PlanWindows, "huge")
	if err := p.Validate(); err != nil {
		t.Errorf("valid policy rejected: %v", err)
	}
	for reason, bad := range map[string]deletion.Policy{
		"negative window": {DefaultWindow: -time.Hour, MaxWindow: time.Hour, Budget: deletion.DefaultBudget()},
		"no privacy cap":  {DefaultWindow: time.Hour, Budget: deletion.DefaultBudget()},
		"no budget":       {DefaultWindow: time.Hour, MaxWindow: time.Hour},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%s must be rejected", reason)
		}
	}
	windows := map[string]time.Duration{"trial": 0, "free": 0, "azure": 24 * time.Hour, "aws": 72 * time.Hour, "": 72 * time.Hour}
	for plan, want := range windows {
		if got := p.Window(plan); got != want {
			t.Errorf("window of plan %q = %s, want %s", plan, got, want)
		}
	}
	if got := p.LongerPlan("trial", "aws"); got != "aws" {
		t.Errorf("LongerPlan(trial, aws) = %q, want aws", got)
	}
	if got := p.LongerPlan("aws", "trial"); got != "aws" {
		t.Errorf("LongerPlan(aws, trial) = %q, want aws: the recorded plan never moves to a shorter window", got)
	}
	if got := p.LongerPlan("", "trial"); got != "trial" {
		t.Errorf("LongerPlan(\"\", trial) = %q, want trial", got)
	}
}

func TestBudget(t *testing.T) {
	b := deletion.Budget{Limit: 2, Per: time.Hour}
	l, err := b.Reserve(deletion.Ledger{}, now)
	if err != nil || len(l.Deletions) != 1 {
		t.Fatalf("first reservation: %v, %+v", err, l)
	}
	if l, err = b.Reserve(l, now.Add(time.Minute)); err != nil {
		t.Fatalf("second reservation: %v", err)
	}
	tripped, err := b.Reserve(l, now.Add(2*time.Minute))
	if !errors.Is(err, deletion.ErrBudgetExhausted) || tripped.TrippedAt.IsZero() {
		t.Fatalf("third reservation within the hour: %v, %+v; want the breaker tripped", err, tripped)
	}
	if _, err := b.Reserve(tripped, now.Add(5*time.Hour)); !errors.Is(err, deletion.ErrBudgetExhausted) {
		t.Errorf("a tripped breaker must stay tripped until a person resets it, got %v", err)
	}
	reset := tripped
	reset.TrippedAt = time.Time{}
	after, err := b.Reserve(reset, now.Add(60*time.Minute+30*time.Second))
	if err != nil || len(after.Deletions) != 2 {
		t.Errorf("after a reset and an hour, the oldest entry expires and a deletion is granted: %v, %+v", err, after)
	}
	if got := b.Used(after, now.Add(60*time.Minute+30*time.Second)); got != 2 {
		t.Errorf("used = %d, want 2", got)
	}
	back := deletion.Ledger{Deletions: []time.Time{now.Add(time.Hour), now.Add(time.Hour)}}
	if _, err := b.Reserve(back, now); !errors.Is(err, deletion.ErrBudgetExhausted) {
		t.Errorf("deletions recorded ahead of now (the clock went back) must still count, got %v", err)
	}
}

func TestGuardStops(t *testing.T) {
	p := policy()
	cases := map[deletion.Stop]deletion.Guard{
		deletion.StopNone:        {ClockAhead: -time.Hour},
		deletion.StopBrake:       {Frozen: true, Tripped: true},
		deletion.StopBreaker:     {Tripped: true},
		deletion.StopClockUnsure: {ClockUnknown: true},
		deletion.StopClockAhead:  {ClockAhead: 3 * time.Minute},
	}
	for want, g := range cases {
		if got, why := g.Stopped(p); got != want || (want != deletion.StopNone && why == "") {
			t.Errorf("%+v stopped = %q (%q), want %q with a reason", g, got, why, want)
		}
	}
}
