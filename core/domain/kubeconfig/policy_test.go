package kubeconfig

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var t0 = time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)

func mustPolicy(t *testing.T, validity time.Duration, fraction float64) Policy {
	t.Helper()
	p, err := NewPolicy(validity, fraction)
	if err != nil {
		t.Fatalf("NewPolicy: %v", err)
	}
	return p
}

func recorded(issued, expires time.Time) Recorded {
	return Recorded{SecretExists: true, HasKubeconfig: true, IssuedAt: FormatTime(issued), ExpiresAt: FormatTime(expires)}
}

func recordedFor(issued time.Time, s ShootRef) Recorded {
	r := recorded(issued, issued.Add(24*time.Hour))
	r.Shoot = s
	return r
}

func TestDecide(t *testing.T) {
	day := mustPolicy(t, 24*time.Hour, 0.6)
	noJitter := day
	noJitter.JitterFraction = 0
	const key = "1f2e3d4c-0000-4000-8000-000000000001"
	// With no jitter a 24h kubeconfig issued at t0 rotates at t0+14h24m (60%).
	rotate := t0.Add(14*time.Hour + 24*time.Minute)

	type want struct {
		Issue    bool
		Trigger  Trigger
		RotateAt time.Time
	}
	cases := []struct {
		reason string
		policy Policy
		now    time.Time
		rec    Recorded
		force  bool
		shoot  ShootRef
		want   want
	}{
		{
			reason: "no Secret: issue the first kubeconfig",
			policy: day, now: t0, rec: Recorded{},
			want: want{Issue: true, Trigger: TriggerInitial},
		},
		{
			reason: "force wins over a fresh kubeconfig",
			policy: day, now: t0.Add(time.Minute), rec: recorded(t0, t0.Add(24*time.Hour)), force: true,
			want: want{Issue: true, Trigger: TriggerForced},
		},
		{
			reason: "force also applies when the Secret is missing (the trigger says forced)",
			policy: day, now: t0, rec: Recorded{}, force: true,
			want: want{Issue: true, Trigger: TriggerForced},
		},
		{
			reason: "Secret without kubeconfig data is repaired at once",
			policy: day, now: t0.Add(time.Minute),
			rec:  Recorded{SecretExists: true, IssuedAt: FormatTime(t0), ExpiresAt: FormatTime(t0.Add(24 * time.Hour))},
			want: want{Issue: true, Trigger: TriggerInvalid},
		},
		{
			reason: "missing issue time (older Secret without our annotations) rotates now",
			policy: day, now: t0,
			rec:  Recorded{SecretExists: true, HasKubeconfig: true, ExpiresAt: FormatTime(t0.Add(time.Hour))},
			want: want{Issue: true, Trigger: TriggerInvalid},
		},
		{
			reason: "unparsable expiry rotates now",
			policy: day, now: t0,
			rec:  Recorded{SecretExists: true, HasKubeconfig: true, IssuedAt: FormatTime(t0), ExpiresAt: "tomorrow"},
			want: want{Issue: true, Trigger: TriggerInvalid},
		},
		{
			reason: "expiry before issue time is inconsistent and rotates now",
			policy: day, now: t0,
			rec:  recorded(t0, t0.Add(-time.Hour)),
			want: want{Issue: true, Trigger: TriggerInvalid},
		},
		{
			reason: "expired kubeconfig rotates now",
			policy: day, now: t0.Add(25 * time.Hour), rec: recorded(t0, t0.Add(24*time.Hour)),
			want: want{Issue: true, Trigger: TriggerExpired},
		},
		{
			reason: "exactly at expiry counts as expired",
			policy: day, now: t0.Add(24 * time.Hour), rec: recorded(t0, t0.Add(24*time.Hour)),
			want: want{Issue: true, Trigger: TriggerExpired},
		},
		{
			reason: "fresh kubeconfig: nothing to do until 60% of the lifetime",
			policy: noJitter, now: t0.Add(time.Hour), rec: recorded(t0, t0.Add(24*time.Hour)),
			want: want{RotateAt: rotate},
		},
		{
			reason: "one second before the rotation point: still nothing to do",
			policy: noJitter, now: rotate.Add(-time.Second), rec: recorded(t0, t0.Add(24*time.Hour)),
			want: want{RotateAt: rotate},
		},
		{
			reason: "at the rotation point: rotate on time",
			policy: noJitter, now: rotate, rec: recorded(t0, t0.Add(24*time.Hour)),
			want: want{Issue: true, Trigger: TriggerTime},
		},
		{
			reason: "Gardener returned a shorter lifetime than requested: the real lifetime counts (60% of 10h)",
			policy: noJitter, now: t0.Add(time.Hour), rec: recorded(t0, t0.Add(10*time.Hour)),
			want: want{RotateAt: t0.Add(6 * time.Hour)},
		},
		{
			reason: "validity shortened after issue: the configured validity caps the lifetime (60% of 1h)",
			policy: func() Policy { p := noJitter; p.Validity = time.Hour; return p }(),
			now:    t0.Add(time.Minute), rec: recorded(t0, t0.Add(24*time.Hour)),
			want: want{RotateAt: t0.Add(36 * time.Minute)},
		},
		{
			reason: "issued for the same shoot: nothing to do",
			policy: noJitter, now: t0.Add(time.Minute), rec: recordedFor(t0, ShootRef{"c-1", "uid-1"}), shoot: ShootRef{"c-1", "uid-1"},
			want: want{RotateAt: rotate},
		},
		{
			reason: "the shoot was created again under its name (new UID): issue at once",
			policy: noJitter, now: t0.Add(time.Minute), rec: recordedFor(t0, ShootRef{"c-1", "uid-1"}), shoot: ShootRef{"c-1", "uid-2"},
			want: want{Issue: true, Trigger: TriggerShootChanged},
		},
		{
			reason: "the cluster names another shoot now: issue at once",
			policy: noJitter, now: t0.Add(time.Minute), rec: recordedFor(t0, ShootRef{"c-1", "uid-1"}), shoot: ShootRef{"c-2", ""},
			want: want{Issue: true, Trigger: TriggerShootChanged},
		},
		{
			reason: "a Secret of an older operator records no shoot: no extra rotation (recorded with the next one)",
			policy: noJitter, now: t0.Add(time.Minute), rec: recorded(t0, t0.Add(24*time.Hour)), shoot: ShootRef{"c-1", "uid-1"},
			want: want{RotateAt: rotate},
		},
		{
			reason: "the shoot's UID is not known (not in the cache): no rotation on a guess",
			policy: noJitter, now: t0.Add(time.Minute), rec: recordedFor(t0, ShootRef{"c-1", "uid-1"}), shoot: ShootRef{"c-1", ""},
			want: want{RotateAt: rotate},
		},
		{
			reason: "issue time in the future (clock skew) with a sane expiry: wait for the rotation point",
			policy: noJitter, now: t0, rec: recorded(t0.Add(time.Minute), t0.Add(24*time.Hour+time.Minute)),
			want: want{RotateAt: rotate.Add(time.Minute)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			d := tc.policy.Decide(tc.now, key, tc.rec, tc.force, tc.shoot)
			got := want{Issue: d.Issue, Trigger: d.Trigger, RotateAt: d.RotateAt}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApproxTime(0)); diff != "" {
				t.Errorf("%s: decision mismatch (-want +got):\n%s\ndetail: %s", tc.reason, diff, d.Detail)
			}
			if d.Detail == "" {
				t.Errorf("%s: decision without detail", tc.reason)
			}
		})
	}
}

