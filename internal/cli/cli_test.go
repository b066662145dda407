package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestAddGoFlags: Go flags become kubectl-style flags: "shorthand for --X" aliases become X's shorthand, deprecated
// flags keep working but are hidden, everything else is taken as it is.
func TestAddGoFlags(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	ns := fs.String("namespace", "", "the namespace")
	fs.StringVar(ns, "n", "", "shorthand for --namespace")
	old := fs.String("old-name", "", "deprecated: use --namespace")
	verbose := fs.Bool("verbose", false, "talk")
	var labels repeated
	fs.Var(&labels, "label", "a label (repeatable)")
	cmd := &cobra.Command{Use: "t", Run: func(*cobra.Command, []string) {}}
	AddGoFlags(cmd.Flags(), fs)
	if err := cmd.ParseFlags([]string{"-n", "kcp", "--old-name=x", "--verbose", "--label", "a", "--label=b"}); err != nil {
		t.Fatal(err)
	}
	if *ns != "kcp" || *old != "x" || !*verbose || strings.Join(labels, ",") != "a,b" {
		t.Errorf("namespace %q, old-name %q, verbose %t, labels %v; want kcp, x, true, [a b]", *ns, *old, *verbose, labels)
	}
	var help bytes.Buffer
	cmd.SetOut(&help)
	_ = cmd.Help()
	if !strings.Contains(help.String(), "-n, --namespace string") || strings.Contains(help.String(), "old-name") ||
		strings.Contains(help.String(), "shorthand for") {
		t.Errorf("help:\n%s\nwant -n, --namespace and neither the deprecated flag nor the alias", help.String())
	}
	// A Go flag.Value of our own shows Go's word for its argument, not the name of our Go type.
	if !strings.Contains(help.String(), "--label value") || strings.Contains(help.String(), "repeated") {
		t.Errorf("help:\n%s\nwant --label value, not the Go type name", help.String())
	}
}

// repeated is a Go flag.Value that collects a repeated flag.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

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
