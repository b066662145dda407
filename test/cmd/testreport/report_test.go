package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// stream builds a go test -json stream from "package action [test|-] [output...]" lines ("-": the package's own).
func stream(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		f := strings.Fields(l)
		test := ""
		if len(f) > 2 && f[2] != "-" {
			test = `,"Test":"` + f[2] + `"`
		}
		out := ""
		if f[1] == "output" {
			out = `,"Output":"` + strings.Join(f[3:], " ") + `\n"`
		}
		b.WriteString(`{"Action":"` + f[1] + `","Package":"` + f[0] + `"` + test + out + "}\n")
	}
	return b.String()
}

func mustRead(t *testing.T, s string) *report {
	t.Helper()
	rep, err := readReport(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestRerunGroupsSelectsWhatSkipped(t *testing.T) {
	cases := []struct {
		reason string
		stream string
		want   []group
	}{
		{
			reason: "only the top-level tests that skipped, in the packages where they skipped; a package with nothing skipped is not run",
			stream: stream(
				"m/a run TestUnit", "m/a pass TestUnit",
				"m/a run TestIntegration", "m/a skip TestIntegration",
				"m/a pass",
				"m/b run TestOnlyUnit", "m/b pass TestOnlyUnit", "m/b pass",
			),
			want: []group{{Run: "^(TestIntegration)$", Pkgs: []string{"m/a"}}},
		},
		{
			reason: "a skipped subtest marks its top-level test (a shortened test runs again in full)",
			stream: stream(
				"m/a run TestProperty", "m/a run TestProperty/long", "m/a skip TestProperty/long", "m/a pass TestProperty",
				"m/a run TestOther", "m/a pass TestOther", "m/a pass",
			),
			want: []group{{Run: "^(TestProperty)$", Pkgs: []string{"m/a"}}},
		},
		{
			reason: "a package that passed without starting a test (its TestMain skipped them) runs whole; one without tests does not run",
			stream: stream(
				"m/box output - SKIP: not with -short", "m/box pass",
				"m/none output - ok m/none 0.01s [no tests to run]", "m/none pass",
				"m/nofiles skip",
			),
			want: []group{{Run: ".", Pkgs: []string{"m/box"}}},
		},
		{
			reason: "a name that skipped in one package but passed in another is not run again there: separate commands",
			stream: stream(
				"m/a run TestShared", "m/a skip TestShared", "m/a pass",
				"m/b run TestShared", "m/b pass TestShared", "m/b run TestB", "m/b skip TestB", "m/b pass",
				"m/c run TestC", "m/c skip TestC", "m/c pass",
			),
			want: []group{
				{Run: "^(TestC|TestShared)$", Pkgs: []string{"m/a", "m/c"}},
				{Run: "^(TestB)$", Pkgs: []string{"m/b"}},
			},
		},
		{
			reason: "names are quoted in the regexp",
			stream: stream("m/a run Test_x.y", "m/a skip Test_x.y", "m/a pass"),
			want:   []group{{Run: `^(Test_x\.y)$`, Pkgs: []string{"m/a"}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			got, err := mustRead(t, tc.stream).rerunGroups(nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: groups (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestRerunGroupsLeavesOutWhatTheCommandSkips: a test the command's -skip names anyway is not planned, and a package
// left with nothing else (test/olm, whose one test runs in its own stage) is not built to skip it.
func TestRerunGroupsLeavesOutWhatTheCommandSkips(t *testing.T) {
	rep := mustRead(t, stream(
		"m/a run TestIntegration", "m/a skip TestIntegration", "m/a run TestOwnStage", "m/a skip TestOwnStage", "m/a pass",
		"m/olm run TestOLM", "m/olm skip TestOLM", "m/olm pass",
	))
	except, err := skipOf([]string{"go", "test", "-json", "-skip", "^(TestOLM|TestOwnStage)$"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := rep.rerunGroups(except)
	if err != nil {
		t.Fatal(err)
	}
	want := []group{{Run: "^(TestIntegration)$", Pkgs: []string{"m/a"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	for _, cmd := range [][]string{{"go", "test"}, {"go", "test", "-skip", "TestX/sub"}} {
		if re, err := skipOf(cmd); re != nil || err != nil {
			t.Errorf("skipOf(%q) = %v, %v; want nothing (no -skip, or one with a subtest level)", cmd, re, err)
		}
	}
	if re, err := skipOf([]string{"go", "test", "-skip=^TestY$"}); err != nil || re == nil || !re.MatchString("TestY") {
		t.Errorf("skipOf(-skip=^TestY$) = %v, %v", re, err)
	}
}

func TestRerunGroupsRefusesAReportOfAFailedOrUnfinishedRun(t *testing.T) {
	cases := []struct{ reason, stream, want string }{
		{"a failed test", stream("m/a run TestX", "m/a fail TestX", "m/a run TestY", "m/a skip TestY", "m/a fail"), "m/a failed TestX"},
		{"a failed subtest of a package that passed", stream("m/a run TestX/sub", "m/a fail TestX/sub", "m/a pass"), "m/a failed TestX"},
		{"a package that did not finish", stream("m/a run TestX", "m/a skip TestX"), "m/a did not finish"},
		{"an empty report", "", "no package"},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			groups, err := mustRead(t, tc.stream).rerunGroups(nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s: got %v, %v; want an error naming %q", tc.reason, groups, err, tc.want)
			}
		})
	}
}

func TestVerdictsOfNamedTests(t *testing.T) {
	rep := mustRead(t, stream(
		"m/a run TestPass", "m/a pass TestPass",
		"m/a run TestFail", "m/a run TestFail/sub", "m/a fail TestFail/sub", "m/a fail TestFail",
		"m/a run TestSkip", "m/a skip TestSkip",
		"m/a run TestSubSkip", "m/a run TestSubSkip/long", "m/a skip TestSubSkip/long", "m/a pass TestSubSkip",
		"m/a fail",
	))
	got := rep.verdicts("m/a", regexp.MustCompile(`^Test(Pass|Fail|Skip|SubSkip)$`))
	// A test that passed with a skipped subtest (a -short run's shorter form) passed: the judge runs it the same way.
	want := []string{"FAIL TestFail", "PASS TestPass", "SKIP TestSkip", "PASS TestSubSkip"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	if got := rep.verdicts("m/other", regexp.MustCompile(`.`)); got != nil {
		t.Errorf("a package not in the report has verdicts %v", got)
	}
}

func TestConsoleShowsTheWholeOutputOfAFailedTestOnly(t *testing.T) {
	in := stream(
		"m/a run TestOK", "m/a output TestOK quiet-line", "m/a pass TestOK",
		"m/a run TestBad", "m/a output TestBad first-line", "m/a run TestBad/sub", "m/a output TestBad/sub subtest-line",
		"m/a fail TestBad/sub", "m/a fail TestBad", "m/a output - FAIL", "m/a fail",
		"m/b run TestOK", "m/b output TestOK other-package-line", "m/b pass TestOK", "m/b pass",
	)
	var file, console bytes.Buffer
	s := &summary{}
	if err := s.consume(strings.NewReader(in), &file, &console); err != nil {
		t.Fatal(err)
	}
	if file.String() != in {
		t.Errorf("the stream written is not the stream read")
	}
	out := console.String()
	for _, want := range []string{"first-line", "subtest-line", "FAIL m/a", "ok   m/b"} {
		if !strings.Contains(out, want) {
			t.Errorf("console lacks %q:\n%s", want, out)
		}
	}
	for _, unwanted := range []string{"quiet-line", "other-package-line"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("console shows %q of a passed test:\n%s", unwanted, out)
		}
	}
	if !s.failed || s.packages != 2 || s.passed != 2 {
		t.Errorf("summary failed=%v packages=%d passed=%d; want true 2 2", s.failed, s.packages, s.passed)
	}
}
