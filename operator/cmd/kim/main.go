// Command kim is the CLI of the Kyma Infrastructure Manager for the people who run it: `restore` is an on-call tool;
// `migrate` takes over a landscape of the previous infrastructure manager; `probe` is the end-to-end probe of a
// landscape. It carries no test environment (the sandbox is test/cmd/sandbox), and the production manager binary
// (operator/cmd/manager) carries none of this.
//
// Installed as kubectl-kim on the PATH (`make install-kubectl-plugin`), it is the kubectl plugin `kubectl kim`, and it
// loads kubeconfigs the way kubectl does ($KUBECONFIG with several files, ~/.kube/config, --kubeconfig, --context).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/kyma-project/kim/internal/cli"
	"github.com/kyma-project/kim/operator/version"
)

// commandName is how the user called us: "kubectl kim" when kubectl runs the binary as the plugin kubectl-kim.
func commandName() string {
	if strings.HasPrefix(filepath.Base(os.Args[0]), "kubectl-") {
		return "kubectl kim"
	}
	return "kim"
}

func main() {
	// Ctrl-C cancels the command's context: a long command stops, prints what it got done and exits 130.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the command line args and returns the exit code; help goes to stdout, errors to stderr in one line.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Execute(ctx, newRootCommand(stdout, stderr), commandName(), args, stdout, stderr)
}

// newRootCommand is the CLI: cobra for the command tree, flags, help and shell completion. Each command binds its
// flags on a Go flag set (shared with the probe binary and kept testable), added to cobra kubectl style.
func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   commandName(),
		Short: "Kyma Infrastructure Manager CLI",
		Long: "The CLI of the Kyma Infrastructure Manager: the on-call tools (restore, probe) and the take-over of the\n" +
			"previous infrastructure manager's runtimes (migrate).",
		// No Args check: cobra then names an unknown subcommand as such.
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
	root.AddCommand(
		newRestoreCommand(stdout),
		newMigrateCommand(stdout, stderr),
		newProbeCommand(stdout, stderr),
		&cobra.Command{Use: "version", Short: "Print the version", Args: cli.NoArgs,
			Run: func(cmd *cobra.Command, _ []string) { fmt.Fprintln(cmd.OutOrStdout(), commandName(), version.Get()) }},
	)
	return root
}

// command is a subcommand whose flags are bound on the Go flag set fs.
func command(use, short, long string, args cobra.PositionalArgs, fs *flag.FlagSet, runE func(cmd *cobra.Command, args []string) error) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Long: long, Args: args, RunE: runE}
	cli.AddGoFlags(cmd.Flags(), fs)
	return cmd
}

// execute runs one subcommand on its own with args (tests call the commands this way).
func execute(ctx context.Context, cmd *cobra.Command, args []string, stdout io.Writer) error {
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	return cmd.ExecuteContext(ctx)
}
