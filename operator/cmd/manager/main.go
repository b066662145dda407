// Command manager is the Kyma Infrastructure Manager operator as it runs in the control plane: it reconciles
// Runtimes and GardenerClusters in KCP against a Gardener project. It carries no test environment.
//
// Every flag can also be set through the environment (KIM_<FLAG>, e.g. KIM_CONFIG_MAP), which is how
// Subscription.spec.config.env configures an OLM install; docs/operations/flags.md lists them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kyma-project/kim/operator/app"
	"github.com/kyma-project/kim/operator/version"
	"github.com/kyma-project/kim/operator/version/metric"
)

func main() {
	s, err := parseFlags(os.Args[1:], os.LookupEnv, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case err != nil:
		// No logger yet: the flags that configure it are what failed.
		fmt.Fprintln(os.Stderr, "manager:", err)
		os.Exit(2)
	case s.showVersion:
		fmt.Println("manager", version.Get())
		return
	}
	log := newLogger(s, os.Stderr)
	ctrl.SetLogger(log)
	if err := run(ctrl.SetupSignalHandler(), s, log); err != nil {
		// The key controller-runtime uses for errors ("error"), at error level, so log queries find every failure.
		log.Error(err, "manager stopped")
		os.Exit(1)
	}
}

func run(ctx context.Context, s *settings, log logr.Logger) error {
	stamp := version.Get()
	log.Info("starting manager", stamp.KeysAndValues()...)
	limit, why := setMemoryLimit(os.LookupEnv, os.ReadFile)
	log.Info("memory limit", "goMemoryLimitBytes", limit, "reason", why)
	for _, w := range s.previous.warnings {
		log.Info("deprecated flag", "warning", w)
	}
	if err := ctrlmetrics.Registry.Register(metric.NewCollector(stamp)); err != nil {
		return fmt.Errorf("register %s: %w", metric.BuildInfo, err)
	}
	kcp, err := kcpConfig(s.previous.kcpKubeconfig)
	if err != nil {
		return fmt.Errorf("KCP kubeconfig: %w", err)
	}
	opts := s.opts
	overlays, err := s.overlays(os.ReadFile)
	if err != nil {
		return err
	}
	if s.configMap != "" {
		cfg, err := loadConfigMap(ctx, kcp, s.configMapNamespace, s.configMap, overlays...)
		if err != nil {
			return err
		}
		opts.Config = cfg
		log.Info("configuration loaded", "configMap", s.configMapNamespace+"/"+s.configMap, "previousConverterConfig", s.previous.converterFile)
	} else {
		cfg, source, err := s.fileConfig(os.ReadFile, overlays)
		if err != nil {
			return err
		}
		opts.Config = cfg
		log.Info("configuration loaded", "source", source)
	}
	// Load the configuration first: it names the Gardener project the client guard is scoped to.
	if err := opts.ResolveConfig(); err != nil {
		return err
	}
	// The Gardener client refuses unverified TLS and any request outside the project allow list (see
	// docs/operations/gardener-permissions.md).
	garden, err := app.LoadGardenKubeconfig(s.gardenKubeconfig, opts)
	if err != nil {
		return err
	}
	if s.legacyMetrics {
		opts.LegacyMetrics = app.LegacyMetricsLow
		if s.legacyMetricsFull {
			opts.LegacyMetrics = app.LegacyMetricsFull
		}
	}
	log.Info("reconciling", "namespaces", opts.WatchNamespaces, "gardenNamespace", opts.GardenNamespace())
	mgr, err := app.NewManager(ctx, kcp, garden, opts)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// kcpConfig is the KCP connection: the in-cluster service account, or $KUBECONFIG / ~/.kube/config, unless the
// previous infrastructure manager's --kubeconfig names a file.
// Both ways get the same client-side rate limit: none, leaving it to the API server's priority and fairness, as
// controller-runtime's loader sets it. client-go's own default for a file (5 requests a second, burst 10) would
// throttle a restart of a 5,000-Runtime fleet to minutes, where the previous manager (controller-runtime's loader
// for its --kubeconfig too) was not throttled.
func kcpConfig(path string) (*rest.Config, error) {
	if path == "" {
		return ctrl.GetConfig()
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("load KCP kubeconfig %s: %w", path, err)
	}
	if cfg.QPS == 0 {
		cfg.QPS = -1
	}
	return cfg, nil
}
