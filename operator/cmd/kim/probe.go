package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/internal/cli"
	"github.com/kyma-project/kim/internal/scheme"
	"github.com/kyma-project/kim/operator/probe"
)

// newProbeCommand is `kim probe`: one end-to-end probe of the landscape (docs/operations/on-call.md#the-end-to-end-probe).
func newProbeCommand(stdout, stderr io.Writer) *cobra.Command {
	fs := pflag.NewFlagSet("probe", pflag.ContinueOnError)
	kcpFlags := bindKCPFlags(fs)
	p := &probe.CLI{}
	p.Bind(fs)
	return command("probe [flags]", "Provision, reach and delete a small runtime as KEB does; exit non-zero on failure",
		"Provisions a small runtime the way KEB does, waits until it is Ready, proves access with the issued kubeconfig,\n"+
			"deletes it and reports the outcome and the phases' durations as metrics. Exits non-zero when the probe fails.\n"+
			"Progress lines go to stderr, the result to stdout; Ctrl-C stops, prints how far it got and exits 130 without\n"+
			"exporting metrics.",
		"  kim probe --context kcp --runtime config/probe/runtime.yaml\n"+
			"  # as a CronJob would run it: metrics for node-exporter's textfile collector, the result as JSON\n"+
			"  kim probe --runtime /etc/kim-probe/runtime.yaml --metrics-file /tmp/probe.prom -o json",
		cli.NoArgs, fs,
		func(cmd *cobra.Command, _ []string) error {
			p.Progress = cli.NewPrinter(stderr).Say
			return probeWith(cmd.Context(), kcpFlags, p, stdout)
		})
}

// runProbe runs `kim probe` with args (progress lines are discarded).
func runProbe(ctx context.Context, args []string, stdout io.Writer) error {
	return execute(ctx, newProbeCommand(stdout, io.Discard), args, stdout)
}

func probeWith(ctx context.Context, kcpFlags *kubeconfigFlags, p *probe.CLI, stdout io.Writer) error {
	namespace, err := kcpFlags.runtimeNamespace()
	if err != nil {
		return err
	}
	cfg, err := kcpFlags.restConfig()
	if err != nil {
		return err
	}
	scheme, err := scheme.New()
	if err != nil {
		return err
	}
	kcp, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("KCP client: %w", err)
	}
	return p.Execute(ctx, kcp, namespace, stdout)
}
