// Command manager is the Kyma Infrastructure Manager operator as it runs in the control plane: it reconciles
// Runtimes and GardenerClusters in KCP against a Gardener project. It carries no test environment.
package main

import (
	"flag"
	"fmt"
	"os"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kyma-project/kim/adapters/gardener/guard"
	"github.com/kyma-project/kim/operator/app"
	"github.com/kyma-project/kim/operator/controllers"
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
	// Production logging by default: JSON lines with ISO 8601 timestamps, info level; --zap-* flags fine-tune it.
	zapOpts := zap.Options{TimeEncoder: zapcore.ISO8601TimeEncoder}
	zapOpts.BindFlags(fs)
	logFormat := fs.String("log-format", "json", "log format: json (one object per line) or console (human-readable)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return err
	}
	if opts.ConfigFile == "" {
		return fmt.Errorf("--config is required: the operator configuration file (see docs/configuration.md)")
	}
	// Load the configuration first: it names the Gardener project the client guard is scoped to.
	if err := opts.ResolveConfig(); err != nil {
		return err
	}
	if *logFormat != "json" && *logFormat != "console" {
		return fmt.Errorf("--log-format: %q is neither json nor console", *logFormat)
	}
	// The format only picks the encoder; verbosity stays with --zap-log-level (development mode would also turn on
	// debug logs and stack traces on warnings).
	timeFormat := func(ec *zapcore.EncoderConfig) { ec.EncodeTime = zapOpts.TimeEncoder }
	encoder := zap.JSONEncoder(timeFormat)
	if *logFormat == "console" {
		encoder = zap.ConsoleEncoder(timeFormat)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts), encoder))

	kcp, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("KCP kubeconfig: %w", err)
	}
	// The Gardener client refuses unverified TLS and any request outside the project allow list (see
	// docs/operations/gardener-permissions.md).
	garden, err := guard.LoadKubeconfig(*gardenKubeconfig, guard.ProjectPolicy(opts.GardenNamespace()))
	if err != nil {
		return err
	}
	return app.Run(ctrl.SetupSignalHandler(), kcp, garden, opts, controllers.All()...)
}
