package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRerunListsTheLongestFirstAndRunsItsCommandsTogether reruns what skipped in a report with a durations file: the
// packages of a command are listed by their last times, longest first (go test starts them in that order), the two
// commands run at the same time, and the file then holds this run's times.
func TestRerunListsTheLongestFirstAndRunsItsCommandsTogether(t *testing.T) {
	dir := t.TempDir()
	times := filepath.Join(dir, "cache", "durations.json")
	if err := (durations{"m/a-short": 1, "m/b-long": 300}).save(times, nil); err != nil {
		t.Fatal(err)
	}
	// A seed that says otherwise is not used for packages the file has a time for.
	seed := filepath.Join(dir, "seed.json")
	if err := (durations{"m/a-short": 900, "m/b-long": 1}).save(seed, nil); err != nil {
		t.Fatal(err)
	}
	commands, saved := rerunWithDurations(t, dir, "-durations", times, "-durations-seed", seed)
	if !strings.Contains(commands, "-run ^(TestI|TestJ)$ m/b-long m/a-short") || !strings.Contains(commands, "-run . m/c-whole") {
		t.Errorf("commands %q; want the longest package first, and the whole package in a command of its own", commands)
	}
	if diff := cmp.Diff(durations{"m/a-short": 2.5, "m/b-long": 2.5, "m/c-whole": 2.5}, saved); diff != "" {
		t.Errorf("durations after the run (-want +got):\n%s", diff)
	}
}

// TestAFreshMachineOrdersByTheSeed: without a durations file (a fresh machine) the seed's times order the packages,
// and only this run's times are saved, not the seed's.
func TestAFreshMachineOrdersByTheSeed(t *testing.T) {
	dir := t.TempDir()
	seed := filepath.Join(dir, "seed.json")
	if err := (durations{"m/a-short": 1, "m/b-long": 300, "m/gone": 50}).save(seed, nil); err != nil {
		t.Fatal(err)
	}
	times := filepath.Join(dir, "cache", "durations.json")
	commands, saved := rerunWithDurations(t, dir, "-durations", times, "-durations-seed", seed)
	if !strings.Contains(commands, "-run ^(TestI|TestJ)$ m/b-long m/a-short") {
		t.Errorf("commands %q; want the package the seed names longest first", commands)
	}
	if diff := cmp.Diff(durations{"m/a-short": 2.5, "m/b-long": 2.5, "m/c-whole": 2.5}, saved); diff != "" {
		t.Errorf("durations after the run (-want +got):\n%s", diff)
	}
	// Without the seed, a fresh machine keeps go list's order.
	dir = t.TempDir()
	if commands, _ := rerunWithDurations(t, dir, "-durations", filepath.Join(dir, "durations.json")); !strings.Contains(commands, "m/a-short m/b-long") {
		t.Errorf("commands %q without a seed; want the report's order", commands)
	}
}

// rerunWithDurations reruns what skipped in a report of three packages (a-short and b-long skipped a test each,
// c-whole was skipped whole) with a fake go test that passes each package in 2.5 s, and returns the commands it was
// called with and the durations file (the flag after -durations) afterwards. The fake waits until both commands have
// started, so run one after the other they fail.
func rerunWithDurations(t *testing.T, dir string, flags ...string) (string, durations) {
	t.Helper()
	report := filepath.Join(dir, "short.json")
	if err := os.WriteFile(report, []byte(stream(
		"m/a-short run TestI", "m/a-short skip TestI", "m/a-short pass",
		"m/b-long run TestJ", "m/b-long skip TestJ", "m/b-long pass",
		"m/c-whole pass",
	)), 0o600); err != nil {
		t.Fatal(err)
	}
	script := `echo "$*" >> "$DIR/commands"; touch "$DIR/started.$$"
for i in $(seq 100); do [ "$(ls "$DIR" | grep -c '^started\.')" -ge 2 ] && break; sleep 0.1; done
[ "$(ls "$DIR" | grep -c '^started\.')" -ge 2 ] || { echo "the other command did not start" >&2; exit 1; }
shift 2; for p in "$@"; do echo "{\"Action\":\"pass\",\"Package\":\"$p\",\"Elapsed\":2.5}"; done`
	t.Setenv("DIR", dir)
	out := filepath.Join(dir, "all.json")
	args := append(append([]string{"-o", out, "-rerun-skipped", report}, flags...), "--", "sh", "-c", script, "sh")
	if err := runCmd(args); err != nil {
		t.Fatalf("run: %v", err)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("the stream of a passed run: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "commands"))
	if err != nil {
		t.Fatal(err)
	}
	var times string
	for i, f := range flags {
		if f == "-durations" {
			times = flags[i+1]
		}
	}
	saved, err := os.ReadFile(times)
	if err != nil {
		t.Fatal(err)
	}
	var got durations
	if err := json.Unmarshal(saved, &got); err != nil {
		t.Fatal(err)
	}
	return string(raw), got
}

func TestDurationsKeepTheOrderOfPackagesWithoutATime(t *testing.T) {
	pkgs := []string{"a", "b", "c", "d"}
	durations{"c": 10, "d": 20}.order(pkgs)
	if diff := cmp.Diff([]string{"d", "c", "a", "b"}, pkgs); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	d, err := loadDurations(filepath.Join(t.TempDir(), "missing.json"))
	if err != nil || len(d) != 0 {
		t.Errorf("a missing file: %v, %v; want no durations and no error", d, err)
	}
}

// TestTheSeedNamesPackagesOfTheModule: the committed seed (make test-all's -durations-seed) names only packages that
// exist, so a renamed or removed package does not leave a fresh machine's order to chance unnoticed.
func TestTheSeedNamesPackagesOfTheModule(t *testing.T) {
	seed, err := loadDurations(filepath.Join("..", "..", "..", "hack", "test-durations.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(seed) == 0 {
		t.Fatal("hack/test-durations.json holds no times")
	}
	cmd := exec.Command("go", "list", "./...")
	cmd.Dir = filepath.Join("..", "..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	pkgs := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		pkgs[p] = true
	}
	for p := range seed {
		if !pkgs[p] {
			t.Errorf("hack/test-durations.json names %s, not a package of the module: refresh it (Makefile, TEST_DURATIONS_SEED)", p)
		}
	}
}
