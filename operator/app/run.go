package app

import (
	"context"
	"crypto/tls"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/gardener/guard"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/internal/health"
	"github.com/kyma-project/kim/internal/scheme"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers"
)

const leaderElectionID = "kim.infrastructuremanager.kyma-project.io"

// Leader election timing. A leader that cannot renew its lease gives up at the latest RetryPeriod + RenewDeadline
// after its last renewal; then, before it stops its controllers and exits, it tries to release the lease
// (LeaderElectionReleaseOnCancel) with a client that times out after RenewDeadline/2 (controller-runtime's lease
// client). A standby takes the lease no earlier than LeaseDuration after the last renewal it saw. So LeaseDuration
// must exceed RetryPeriod + RenewDeadline + RenewDeadline/2, or a leader cut off from the KCP reconciles alongside
// the standby that took over: controller-runtime's default of 15 s left -2 s (2 + 10 + 5 = 17 s; the two-replica
// chaos test, test/bench/chaos, saw a partitioned leader end 2 s after its lease expired). 20 s leaves 3 s, the
// margin the defaults have without the release; a crashed leader is replaced 5 s later than with them.
const (
	LeaseDuration = 20 * time.Second
	RenewDeadline = 10 * time.Second
	RetryPeriod   = 2 * time.Second
)

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

// Run starts the operator against the KCP cluster (kcp) and the Gardener API (garden) with the controllers opts
// names and blocks until ctx is done or the manager fails.
func Run(ctx context.Context, kcp, garden *rest.Config, opts Options, overrides ...Override) error {
	mgr, err := NewManager(ctx, kcp, garden, opts, overrides...)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// NewManager builds the manager without starting it: the caches, the garden cluster, every adapter and the
// controllers opts names (Options.Controllers; all by default). ctx bounds only the building: a Gardener
// that does not answer is retried while it lasts.
func NewManager(ctx context.Context, kcp, garden *rest.Config, opts Options, overrides ...Override) (manager.Manager, error) {
	if err := opts.ResolveConfig(); err != nil {
		return nil, err
	}
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("invalid options: %w", err)
	}
	selected, err := controllers.Select(opts.Controllers)
	if err != nil {
		return nil, fmt.Errorf("--controllers: %w", err)
	}
	if err := opts.checkPolicies(); err != nil {
		return nil, err
	}
	mgr, gardenCluster, err := newManager(ctx, kcp, garden, opts)
	if err != nil {
		return nil, err
	}
	var r replacements
	for _, o := range overrides {
		o(&r)
	}
	if err := addControllers(mgr, gardenCluster, opts, selected, r); err != nil {
		return nil, err
	}
	if err := addLegacyMetrics(mgr, opts); err != nil {
		return nil, err
	}
	return mgr, nil
}

