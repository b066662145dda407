package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRerunListsTheLongestFirstAndRunsItsCommandsTogether reruns what skipped in a report with a durations file: the
// packages of a command are listed by their last times, longest first (go test starts them in that order), the two
// commands run at the same time (each waits until the other has started, so run one after the other they fail), and
// the file then holds this run's times.
func TestRerunListsTheLongestFirstAndRunsItsCommandsTogether(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(dir, "short.json")
	if err := os.WriteFile(report, []byte(stream(
		"m/a-short run TestI", "m/a-short skip TestI", "m/a-short pass",
		"m/b-long run TestJ", "m/b-long skip TestJ", "m/b-long pass",
		"m/c-whole pass",
	)), 0o600); err != nil {
		t.Fatal(err)
	}
	times := filepath.Join(dir, "cache", "durations.json")
	if err := (durations{"m/a-short": 1, "m/b-long": 300}).save(times, nil); err != nil {
		t.Fatal(err)
	}
	// The fake go test: records its packages, waits for the other command, then passes each package in 2.5 s.
	script := `echo "$*" >> "$DIR/commands"; touch "$DIR/started.$$"
for i in $(seq 100); do [ "$(ls "$DIR" | grep -c '^started\.')" -ge 2 ] && break; sleep 0.1; done
[ "$(ls "$DIR" | grep -c '^started\.')" -ge 2 ] || { echo "the other command did not start" >&2; exit 1; }
shift 2; for p in "$@"; do echo "{\"Action\":\"pass\",\"Package\":\"$p\",\"Elapsed\":2.5}"; done`
	t.Setenv("DIR", dir)
	out := filepath.Join(dir, "all.json")
	if err := runCmd([]string{"-o", out, "-rerun-skipped", report, "-durations", times, "--", "sh", "-c", script, "sh"}); err != nil {
		t.Fatalf("run: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "commands"))
	if err != nil {
		t.Fatal(err)
	}
	commands := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if !strings.Contains(string(raw), "-run ^(TestI|TestJ)$ m/b-long m/a-short") || !strings.Contains(string(raw), "-run . m/c-whole") {
		t.Errorf("commands %q; want the longest package first, and the whole package in a command of its own", commands)
	}
	saved, err := os.ReadFile(times)
	if err != nil {
		t.Fatal(err)
	}
	var got durations
	if err := json.Unmarshal(saved, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(durations{"m/a-short": 2.5, "m/b-long": 2.5, "m/c-whole": 2.5}, got); diff != "" {
		t.Errorf("durations after the run (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("the stream of a passed run: %v", err)
	}
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
