package app

import (
	"context"
	"crypto/tls"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kyma-project/kim/adapters/gardener/guard"
	"github.com/kyma-project/kim/core/domain/wire"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/health"
)

const leaderElectionID = "kim.infrastructuremanager.kyma-project.io"

// Controller is one controller of the operator. The garden cluster is passed separately because it is another
// API server (Gardener), with its own cache restricted to the project namespace.
type Controller interface {
	// Name identifies the controller in logs and errors.
	Name() string
	// SetupWithManager registers the controller with the KCP manager and, where it watches Gardener, the garden cluster.
	SetupWithManager(mgr manager.Manager, garden cluster.Cluster, opts Options) error
}

// gardenConfig is the configuration of every client of the garden. They share one token bucket, so the
// configured QPS and burst bound all Gardener requests of the process together (the kubeconfig issuer needs a
// client of its own). Every request passes the client-side allow list (wrapping twice is harmless), so a bug
// cannot reach beyond the project's shoots, and unverified TLS is refused.
func gardenConfig(garden *rest.Config, opts Options) (*rest.Config, error) {
	cfg := rest.CopyConfig(garden)
	cfg.QPS, cfg.Burst = opts.GardenerQPS, opts.GardenerBurst
	cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(opts.GardenerQPS, opts.GardenerBurst)
	cfg, err := guard.Secure(cfg, guard.ProjectPolicy(opts.GardenNamespace()))
	if err != nil {
		return nil, fmt.Errorf("gardener client: %w", err)
	}
	return cfg, nil
}

// NewScheme returns the scheme with every type the operator reads or writes in KCP and in the garden.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, imv1.AddToScheme, gardencorev1beta1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("build scheme: %w", err)
		}
	}
	return s, nil
}

// Run starts the operator against the KCP cluster (kcp) and the Gardener API (garden) with the given controllers and
// blocks until ctx is done or the manager fails.
func Run(ctx context.Context, kcp, garden *rest.Config, opts Options, controllers ...Controller) error {
	mgr, err := NewManager(kcp, garden, opts, controllers...)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// NewManager builds the manager without starting it, for callers that need to add runnables first.
func NewManager(kcp, garden *rest.Config, opts Options, controllers ...Controller) (manager.Manager, error) {
	if err := opts.ResolveConfig(); err != nil {
		return nil, err
	}
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("invalid options: %w", err)
	}
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	namespaces := map[string]cache.Config{}
	for _, ns := range opts.WatchNamespaces {
		namespaces[ns] = cache.Config{}
	}
	leaseNamespace := opts.LeaderElectionNamespace
	if leaseNamespace == "" {
		leaseNamespace = opts.WatchNamespaces[0]
	}
	managedSecrets, err := managedSecretSelector()
	if err != nil {
		return nil, err
	}
	mgr, err := manager.New(kcp, manager.Options{
		Scheme: scheme,
		Cache: cache.Options{
			DefaultNamespaces: namespaces,
			// Secrets and ConfigMaps: only the operator's own (kubeconfigs, the deletion guard).
			ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {Label: managedSecrets},
				&corev1.ConfigMap{}: {Label: managedSecrets}},
		},
		Metrics:                 metricsOptions(opts),
		HealthProbeBindAddress:  opts.ProbeAddr,
		LeaderElection:          opts.LeaderElection,
		LeaderElectionID:        leaderElectionID,
		LeaderElectionNamespace: leaseNamespace,
		// Stepping down on shutdown lets the next replica take over at once instead of after the lease expires.
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	gardenCfg, err := gardenConfig(garden, opts)
	if err != nil {
		return nil, err
	}
	gardenCluster, err := cluster.New(gardenCfg, func(o *cluster.Options) {
		o.Scheme = scheme
		o.Cache.DefaultNamespaces = map[string]cache.Config{opts.GardenNamespace(): {}}
		// Only the operator's own ConfigMaps (structured authentication): the project also holds two CA ConfigMaps
		// per shoot, which the operator never reads.
		o.Cache.ByObject = map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {
			Label: labels.SelectorFromSet(labels.Set{wire.LabelManagedBy: wire.ManagedByValue})}}
	})
	if err != nil {
		return nil, fmt.Errorf("create garden cluster client: %w", err)
	}
	if err := mgr.Add(gardenCluster); err != nil {
		return nil, fmt.Errorf("add garden cluster: %w", err)
	}
	// kim_gardener_health on every replica (standbys too), so an unhealthy Gardener is visible before a failover.
	if _, err := health.Add(mgr, gardenCfg, 0); err != nil {
		return nil, fmt.Errorf("gardener health check: %w", err)
	}
	for _, c := range controllers {
		if err := c.SetupWithManager(mgr, gardenCluster, opts); err != nil {
			return nil, fmt.Errorf("set up controller %s: %w", c.Name(), err)
		}
	}
	if opts.ProbeAddr != "0" && opts.ProbeAddr != "" {
		if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
			return nil, fmt.Errorf("add health check: %w", err)
		}
		if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
			return nil, fmt.Errorf("add readiness check: %w", err)
		}
	}
	return mgr, nil
}

func metricsOptions(opts Options) metricsserver.Options {
	m := metricsserver.Options{BindAddress: opts.MetricsAddr}
	if opts.MetricsSecure {
		m.SecureServing = true
		m.FilterProvider = filters.WithAuthenticationAndAuthorization
		m.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.MinVersion = tls.VersionTLS12 }}
	}
	return m
}
