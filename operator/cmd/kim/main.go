// Command kim is the CLI of the Kyma Infrastructure Manager for the people who run it: `restore` is an on-call tool;
// `migrate` takes over a landscape of the previous infrastructure manager; `probe` is the end-to-end probe of a
// landscape. It carries no test environment (the sandbox is test/cmd/sandbox), and the production manager binary
// (operator/cmd/manager) carries none of this.
//
// Installed as kubectl-kim on the PATH (`make install-kubectl-plugin`), it is the kubectl plugin `kubectl kim`, and it
// loads kubeconfigs the way kubectl does ($KUBECONFIG with several files, ~/.kube/config, --kubeconfig, --context).
// Installed (or linked) as kubectl_complete-kim as well, it answers kubectl's shell completion for the plugin.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/kyma-project/kim/internal/cli"
	"github.com/kyma-project/kim/operator/version"
)

func main() {
	// Ctrl-C cancels the command's context: a long command stops, prints what it got done and exits 130.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[0], os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the command line args of the program called as argv0 and returns the exit code; help goes to stdout,
// errors to stderr in one line.
func run(ctx context.Context, argv0 string, args []string, stdout, stderr io.Writer) int {
	how := invokedAs(argv0)
	if how.completion {
		// kubectl runs kubectl_complete-kim with the words typed after `kubectl kim`; cobra's hidden
		// __complete command answers in the form kubectl expects (one candidate a line, then :<directive>).
		args = append([]string{cobra.ShellCompRequestCmd}, args...)
	}
	root := newRootCommand(how, stdout, stderr)
	return cli.Execute(ctx, root, root.DisplayName(), args, stdout, stderr)
}

// newRootCommand is the CLI: cobra for the command tree, flags, help and shell completion. Each command binds its
// flags on a pflag set of its own (the probe's are shared with the probe binary), kubectl style: shorthands such as
// -n and -o, deprecated names hidden with a warning, repeatable flags as string arrays. Under
// kubectl the root carries cobra's display name "kubectl kim", so every usage line, help text and error hint says
// so, while the command's name stays kim.
func newRootCommand(how invocation, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "kim",
		Short: "Kyma Infrastructure Manager CLI",
		Long: "The CLI of the Kyma Infrastructure Manager: the on-call tools (restore, probe) and the take-over of the\n" +
			"previous infrastructure manager's runtimes (migrate).",
		// No Args check: cobra then names an unknown subcommand as such.
		RunE: func(cmd *cobra.Command, _ []string) error {
			if v, _ := cmd.Flags().GetBool("version"); v {
				fmt.Fprintln(cmd.OutOrStdout(), cmd.Root().DisplayName(), version.Get())
				return nil
			}
			return cmd.Help()
		},
	}
	if how.plugin {
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: pluginDisplayName}
	}
	// Our own --version also keeps cobra from offering the one a linked Kubernetes package registers globally.
	root.Flags().Bool("version", false, "print the version")
	root.AddCommand(
		newRestoreCommand(stdout),
		newMigrateCommand(stdout, stderr),
		newProbeCommand(stdout, stderr),
		&cobra.Command{Use: "version", Short: "Print the version", Args: cli.NoArgs,
			Run: func(cmd *cobra.Command, _ []string) {
				fmt.Fprintln(cmd.OutOrStdout(), cmd.Root().DisplayName(), version.Get())
			}},
	)
	if how.plugin {
		root.CompletionOptions.DisableDefaultCmd = true
		root.AddCommand(newPluginCompletionCommand())
	}
	// cobra's completion commands keep the writer they find when they are made (in addExamples).
	root.SetOut(stdout)
	root.SetErr(stderr)
	addExamples(root)
	addFlagCompletions(root)
	return root
}
