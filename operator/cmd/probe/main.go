// Command probe is the end-to-end probe of the Kyma Infrastructure Manager as the CronJob of config/probe runs it
// (the same as `kim probe`, without the sandbox the kim CLI carries): it provisions a small runtime the way KEB
// does, proves access, deletes it, pushes the outcome as metrics and exits non-zero when the probe failed.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/internal/scheme"
	"github.com/kyma-project/kim/operator/probe"
)

func main() {
	fs := pflag.NewFlagSet("probe", pflag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "KCP kubeconfig file (default: in-cluster, else $KUBECONFIG)")
	namespace := fs.String("namespace", "kcp-system", "KCP namespace of the Runtimes")
	cli := &probe.CLI{}
	cli.Bind(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
	if err := run(*kubeconfig, *namespace, cli); err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, namespace string, cli *probe.CLI) error {
	cfg, err := ctrl.GetConfig()
	if kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	if err != nil {
		return fmt.Errorf("KCP kubeconfig: %w", err)
	}
	scheme, err := scheme.New()
	if err != nil {
		return err
	}
	kcp, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("KCP client: %w", err)
	}
	return cli.Execute(ctrl.SetupSignalHandler(), kcp, namespace, os.Stdout)
}
