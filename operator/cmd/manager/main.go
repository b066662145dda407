// Command manager is the Kyma Infrastructure Manager operator as it runs in the control plane: it reconciles
// Runtimes and GardenerClusters in KCP against a Gardener project. It carries no test environment.
package main

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kyma-project/kim/operator/app"
	_ "github.com/kyma-project/kim/operator/controllers/gardenercluster" // registers the kubeconfig controller
	_ "github.com/kyma-project/kim/operator/controllers/runtime"         // registers the Runtime controller
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		os.Exit(1)
	}
}

func run() error {
	opts := app.DefaultOptions()
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	opts.BindFlags(fs)
	gardenKubeconfig := fs.String("gardener-kubeconfig-path", "/gardener/kubeconfig/kubeconfig",
		"kubeconfig of the Gardener project's service account")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(fs)
	logFormat := fs.String("log-format", "json", "log format: json or console")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return err
	}
	if *logFormat != "json" && *logFormat != "console" {
		return fmt.Errorf("--log-format: %q is neither json nor console", *logFormat)
	}
	zapOpts.Development = *logFormat == "console"
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	kcp, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("KCP kubeconfig: %w", err)
	}
	garden, err := clientcmd.BuildConfigFromFlags("", *gardenKubeconfig)
	if err != nil {
		return fmt.Errorf("gardener kubeconfig %s: %w", *gardenKubeconfig, err)
	}
	return app.Run(ctrl.SetupSignalHandler(), kcp, garden, opts, app.Controllers()...)
}
