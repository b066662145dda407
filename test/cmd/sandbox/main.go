// Command sandbox runs the whole system on one machine for `make demo`, the docs and manual exploration:
// garden-in-a-box (real kube-apiserver/etcd for KCP and garden, the real gardener-apiserver, a simulated
// gardenlet) plus the operator in-process, with the samples of config/samples applied. It lives under test/
// because it carries the test environment; the kim CLI that SREs run does not.
package main

import (
	"context"
	"flag"
	"os"

	"github.com/spf13/cobra"

	"github.com/kyma-project/kim/internal/cli"
)

func main() {
	os.Exit(cli.Execute(context.Background(), newCommand(), "sandbox", os.Args[1:], os.Stdout, os.Stderr))
}

// newCommand is the sandbox command line: the sandbox's own flags and every operator flag, kubectl style.
func newCommand() *cobra.Command {
	fs := flag.NewFlagSet("sandbox", flag.ContinueOnError)
	f := bindSandboxFlags(fs)
	cmd := &cobra.Command{
		Use:   "sandbox [flags]",
		Short: "Run garden-in-a-box with the operator",
		Long: "Runs garden-in-a-box (KCP and garden API servers, the real gardener-apiserver, a simulated gardenlet) and the\n" +
			"operator until Ctrl-C, and applies the samples of config/samples (see docs/sandbox.md).",
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(); err != nil {
				return err
			}
			return runSandbox(cmd.Context(), *f)
		},
	}
	cmd.Flags().AddGoFlagSet(fs)
	return cmd
}

// parseSandboxFlags parses args as the command does (for tests).
func parseSandboxFlags(args []string) (sandboxFlags, error) {
	fs := flag.NewFlagSet("sandbox", flag.ContinueOnError)
	f := bindSandboxFlags(fs)
	cmd := &cobra.Command{Use: "sandbox"}
	cmd.Flags().AddGoFlagSet(fs)
	if err := cmd.ParseFlags(args); err != nil {
		return *f, cli.UsageError{Err: err}
	}
	if err := f.validate(); err != nil {
		return *f, err
	}
	return *f, nil
}