// newManager builds the KCP manager (caches restricted to the watched namespaces and the operator's own Secrets and
// ConfigMaps) and the garden cluster (restricted to the project namespace), with health checks.
func newManager(ctx context.Context, kcp, garden *rest.Config, opts Options) (manager.Manager, cluster.Cluster, error) {
	scheme, err := scheme.New()
	if err != nil {
		return nil, nil, err
	}
	namespaces := map[string]cache.Config{}
	for _, ns := range opts.WatchNamespaces {
		namespaces[ns] = cache.Config{}
	}
	leaseNamespace := opts.LeaderElectionNamespace
	if leaseNamespace == "" {
		leaseNamespace = opts.WatchNamespaces[0]
	}
	managed := labels.SelectorFromSet(labels.Set{wire.LabelManagedBy: wire.ManagedByValue})
	mgr, err := manager.New(kcp, manager.Options{
		Scheme: scheme,
		Cache: cache.Options{
			DefaultNamespaces: namespaces,
			// Nothing reads managedFields but the registry cache's ownership check on Runtimes (their transform
			// keeps that one entry); at fleet size they are a good part of the cache.
			// Every cached object also shares its metadata's repeated strings (kube.Interned).
			DefaultTransform: kube.Interned(cache.TransformStripManagedFields()),
			// Secrets and ConfigMaps: only the operator's own (kubeconfigs, the deletion guard). Secrets are cached
			// without their data (kube.SecretCacheTransform): the kubeconfig is read live by whoever needs it.
			ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {Label: managed, Transform: kube.Interned(kube.SecretCacheTransform)},
				&corev1.ConfigMap{}: {Label: managed}, &imv1.Runtime{}: {Transform: kube.Interned(kube.RuntimeCacheTransform)}},
		},
		// The cache asks the mapper on every read whether a kind is namespaced: its answers are remembered.
		MapperProvider:          kube.MemoizedMapperProvider,
		Metrics:                 metricsOptions(opts),
		HealthProbeBindAddress:  opts.ProbeAddr,
		PprofBindAddress:        opts.PprofAddr,
		LeaderElection:          opts.LeaderElection,
		LeaderElectionID:        leaderElectionID,
		LeaderElectionNamespace: leaseNamespace,
		// Stepping down on shutdown lets the next replica take over at once instead of after the lease expires.
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 ptr.To(LeaseDuration),
		RenewDeadline:                 ptr.To(RenewDeadline),
		RetryPeriod:                   ptr.To(RetryPeriod),
		Controller:                    controllerDefaults(opts),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("create manager: %w", err)
	}
	gardenCfg, err := gardenConfig(garden, opts)
	if err != nil {
		return nil, nil, err
	}
	gardenCluster, err := newGardenCluster(ctx, gardenCfg, func(o *cluster.Options) {
		o.Scheme = scheme
		o.MapperProvider = kube.MemoizedMapperProvider
		o.Cache.DefaultNamespaces = map[string]cache.Config{opts.GardenNamespace(): {}}
		// Shoots without managedFields and without the status the operator never reads.
		o.Cache.DefaultTransform = kube.Interned(gardener.CacheTransform)
		// Only the operator's own ConfigMaps (structured authentication): the project also holds two CA ConfigMaps
		// per shoot, which the operator never reads.
		o.Cache.ByObject = map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {Label: managed}}
	})
	if err != nil {
		return nil, nil, fmt.Errorf("create garden cluster client: %w", err)
	}
	if err := mgr.Add(gardenCluster); err != nil {
		return nil, nil, fmt.Errorf("add garden cluster: %w", err)
	}
	// kim_gardener_health on every replica (standbys too), so an unhealthy Gardener is visible before a failover.
	if _, err := health.Add(mgr, gardenCfg, opts.GardenerHealthInterval); err != nil {
		return nil, nil, fmt.Errorf("gardener health check: %w", err)
	}
	if opts.ProbeAddr != "0" && opts.ProbeAddr != "" {
		if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
			return nil, nil, fmt.Errorf("add health check: %w", err)
		}
		if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
			return nil, nil, fmt.Errorf("add readiness check: %w", err)
		}
	}
	return mgr, gardenCluster, nil
}

// controllerDefaults are the options of every controller. An operator started again in the same process (tests,
// the sandbox) registers the same controller names. The classic rate-limited work queue instead of
// controller-runtime's priority queue: in v0.24 the priority queue can deadlock on shutdown (a ready item is handed
// to a worker that already left, with the queue's lock held: controller-runtime issue 3538, fixed in v0.25), so the
// manager outlived its 30 s grace period and exited 1 on SIGTERM in about one of four stops under load
// (TestMigrationPreviousHelmArgumentsIntegration). Back to the default once controller-runtime is v0.25 or later.
func controllerDefaults(opts Options) ctrlconfig.Controller {
	// EnableWarmup: a standby starts every controller's watches (its caches fill, its queues collect the events)
	// and only the reconciles wait for the lease, so a new leader starts working at once instead of first listing
	// the fleet: at 5,000 Runtimes the lists and the first decode took the better part of a minute.
	return ctrlconfig.Controller{SkipNameValidation: ptr.To(opts.SkipNameValidation), UsePriorityQueue: ptr.To(false),
		EnableWarmup: ptr.To(true)}
}

func metricsOptions(opts Options) metricsserver.Options {
	m := metricsserver.Options{BindAddress: opts.MetricsAddr}
	if opts.MetricsSecure {
		m.SecureServing = true
		// controller-runtime watches the files and serves its self-signed certificate when they are absent.
		m.CertDir, m.CertName, m.KeyName = opts.MetricsCertDir, opts.MetricsCertName, opts.MetricsKeyName
		m.FilterProvider = filters.WithAuthenticationAndAuthorization
		m.TLSOpts = []func(*tls.Config){func(c *tls.Config) {
			c.MinVersion = tls.VersionTLS12
			if !opts.EnableHTTP2 {
				c.NextProtos = []string{"http/1.1"}
			}
		}}
	}
	return m
}
