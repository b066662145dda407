// Package mutants tests the judge of the safety mutants (hack/safety-mutants.sh) on a repository made for the test:
// a kill counts only when the named test passed without the mutant and fails with it; everything else is reported and
// fails the run.
package mutants

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const sum = `package m

var offset int

// Sum adds.
func Sum(a, b int) int { return a + b + offset }

// Neg negates.
func Neg(a int) int { return -a }
`

const sumTest = `package m

import (
	"os"
	"testing"
)

func TestSum(t *testing.T) {
	if Sum(2, 3) != 5 {
		t.Fatal("Sum(2, 3) != 5")
	}
}

func TestNeg(t *testing.T) { CheckNeg(t) }

func TestAlwaysFails(t *testing.T) { t.Fatal("broken on the unmutated tree") }

// TestLimit reads a configuration file at run time, as the tests of the shipped RBAC and admission policies do.
func TestLimit(t *testing.T) {
	b, err := os.ReadFile("limit.txt")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "10\n" {
		t.Fatalf("limit.txt holds %q, want 10", b)
	}
}
`

// suite is a contract suite in a file that is not a test file: its failures name suite.go, not a _test.go file.
const suite = `package m

import "testing"

// CheckNeg is a contract.
func CheckNeg(t testing.TB) {
	if Neg(2) != -2 {
		t.Fatal("Neg(2) != -2")
	}
}
`

// mutant is one planted patch: the content it gives a file (m.go unless file names another) and the kill line it
// carries.
type mutant struct {
	name, kill, source string
	file               string
}

func TestJudgeCountsOnlyAKillOfTheNamedTest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test several times in a scratch module")
	}
	repo, git, write := scratchRepo(t, sumTest)
	mutants := []mutant{
		// Judged first (the patches run in name order): a kill whose message is in a suite, not a test file,
		// must neither end the judge nor go unreported.
		{"0-found-by-a-suite", "kill: . ^TestNeg$", strings.Replace(sum, "return -a", "return a", 1), ""},
		{"1-found", "kill: . ^TestSum$", strings.Replace(sum, "a + b", "a - b", 1), ""},
		{"2-no-build", "kill: . ^TestSum$", strings.Replace(sum, "a + b + offset", "a +", 1), ""},
		{"3-survivor", "kill: . ^TestSum$", strings.Replace(sum, "// Sum adds.", "// Sum adds two numbers.", 1), ""},
		{"4-unrelated-failure", "kill: . ^TestSum$", sum + "\nfunc init() { panic(\"unrelated\") }\n", ""},
		{"5-judge-broken-before", "kill: . ^TestAlwaysFails$", strings.Replace(sum, "a + b", "a - b", 1), ""},
		{"6-no-such-test", "kill: . ^TestMissing$", strings.Replace(sum, "a + b", "a - b", 1), ""},
		// A mutant of a file a test reads at run time (an RBAC or admission policy) is judged where that file is
		// changed (judged through go test -overlay in an unmutated tree, it would survive).
		{"7-configuration-file", "kill: . ^TestLimit$", "100\n", "limit.txt"},
		// A mutant may add a Go file (here one whose init breaks Sum's callers' expectations).
		{"8-new-go-file", "kill: . ^TestSum$", "package m\n\nfunc init() { offset = 1 }\n", "extra.go"},
	}
	out, err := runJudge(t, repo, git, write, mutants)
	t.Logf("judge output:\n%s", out)
	if err == nil {
		t.Fatal("the judge passed a run with unjudged and surviving mutants")
	}
	want := map[string]string{
		"0-found-by-a-suite":    `found +0-found-by-a-suite .*TestNeg: suite\.go:[0-9]+: Neg\(2\) != -2`,
		"1-found":               `found +1-found .*TestSum`,
		"2-no-build":            `NOT JUDGED +2-no-build .*does not compile`,
		"3-survivor":            `SURVIVED +3-survivor`,
		"4-unrelated-failure":   `NOT JUDGED +4-unrelated-failure .*failed, but not in a test named`,
		"5-judge-broken-before": `NOT JUDGED +5-judge-broken-before .*did not pass on the unmutated tree`,
		"6-no-such-test":        `NOT JUDGED +6-no-such-test .*did not pass on the unmutated tree`,
		"7-configuration-file":  `found +7-configuration-file .*TestLimit: m_test\.go:[0-9]+: limit\.txt holds "100\\n", want 10`,
		"8-new-go-file":         `found +8-new-go-file .*TestSum`,
	}
	for name, re := range want {
		if !regexp.MustCompile(`(?m)^` + re).Match(out) {
			t.Errorf("mutant %s: no line matching %q", name, re)
		}
	}
}

