package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// durations are the seconds each package's tests took when they last ran, kept between runs in a file outside the
// clone. go test starts the packages of one command in the order they are listed, two at a time on two cores, so
// the longest listed last (the end-to-end tests, several minutes) decides when the command ends; listed first, it
// runs beside the others. A fresh machine has no file: the seed (times of a typical run, committed) orders the
// packages it has no time for, or the longest would come last exactly where a run is slowest.
type durations map[string]float64

// withSeed is d, and for each package d has no time for, the seed's: what the packages are ordered by. Only d's and
// the run's own times are saved.
func (d durations) withSeed(seed durations) durations {
	merged := durations{}
	for pkg, secs := range seed {
		merged[pkg] = secs
	}
	for pkg, secs := range d {
		merged[pkg] = secs
	}
	return merged
}

// loadDurations reads the file; a missing file is no durations, an unreadable one an error.
func loadDurations(path string) (durations, error) {
	d := durations{}
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// order sorts packages by the time they took, longest first; packages without a time keep their order after them.
func (d durations) order(pkgs []string) {
	slices.SortStableFunc(pkgs, func(a, b string) int { return cmp.Compare(d[b], d[a]) })
}

// save merges the times of this run into the file (written whole, then renamed: a reader never sees half a file).
func (d durations) save(path string, now map[string]float64) error {
	for pkg, secs := range now {
		d[pkg] = secs
	}
	raw, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".part"
	if err := os.WriteFile(tmp, append(raw, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
