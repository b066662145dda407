// Command kim is the CLI of the Kyma Infrastructure Manager. Its `sandbox` subcommand runs the whole system on one
// machine: garden-in-a-box (real kube-apiserver/etcd for KCP and garden, the real gardener-apiserver, a simulated
// gardenlet) plus the operator in-process; `restore` is an on-call tool; `migrate` takes over a landscape of the
// previous infrastructure manager; `probe` is the end-to-end probe of a landscape. The production manager binary
// (operator/cmd/manager) does not carry any of this.
//
// Installed as kubectl-kim on the PATH (`make install-kubectl-plugin`), it is the kubectl plugin `kubectl kim`, and it
// loads kubeconfigs the way kubectl does ($KUBECONFIG with several files, ~/.kube/config, --kubeconfig, --context).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kyma-project/kim/operator/version"
)

// commandName is how the user called us: "kubectl kim" when kubectl runs the binary as the plugin kubectl-kim.
func commandName() string {
	if strings.HasPrefix(filepath.Base(os.Args[0]), "kubectl-") {
		return "kubectl kim"
	}
	return "kim"
}

// Exit codes: 0 done (also help), 1 the command failed, 2 the command line was wrong (kubectl's and the flag
// package's convention).
const (
	exitFailed = 1
	exitUsage  = 2
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args and returns the exit code; help goes to stdout, errors to stderr in one line.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCommand(stdout)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(usageError)), strings.HasPrefix(err.Error(), "unknown command"), strings.HasPrefix(err.Error(), "unknown flag"):
		fmt.Fprintf(stderr, "%s: %v (see: %s --help)\n", commandName(), err, cmd.CommandPath())
		return exitUsage
	default:
		fmt.Fprintf(stderr, "%s: %v\n", cmd.Name(), err)
		return exitFailed
	}
}

// usageError is a command line the command cannot run with (an unknown flag, a missing argument).
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// usageErrorf is a usageError with a message.
func usageErrorf(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// helpOutput is where a command's help goes (stdout; tests replace it).
var helpOutput io.Writer = os.Stdout

// parseArgs parses a command's flags: -h or --help prints the command's usage to helpOutput and returns
// flag.ErrHelp; a parse error is a usageError and prints nothing (run prints it in one line). interspersed lets
// positional arguments stand between flags, as kubectl does.
func parseArgs(fs *flag.FlagSet, args []string, interspersed bool) error {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(helpOutput)
			fs.Usage()
			return flag.ErrHelp
		}
	}
	fs.SetOutput(io.Discard)
	parse := fs.Parse
	if interspersed {
		parse = func(args []string) error { return parseInterspersed(fs, args) }
	}
	if err := parse(args); err != nil {
		return usageError{err}
	}
	return nil
}

// newRootCommand is the CLI: cobra for the command tree, help and shell completion; each command parses its own
// flags (Go flag sets shared with the manager's flags), so cobra passes their arguments through untouched.
func newRootCommand(stdout io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   commandName(),
		Short: "Kyma Infrastructure Manager CLI",
		Long: "The CLI of the Kyma Infrastructure Manager: garden-in-a-box with the operator (sandbox), the on-call tools\n" +
			"(restore, probe) and the take-over of the previous infrastructure manager's runtimes (migrate).",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if v, _ := cmd.Flags().GetBool("version"); v {
				fmt.Fprintln(cmd.OutOrStdout(), commandName(), version.Get())
				return nil
			}
			return cmd.Help()
		},
	}
	// Our own --version also keeps cobra from offering the one a linked Kubernetes package registers globally.
	root.Flags().Bool("version", false, "print the version")
	passThrough := func(use, short string, runE func(ctx context.Context, args []string) error) *cobra.Command {
		return &cobra.Command{Use: use, Short: short, DisableFlagParsing: true,
			RunE: func(cmd *cobra.Command, args []string) error { return runE(cmd.Context(), args) }}
	}
	root.AddCommand(
		passThrough("sandbox [flags]", "Run garden-in-a-box with the operator", func(_ context.Context, args []string) error { return runSandbox(args) }),
		passThrough("restore SHOOT [flags]", "Bring back the Runtime of a shoot waiting for deletion", runRestore),
		passThrough("migrate [flags]", "Take over the runtimes of the previous infrastructure manager (dry run by default)",
			func(ctx context.Context, args []string) error { return runMigrate(ctx, args, stdout) }),
		passThrough("probe [flags]", "Provision, reach and delete a small runtime as KEB does; exit non-zero on failure",
			func(ctx context.Context, args []string) error { return runProbe(ctx, args, stdout) }),
		&cobra.Command{Use: "version", Short: "Print the version", Args: cobra.NoArgs,
			Run: func(cmd *cobra.Command, _ []string) { fmt.Fprintln(cmd.OutOrStdout(), commandName(), version.Get()) }},
	)
	return root
}