// scratchRepo is a git repository holding a module with Sum and Neg, the given test file and the suite.
func scratchRepo(t *testing.T, tests string) (repo string, git func(args ...string) string, write func(name, content string)) {
	t.Helper()
	repo = t.TempDir()
	git = func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", repo, "-c", "user.email=t@example.invalid", "-c", "user.name=t"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	write = func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.invalid/m\n\ngo 1.24\n")
	write("m.go", sum)
	write("m_test.go", tests)
	write("suite.go", suite)
	write("limit.txt", "10\n")
	git("init", "-q")
	git("add", ".")
	git("commit", "-qm", "base")
	return repo, git, write
}

// runJudge commits the mutants as patches and runs the judge on the repository (one sequence for property mutants).
func runJudge(t *testing.T, repo string, git func(args ...string) string, write func(name, content string), mutants []mutant, env ...string) ([]byte, error) {
	t.Helper()
	for _, m := range mutants {
		file := m.file
		if file == "" {
			file = "m.go"
		}
		_, err := os.Stat(filepath.Join(repo, file))
		added := os.IsNotExist(err)
		write(file, m.source)
		if added {
			git("add", "--intent-to-add", file)
		}
		write("hack/safety-mutants/"+m.name+".patch", m.kill+"\n"+git("diff", "--", file))
		if added {
			git("rm", "-q", "--cached", file)
			if err := os.Remove(filepath.Join(repo, file)); err != nil {
				t.Fatal(err)
			}
		} else {
			git("checkout", "-q", "--", file)
		}
	}
	git("add", ".")
	git("commit", "-qm", "mutants")

	judge, err := filepath.Abs("../../hack/safety-mutants.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(judge, "1")
	cmd.Dir = repo
	cmd.Env = append(append(os.Environ(), "MUTANTS_ROOT="+repo, "GOWORK=off", "GOFLAGS="), env...)
	return cmd.CombinedOutput()
}

// countedTests appends each test's name to the file $JUDGE_RUNS when it runs, so the test can count the runs.
const countedTests = `package m

import (
	"os"
	"testing"
)

func ran(t *testing.T) {
	f, err := os.OpenFile(os.Getenv("JUDGE_RUNS"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(t.Name() + "\n"); err != nil {
		t.Fatal(err)
	}
}

func TestSum(t *testing.T) {
	ran(t)
	if Sum(2, 3) != 5 {
		t.Fatal("Sum(2, 3) != 5")
	}
}

func TestSumAgain(t *testing.T) {
	ran(t)
	if Sum(1, 1) != 2 {
		t.Fatal("Sum(1, 1) != 2")
	}
}

func TestNeg(t *testing.T) {
	ran(t)
	CheckNeg(t)
}
`

// TestJudgeTakesIntegrationBaselinesFromTheReport gives the judge a go test -json report of the unmutated tree
// (MUTANT_BASELINE_JSON for integration judges, MUTANT_SHORT_JSON for unit judges): a judge the report of its kind
// holds as passed is not run for its baseline, one the report holds as failed makes its mutant NOT JUDGED (although
// it would pass here), and one the report lacks gets its own baseline run; the other kind's report is not read.
func TestJudgeTakesIntegrationBaselinesFromTheReport(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test several times in a scratch module")
	}
	for _, tc := range []struct{ kind, reportVar, otherVar string }{
		{"kill-integration", "MUTANT_BASELINE_JSON", "MUTANT_SHORT_JSON"},
		{"kill", "MUTANT_SHORT_JSON", "MUTANT_BASELINE_JSON"},
	} {
		t.Run(tc.kind, func(t *testing.T) { judgeWithReport(t, tc.kind, tc.reportVar, tc.otherVar) })
	}
}

