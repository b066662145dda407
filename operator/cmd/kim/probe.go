package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/operator/controllers/setup"
	"github.com/kyma-project/kim/operator/probe"
)

// runProbe is `kim probe`: one end-to-end probe of the landscape (docs/operations/on-call.md#the-end-to-end-probe).
func runProbe(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("kim probe", flag.ContinueOnError)
	kcpFlags := bindKCPFlags(fs)
	cli := &probe.CLI{}
	cli.Bind(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: kim probe [flags]\n\nProvisions a small runtime the way KEB does, waits until it is Ready, proves access with the issued\n"+
			"kubeconfig, deletes it and reports the outcome and the phases' durations as metrics. Exits non-zero when the probe fails.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args, true); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected arguments %v", fs.Args())
	}
	namespace, err := kcpFlags.runtimeNamespace()
	if err != nil {
		return err
	}
	cfg, err := kcpFlags.restConfig()
	if err != nil {
		return err
	}
	scheme, err := setup.NewScheme()
	if err != nil {
		return err
	}
	kcp, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("KCP client: %w", err)
	}
	return cli.Execute(ctx, kcp, namespace, stdout)
}