func TestRotateAtBounds(t *testing.T) {
	cases := []struct {
		reason   string
		validity time.Duration
		fraction float64
		lifetime time.Duration
	}{
		{reason: "production defaults", validity: 24 * time.Hour, fraction: 0.6, lifetime: 24 * time.Hour},
		{reason: "Gardener minimum validity", validity: 10 * time.Minute, fraction: 0.6, lifetime: 10 * time.Minute},
		{reason: "late fraction leaves little room", validity: time.Hour, fraction: 0.95, lifetime: time.Hour},
		{reason: "early fraction", validity: 24 * time.Hour, fraction: 0.1, lifetime: 24 * time.Hour},
		{reason: "lifetime shorter than the safety margin", validity: 24 * time.Hour, fraction: 0.6, lifetime: 5 * time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			p := mustPolicy(t, tc.validity, tc.fraction)
			expires := t0.Add(tc.lifetime)
			earliest := t0.Add(time.Duration(tc.fraction * float64(tc.lifetime)))
			for i := range 2000 {
				key := keyN(i)
				at := p.RotateAt(key, t0, expires)
				if at.Before(earliest) || !at.Before(expires) {
					t.Fatalf("%s: key %s rotates at %s, want in [%s, %s)", tc.reason, key, at, earliest, expires)
				}
				if again := p.RotateAt(key, t0, expires); !again.Equal(at) {
					t.Fatalf("%s: key %s: rotation point not deterministic: %s then %s", tc.reason, key, at, again)
				}
			}
		})
	}
}