// judgeWithReport runs the judge on three mutants of one kind with a report in reportVar; otherVar names a report
// (of the other kind of judge) in which the test the report of reportVar lacks passed, so it must run anyway.
func judgeWithReport(t *testing.T, kind, reportVar, otherVar string) {
	repo, git, write := scratchRepo(t, countedTests)
	write("hack/envtest.sh", "#!/bin/sh\necho /nonexistent-envtest-assets\n")
	if err := os.Chmod(filepath.Join(repo, "hack/envtest.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeReport := func(events ...string) string {
		report := filepath.Join(t.TempDir(), "report.json")
		if err := os.WriteFile(report, []byte(strings.Join(events, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return report
	}
	report := writeReport(
		`{"Action":"start","Package":"example.invalid/m"}`,
		`{"Action":"run","Package":"example.invalid/m","Test":"TestSum"}`,
		`{"Action":"run","Package":"example.invalid/m","Test":"TestSum/long-form"}`,
		`{"Action":"skip","Package":"example.invalid/m","Test":"TestSum/long-form"}`,
		`{"Action":"pass","Package":"example.invalid/m","Test":"TestSum"}`,
		`{"Action":"run","Package":"example.invalid/m","Test":"TestNeg"}`,
		`{"Action":"fail","Package":"example.invalid/m","Test":"TestNeg"}`,
		`{"Action":"fail","Package":"example.invalid/m"}`,
	)
	other := writeReport(
		`{"Action":"start","Package":"example.invalid/m"}`,
		`{"Action":"run","Package":"example.invalid/m","Test":"TestSumAgain"}`,
		`{"Action":"pass","Package":"example.invalid/m","Test":"TestSumAgain"}`,
		`{"Action":"pass","Package":"example.invalid/m"}`,
	)
	runs := filepath.Join(t.TempDir(), "runs")
	wrong := strings.Replace(sum, "a + b", "a - b", 1)
	mutants := []mutant{
		{"a-found-after-the-report", kind + ": . ^TestSum$", wrong, ""},
		{"b-failed-in-the-report", kind + ": . ^TestNeg$", strings.Replace(sum, "return -a", "return a", 1), ""},
		{"c-not-in-the-report", kind + ": . ^TestSumAgain$", wrong, ""},
	}
	out, err := runJudge(t, repo, git, write, mutants, reportVar+"="+report, otherVar+"="+other, "JUDGE_RUNS="+runs, "MUTANT_JOBS=1")
	t.Logf("judge output:\n%s", out)
	if err == nil {
		t.Fatal("the judge passed a run with a mutant it could not judge")
	}
	for name, re := range map[string]string{
		"a-found-after-the-report": `found +a-found-after-the-report .*TestSum: m_test\.go:[0-9]+: Sum\(2, 3\) != 5`,
		"b-failed-in-the-report":   `NOT JUDGED +b-failed-in-the-report .*did not pass on the unmutated tree: FAIL TestNeg`,
		"c-not-in-the-report":      `found +c-not-in-the-report .*TestSumAgain`,
		"report used": `safety-mutants: baselines of ` + kind + ` \. from the report: 2 \(FAIL TestNeg PASS TestSum\); ` +
			`run here \(not in the report\): 1 \(\^TestSumAgain\$\)`,
	} {
		if !regexp.MustCompile(`(?m)^` + re).Match(out) {
			t.Errorf("%s: no line matching %q", name, re)
		}
	}
	ranTests, err := os.ReadFile(runs)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, name := range strings.Fields(string(ranTests)) {
		count[name]++
	}
	// TestSum: the mutant's run only (its baseline is the report's); TestNeg: never (not judged);
	// TestSumAgain: its own baseline and the mutant's run.
	if count["TestSum"] != 1 || count["TestNeg"] != 0 || count["TestSumAgain"] != 2 {
		t.Errorf("runs of the named tests %v; want TestSum 1, TestNeg 0, TestSumAgain 2", count)
	}
}

// TestJudgeRunsTheKeptBinaryForAMutantOfADataFile gives the judge kept test binaries of the unmutated tree
// (MUTANT_TEST_BINARIES), built from a test file whose messages say so: a mutant of a file the test reads at run time
// is judged with the kept binary in the mutated tree (its verdict carries the kept binary's message), a mutant of Go
// source is built and run as without them.
func TestJudgeRunsTheKeptBinaryForAMutantOfADataFile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test several times in a scratch module")
	}
	repo, git, write := scratchRepo(t, sumTest)
	// The kept binary: the same package, its failure messages marked, built in a copy of the tree.
	kept := t.TempDir()
	for _, f := range []string{"go.mod", "m.go", "suite.go"} {
		raw, err := os.ReadFile(filepath.Join(repo, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(kept, f), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	marked := strings.NewReplacer(`t.Fatalf("limit.txt`, `t.Fatalf("kept binary: limit.txt`, `t.Fatal("Sum(2, 3)`, `t.Fatal("kept binary: Sum(2, 3)`).Replace(sumTest)
	if err := os.WriteFile(filepath.Join(kept, "m_test.go"), []byte(marked), 0o600); err != nil {
		t.Fatal(err)
	}
	binaries := t.TempDir()
	build := exec.Command("go", "test", "-c", "-o", filepath.Join(binaries, "1", "m.test"), ".")
	build.Dir = kept
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the kept binary: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(binaries, "index"), []byte("example.invalid/m\t1/m.test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wrong := strings.Replace(sum, "a + b", "a - b", 1)
	mutants := []mutant{
		{"a-data-file", "kill: . ^TestLimit$", "100\n", "limit.txt"},
		{"b-go-source", "kill: . ^TestSum$", wrong, ""},
	}
	out, err := runJudge(t, repo, git, write, mutants, "MUTANT_TEST_BINARIES="+binaries)
	t.Logf("judge output:\n%s", out)
	if err != nil {
		t.Fatalf("the judge failed a run whose mutants were all found: %v", err)
	}
	for name, re := range map[string]string{
		"a-data-file": `found +a-data-file .*\(kept test binary\): TestLimit: m_test\.go:[0-9]+: kept binary: limit\.txt holds "100\\n", want 10`,
		"b-go-source": `found +b-go-source +[0-9]+s: TestSum: m_test\.go:[0-9]+: Sum\(2, 3\) != 5`,
	} {
		if !regexp.MustCompile(`(?m)^` + re).Match(out) {
			t.Errorf("%s: no line matching %q", name, re)
		}
	}
}
