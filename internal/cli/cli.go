// Package cli holds what the repository's command-line programs share so that they behave alike, as kubectl does:
// help on stdout with exit 0, a wrong command line in one line on stderr with exit 2, a failed command with exit 1,
// an interrupted one with exit 130, and timestamped progress lines.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// Exit codes: 0 done (also help), 1 the command failed, 2 the command line was wrong (kubectl's and the flag
// package's convention), 130 interrupted by Ctrl-C (the shell's 128 + SIGINT).
const (
	ExitOK          = 0
	ExitFailed      = 1
	ExitUsage       = 2
	ExitInterrupted = 130
)

// UsageError is a command line the command cannot run with (an unknown flag, a missing argument, a bad value).
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef is a UsageError with a message.
func Usagef(format string, args ...any) error { return UsageError{fmt.Errorf(format, args...)} }

// ErrInterrupted is returned by a command that stopped early because the user pressed Ctrl-C (its context was
// cancelled); it has printed what it got done so far.
var ErrInterrupted = errors.New("interrupted")

// Execute runs root with args and returns the exit code. name is how the user called the program (for the
// one-line usage error). Flag errors and the Args checks of every command count as usage errors.
func Execute(ctx context.Context, root *cobra.Command, name string, args []string, stdout, stderr io.Writer) int {
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SilenceErrors, root.SilenceUsage = true, true
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return UsageError{err} })
	// pflag's own messages (a deprecated flag's warning) are diagnostics; cobra would print them to stdout, into
	// the report a script parses.
	flagsWarnTo(root, stderr)
	cmd, err := root.ExecuteContextC(ctx)
	switch {
	case err == nil, errors.Is(err, pflag.ErrHelp):
		return ExitOK
	case errors.Is(err, ErrInterrupted):
		fmt.Fprintf(stderr, "%s: %v\n", cmd.CommandPath(), err)
		return ExitInterrupted
	case errors.As(err, new(UsageError)), strings.HasPrefix(err.Error(), "unknown command"):
		fmt.Fprintf(stderr, "%s: %v (see: %s --help)\n", name, err, cmd.CommandPath())
		return ExitUsage
	default:
		fmt.Fprintf(stderr, "%s: %v\n", cmd.CommandPath(), err)
		return ExitFailed
	}
}

// flagsWarnTo sends the flag messages of c and every command below it to w.
func flagsWarnTo(c *cobra.Command, w io.Writer) {
	c.Flags().SetOutput(w)
	for _, sub := range c.Commands() {
		flagsWarnTo(sub, w)
	}
}

// NoArgs refuses positional arguments as a usage error.
func NoArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return Usagef("unexpected arguments %v", args)
	}
	return nil
}

// ExactArgs wants n positional arguments, naming them in the error (e.g. "a shoot name").
func ExactArgs(n int, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return Usagef("exactly %d %s required, got %d", n, what, len(args))
		}
		return nil
	}
}

// Printer writes timestamped progress lines; safe for concurrent use.
type Printer struct {
	mu  sync.Mutex
	out io.Writer
	now func() time.Time
}

// NewPrinter prints to w.
func NewPrinter(w io.Writer) *Printer { return &Printer{out: w, now: time.Now} }

// Say prints one line, prefixed with the time of day.
func (p *Printer) Say(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, "%s  %s\n", p.now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// Output formats of a command's report (-o).
var Outputs = []string{"text", "json", "yaml"}

// CheckOutput refuses an -o value that is not one of Outputs.
func CheckOutput(output string) error {
	if !slices.Contains(Outputs, output) {
		return Usagef("--output %q: want one of %s", output, strings.Join(Outputs, ", "))
	}
	return nil
}

// WriteReport writes a report as output asks: "json" or "yaml" (the report's JSON field names), else text.
func WriteReport(out io.Writer, output string, report any, text func(io.Writer) error) error {
	switch output {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(report)
	case "yaml":
		data, err := yaml.Marshal(report)
		if err != nil {
			return err
		}
		_, err = out.Write(data)
		return err
	}
	return text(out)
}