// TestJitterSpreadsClusters checks that 10,000 clusters issued in the same second do not rotate in the same second:
// with the defaults the rotation points spread over the 72-minute jitter window.
func TestJitterSpreadsClusters(t *testing.T) {
	p := mustPolicy(t, 24*time.Hour, 0.6)
	perSecond := map[int64]int{}
	var first, last time.Time
	for i := range 10000 {
		at := p.RotateAt(keyN(i), t0, t0.Add(24*time.Hour))
		perSecond[at.Unix()]++
		if first.IsZero() || at.Before(first) {
			first = at
		}
		if at.After(last) {
			last = at
		}
	}
	busiest := 0
	for _, n := range perSecond {
		busiest = max(busiest, n)
	}
	if busiest > 20 {
		t.Errorf("%d clusters rotate in the same second, want at most 20", busiest)
	}
	if spread := last.Sub(first); spread < 60*time.Minute {
		t.Errorf("rotation points spread over %s, want at least 60m of the 72m window", spread)
	}
}

// TestSafetyMarginCapsJitter checks that a large jitter never pushes the rotation point into the safety margin:
// 10h lifetime, fraction 0.6, jitter up to 39% (3.9h), margin 1h -> points in [6h, 9h], keys with a large jitter
// exactly at 9h.
func TestSafetyMarginCapsJitter(t *testing.T) {
	p := Policy{Validity: 24 * time.Hour, RotationFraction: 0.6, JitterFraction: 0.39, SafetyMargin: time.Hour}
	expires := t0.Add(10 * time.Hour)
	capped := 0
	for i := range 200 {
		at := p.RotateAt(keyN(i), t0, expires)
		if at.Before(t0.Add(6*time.Hour)) || at.After(t0.Add(9*time.Hour)) {
			t.Fatalf("key %d rotates at %s, want within [6h, 9h] after issue", i, at.Sub(t0))
		}
		if jitter(keyN(i)) > 0.8 {
			if !at.Equal(t0.Add(9 * time.Hour)) {
				t.Errorf("key %d with jitter %.2f rotates at %s, want capped at expiry-1h", i, jitter(keyN(i)), at.Sub(t0))
			}
			capped++
		}
	}
	if capped == 0 {
		t.Fatal("no key with a large jitter among 200: the cap was not exercised")
	}
}

func TestPolicyValidate(t *testing.T) {
	cases := []struct {
		reason  string
		policy  Policy
		wantErr bool
	}{
		{reason: "defaults are valid", policy: Policy{Validity: time.Hour, RotationFraction: 0.6, JitterFraction: 0.05}},
		{reason: "zero validity", policy: Policy{RotationFraction: 0.6}, wantErr: true},
		{reason: "fraction 1 would rotate at expiry", policy: Policy{Validity: time.Hour, RotationFraction: 1}, wantErr: true},
		{reason: "jitter reaching expiry", policy: Policy{Validity: time.Hour, RotationFraction: 0.6, JitterFraction: 0.4}, wantErr: true},
		{reason: "negative margin", policy: Policy{Validity: time.Hour, RotationFraction: 0.6, SafetyMargin: -1}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			if err := tc.policy.Validate(); (err != nil) != tc.wantErr {
				t.Errorf("%s: Validate() = %v, want error %v", tc.reason, err, tc.wantErr)
			}
		})
	}
}

func TestNewPolicyShrinksJitterForLateFractions(t *testing.T) {
	p, err := NewPolicy(time.Hour, 0.97)
	if err != nil {
		t.Fatalf("NewPolicy(1h, 0.97): %v", err)
	}
	if p.JitterFraction >= 0.03 {
		t.Errorf("jitter fraction %g leaves no room before expiry", p.JitterFraction)
	}
}

func TestTriggerRotation(t *testing.T) {
	for trig, want := range map[Trigger]bool{TriggerNone: false, TriggerInitial: false, TriggerForced: true, TriggerTime: true,
		TriggerExpired: true, TriggerInvalid: true} {
		if got := trig.Rotation(); got != want {
			t.Errorf("Trigger(%q).Rotation() = %v, want %v", trig, got, want)
		}
	}
}

func keyN(i int) string {
	const hex = "0123456789abcdef"
	b := []byte("00000000-0000-4000-8000-000000000000")
	for pos := len(b) - 1; i > 0 && pos >= 0; pos-- {
		if b[pos] == '-' {
			continue
		}
		b[pos] = hex[i%16]
		i /= 16
	}
	return string(b)
}
