package main

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

const (
	// pluginDisplayName is how the user calls the CLI through kubectl.
	pluginDisplayName = "kubectl kim"
	// pluginBinary is the name kubectl finds the plugin by on the PATH.
	pluginBinary = "kubectl-kim"
	// completionBinary is the name kubectl looks up on the PATH to complete `kubectl kim ...` (kubectl's plugin
	// completion convention, kubectl 1.26 and later): it runs it with the words typed after the plugin's name.
	completionBinary = "kubectl_complete-kim"
)

// invocation is how the binary was called: as kim, as the kubectl plugin kubectl-kim, or as kubectl's completion
// helper kubectl_complete-kim (the same binary, linked under that name).
type invocation struct {
	// plugin: help, usage lines and error hints say "kubectl kim".
	plugin bool
	// completion: the arguments are the words to complete, not a command line.
	completion bool
}

// invokedAs tells the invocation from the program name (os.Args[0]), as kubectl and the shell pass it.
func invokedAs(argv0 string) invocation {
	name := strings.TrimSuffix(filepath.Base(argv0), ".exe")
	switch {
	case name == completionBinary:
		return invocation{plugin: true, completion: true}
	case strings.HasPrefix(name, "kubectl-"):
		return invocation{plugin: true}
	}
	return invocation{}
}

// errPluginCompletion answers `kubectl kim completion`: a script of cobra's for "kim" would be wrong under kubectl,
// and one for "kubectl kim" would replace kubectl's own completion.
var errPluginCompletion = errors.New("under kubectl, shell completion is kubectl's own: put " + completionBinary +
	" (a link to " + pluginBinary + ") on the PATH next to " + pluginBinary +
	" (make install-kubectl-plugin does) and `kubectl kim <TAB>` completes")

// newPluginCompletionCommand stands in for cobra's completion command under kubectl.
func newPluginCompletionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "completion",
		Short: "How shell completion works for the kubectl plugin",
		Long: "kubectl completes its plugins itself: it runs " + completionBinary + " from the PATH with the words\n" +
			"typed so far. Link the binary under that name next to " + pluginBinary + " and kubectl's own completion\n" +
			"(`source <(kubectl completion bash)`) completes `kubectl kim` too.",
		Example: "  # once, next to kubectl-kim (krew: in ~/.krew/bin)\n" +
			"  ln -s \"$(command -v " + pluginBinary + ")\" \"$(dirname \"$(command -v " + pluginBinary + ")\")/" + completionBinary + "\"\n" +
			"  source <(kubectl completion bash)\n" +
			"  kubectl kim re<TAB>",
		Args: cobra.ArbitraryArgs, // `kubectl kim completion bash` gets the answer, not a usage error
		RunE: func(*cobra.Command, []string) error { return errPluginCompletion },
	}
}

// command is a subcommand with the flags of fs; example is its help's Examples section.
func command(use, short, long, example string, args cobra.PositionalArgs, fs *pflag.FlagSet,
	runE func(cmd *cobra.Command, args []string) error) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Long: long, Example: example, Args: args, RunE: runE}
	cmd.Flags().AddFlagSet(fs)
	return cmd
}

// addExamples gives the commands cobra adds itself (help, completion and its shells) an Examples section, so that
// every command's help has one. The examples of our own commands name the CLI "kim"; under kubectl "kubectl kim".
func addExamples(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	walk(root, func(c *cobra.Command) {
		switch {
		case c == root:
			c.Example = "  kim restore --context kcp --garden-context garden c-1a2b3c\n" +
				"  kim migrate --context kcp --garden-context garden -o yaml\n" +
				"  kim probe --context kcp --runtime config/probe/runtime.yaml"
		case c.Name() == "help" && c.Parent() == root:
			c.Example = "  kim help migrate"
		case c.Name() == "version":
			c.Example = "  kim version"
		case c.Name() == "completion" && c.Example == "":
			c.Example = "  source <(kim completion bash)"
		case c.HasParent() && c.Parent().Name() == "completion" && c.Example == "":
			c.Example = completionExample(c.Name())
		}
		c.Example = strings.ReplaceAll(c.Example, "  kim ", "  "+root.DisplayName()+" ")
	})
}

// completionExample is how a shell loads the script of `kim completion <shell>`.
func completionExample(shell string) string {
	switch shell {
	case "zsh":
		return "  kim completion zsh > \"${fpath[1]}/_kim\""
	case "fish":
		return "  kim completion fish > ~/.config/fish/completions/kim.fish"
	case "powershell":
		return "  kim completion powershell | Out-String | Invoke-Expression"
	}
	return "  source <(kim completion bash)"
}

// walk calls f for c and every command below it.
func walk(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, sub := range c.Commands() {
		walk(sub, f)
	}
}

// execute runs one subcommand on its own with args (tests call the commands this way).
func execute(ctx context.Context, cmd *cobra.Command, args []string, stdout io.Writer) error {
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	return cmd.ExecuteContext(ctx)
}
