package runtimeconfig

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// The reconcile time's line is written by hand for the times formatTime writes: it must be byte for byte what the
// encoder writes, over the whole range of years and for times that need no quoting by other encoders.
func TestReconcileTimeLineIsWhatTheEncoderWrites(t *testing.T) {
	const seed = 20261206
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, seed))
	times := []time.Time{time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(2026, 12, 6, 10, 0, 0, 999, time.FixedZone("x", -7*3600))}
	for range 2000 {
		times = append(times, time.Unix(rnd.Int64N(253402300799), rnd.Int64N(1e9)))
	}
	for _, at := range times {
		s := formatTime(at)
		got, err := renderReconcileTime(s)
		if err != nil {
			t.Fatal(err)
		}
		want, err := encodeYAML(reconcileTimeLine{s})
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("at %v: line %q, the encoder writes %q", at, got, want)
		}
	}
	// Anything else is the encoder's: a time in another form, or a value that is no time at all.
	for _, s := range []string{"2026-12-06T10:00:00+01:00", "2026-12-06T10:00:00.5Z", "yes", "a: b"} {
		got, _ := renderReconcileTime(s)
		want, _ := encodeYAML(reconcileTimeLine{s})
		if got != want {
			t.Errorf("%q: line %q, the encoder writes %q", s, got, want)
		}
	}
}

// Documents gives the desired state Compute gives, renders a document once for any number of passes that differ
// only in the reconcile time, and renders again for any change of the document.
func TestDocumentsComputeWhatComputeComputes(t *testing.T) {
	var docs Documents
	renders := 0
	check := func(name string, f Facts, wantRender bool) {
		t.Helper()
		before := docs.size()
		got, err := docs.Compute(f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Compute(f)
		if err != nil {
			t.Fatal(err)
		}
		if got.ProvisioningInfo != want.ProvisioningInfo || got.Hash() != want.Hash() || got.infoBody != want.infoBody {
			t.Errorf("%s: document\n%s\nwant\n%s", name, got.ProvisioningInfo, want.ProvisioningInfo)
		}
		if rendered := docs.size() > before; rendered != wantRender {
			t.Errorf("%s: rendered %v, want %v", name, rendered, wantRender)
		}
		if wantRender {
			renders++
		}
	}
	f := kebFacts()
	check("first", f, true)
	check("again", f, false)
	for i := range 3 {
		g := kebFacts()
		g.Shoot.ReconciledAt = g.Shoot.ReconciledAt.Add(time.Duration(i+1) * time.Hour)
		check(fmt.Sprintf("reconciled %d h later", i+1), g, false)
	}
	never := kebFacts()
	never.Shoot.ReconciledAt = time.Time{}
	check("never reconciled", never, false)
	changes := map[string]func(*Facts){
		"pool maximum": func(f *Facts) { f.Runtime.Workers[1].Maximum = 3 },
		"pool zones":   func(f *Facts) { f.Runtime.Workers[0].Zones = f.Runtime.Workers[0].Zones[:1] },
		"infrastructure config": func(f *Facts) {
			f.Shoot.InfrastructureConfig = []byte(strings.Replace(awsInfrastructureConfig, "10.250.0.0/16", "10.251.0.0/16", 1))
		},
		"zone subnet":   func(f *Facts) { f.Shoot.Zones[0].CIDRs[2] = "10.250.64.0/20" },
		"seed region":   func(f *Facts) { f.Shoot.SeedRegion = "eu-west-2" },
		"dual stack":    func(f *Facts) { f.Shoot.DualStack = true },
		"ACL":           func(f *Facts) { f.Runtime.ACL = append(f.Runtime.ACL, "198.51.100.0/24") },
		"instance name": func(f *Facts) { f.InstanceName = "yes" },
	}
	for name, change := range changes {
		g := kebFacts()
		change(&g)
		check(name, g, true)
		check(name+", again", g, false)
	}
	if got := docs.size(); got != renders {
		t.Errorf("%d documents held after %d renders", got, renders)
	}
}

// Memory stays bounded: two generations at most, and a document in use is carried into the current one.
func TestDocumentsForgetWhatNobodyAsksFor(t *testing.T) {
	docs := Documents{generation: 4}
	kept := kebFacts()
	for i := range 20 {
		f := kebFacts()
		f.Runtime.ID = fmt.Sprintf("runtime-%d", i)
		if _, err := docs.Compute(f); err != nil {
			t.Fatal(err)
		}
		if _, err := docs.Compute(kept); err != nil {
			t.Fatal(err)
		}
		if docs.size() > 8 {
			t.Fatalf("after %d runtimes %d documents held, want at most two generations of 4", i+1, docs.size())
		}
	}
	before := docs.size()
	if _, err := docs.Compute(kept); err != nil {
		t.Fatal(err)
	}
	if docs.size() != before {
		t.Error("the document asked for on every pass was forgotten")
	}
}

// The document's part before the reconcile time allocates a fraction when it is remembered: the point of Documents.
func TestDocumentsRenderNothingTheySawBefore(t *testing.T) {
	var docs Documents
	f := kebFacts()
	if _, err := docs.Compute(f); err != nil {
		t.Fatal(err)
	}
	remembered := testing.AllocsPerRun(20, func() { _, _ = docs.Compute(f) })
	rendered := testing.AllocsPerRun(20, func() { _, _ = Compute(f) })
	t.Logf("allocations per pass: %v remembered, %v rendered", remembered, rendered)
	if remembered*2 > rendered {
		t.Errorf("a remembered document allocates %v times, rendering %v: not remembered", remembered, rendered)
	}
}
