// Command manager is the operator with only the kubeconfig controller, as the kubeconfig load harness
// (operator/bench/kubeconfig) runs it in a child process so its memory can be measured on its own. It wires the
// operator exactly as operator/cmd/manager does (app.Run, same flags, KCP config from KUBECONFIG), minus the
// Runtime controller, and carries no test environment.
package main

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kyma-project/kim/operator/app"
	"github.com/kyma-project/kim/operator/controllers/gardenercluster"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench manager:", err)
		os.Exit(1)
	}
}

func run() error {
	opts := app.DefaultOptions()
	fs := flag.NewFlagSet("bench-manager", flag.ContinueOnError)
	opts.BindFlags(fs)
	gardenKubeconfig := fs.String("gardener-kubeconfig-path", "", "kubeconfig of the garden (required)")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		return err
	}
	if *gardenKubeconfig == "" {
		return fmt.Errorf("--gardener-kubeconfig-path is required")
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	// Like the production binary: KCP from KUBECONFIG (controller-runtime turns off client-side rate limiting).
	kcp, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("KCP kubeconfig: %w", err)
	}
	garden, err := clientcmd.BuildConfigFromFlags("", *gardenKubeconfig)
	if err != nil {
		return fmt.Errorf("gardener kubeconfig %s: %w", *gardenKubeconfig, err)
	}
	return app.Run(ctrl.SetupSignalHandler(), kcp, garden, opts, gardenercluster.Controller{})
}
