package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestExecuteExitCodes: 0 for success and help, 2 for usage errors (flags and arguments), 130 for an interruption,
// 1 for anything else, each with one line on stderr.
func TestExecuteExitCodes(t *testing.T) {
	newRoot := func(err error) *cobra.Command {
		root := &cobra.Command{Use: "x"}
		root.AddCommand(&cobra.Command{Use: "do", Args: NoArgs, RunE: func(*cobra.Command, []string) error { return err }})
		return root
	}
	for _, tc := range []struct {
		args []string
		err  error
		code int
		line string
	}{
		{args: []string{"do"}, code: ExitOK},
		{args: []string{"do", "--help"}, code: ExitOK},
		{args: []string{"do", "extra"}, code: ExitUsage, line: "x: unexpected arguments [extra] (see: x do --help)"},
		{args: []string{"do", "--nope"}, code: ExitUsage, line: "x: unknown flag: --nope (see: x do --help)"},
		{args: []string{"do"}, err: Usagef("bad %s", "value"), code: ExitUsage, line: "x: bad value (see: x do --help)"},
		{args: []string{"do"}, err: ErrInterrupted, code: ExitInterrupted, line: "x do: interrupted"},
		{args: []string{"do"}, err: errors.New("boom"), code: ExitFailed, line: "x do: boom"},
	} {
		var stdout, stderr bytes.Buffer
		code := Execute(context.Background(), newRoot(tc.err), "x", tc.args, &stdout, &stderr)
		if code != tc.code || strings.TrimSuffix(stderr.String(), "\n") != tc.line {
			t.Errorf("%v with %v: exit %d, stderr %q; want %d, %q", tc.args, tc.err, code, stderr.String(), tc.code, tc.line)
		}
	}
}

// TestDeprecationWarningsGoToStderr: a deprecated flag's warning is a diagnostic: it never lands in a report on
// stdout (cobra prints pflag's messages to the output writer otherwise).
func TestDeprecationWarningsGoToStderr(t *testing.T) {
	root := &cobra.Command{Use: "x"}
	var old string
	do := &cobra.Command{Use: "do", Args: NoArgs, RunE: func(c *cobra.Command, _ []string) error {
		c.Print("report")
		return nil
	}}
	do.Flags().StringVar(&old, "old", "", "the old name")
	if err := do.Flags().MarkDeprecated("old", "use --new"); err != nil {
		t.Fatal(err)
	}
	root.AddCommand(do)
	var stdout, stderr bytes.Buffer
	if code := Execute(context.Background(), root, "x", []string{"do", "--old=v"}, &stdout, &stderr); code != ExitOK || old != "v" {
		t.Fatalf("exit %d, --old %q; want 0 and v", code, old)
	}
	if stdout.String() != "report" || !strings.Contains(stderr.String(), "--old has been deprecated, use --new") {
		t.Errorf("stdout %q, stderr %q; want only the report on stdout and the warning on stderr", stdout.String(), stderr.String())
	}
}

// TestCheckOutput: text, json and yaml, nothing else.
func TestCheckOutput(t *testing.T) {
	for _, ok := range Outputs {
		if err := CheckOutput(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	if err := CheckOutput("xml"); !errors.As(err, new(UsageError)) {
		t.Errorf("xml: %v, want a usage error", err)
	}
}
