package app

import (
	"context"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/internal/scheme"
	"github.com/kyma-project/kim/operator/config"
)

// The self-service ports follow the configuration: a switched-off feature has no ports (its controller sets
// nothing up), the pool's namespace defaults to the operator's and must be watched, a cluster-scoped pool has none.
func TestRegistryCacheAndAuditLogPortsFollowTheConfiguration(t *testing.T) {
	mgr, garden := unreachableClusters(t)
	build := func(edit func(*config.OperatorConfig)) (Ports, error) {
		cfg := &config.OperatorConfig{}
		cfg.Default()
		edit(cfg)
		opts := DefaultOptions()
		opts.GardenerProject, opts.WatchNamespaces, opts.Config = "kyma", []string{"kcp-system"}, cfg
		rc, al, err := selfServicePorts(mgr, garden, opts, runtimeClients(mgr.GetClient(), mgr.GetAPIReader(), "kcp-system").Controller)
		return Ports{RegistryCache: rc, AuditLog: al}, err
	}

	p, err := build(func(*config.OperatorConfig) {})
	if err != nil {
		t.Fatal(err)
	}
	if p.RegistryCache == nil || p.RegistryCache.Resolver == nil || p.AuditLog != nil {
		t.Errorf("defaults: registry cache %+v, audit log %+v; want the registry cache with the DNS check and no pool",
			p.RegistryCache, p.AuditLog)
	}

	p, err = build(func(c *config.OperatorConfig) {
		c.RegistryCache.MaxConfigsPerRuntime, c.RegistryCache.MaxListBytesPerRuntime = 7, 70000
	})
	if err != nil {
		t.Fatal(err)
	}
	want := registrycache.Limits{MaxConfigs: 7, MaxListBytes: 70000}
	if src, ok := p.RegistryCache.Source.(*kube.RegistryCacheSource); !ok || src.Limits != want {
		t.Errorf("registry cache source %+v, want the configured limits %+v", p.RegistryCache.Source, want)
	}
	ports := p
	WithRuntimeClients(func(context.Context, string) (client.Client, error) { return nil, nil })(&ports)
	if src, ok := ports.RegistryCache.Source.(*kube.RegistryCacheSource); !ok || src.Limits != want || src.Clients == nil {
		t.Errorf("other runtime clients dropped the limits: %+v", ports.RegistryCache.Source)
	}

	p, err = build(func(c *config.OperatorConfig) {
		c.RegistryCache.Enabled = ptr.To(false)
		c.Shoot.AuditLog.Pool.Enabled = true
	})
	if err != nil {
		t.Fatal(err)
	}
	if p.RegistryCache != nil {
		t.Error("registryCache.enabled false still built the registry cache ports")
	}
	if p.AuditLog == nil || p.AuditLog.Namespace != "kcp-system" || p.AuditLog.TenantName("kcp-system", "a") != "kcp-system/a" {
		t.Errorf("pool without a namespace: %+v; want the operator's namespace", p.AuditLog)
	}

	p, err = build(func(c *config.OperatorConfig) {
		c.RegistryCache.CheckUpstreamDNS = ptr.To(false)
		c.Shoot.AuditLog.Pool = config.AuditLogPoolConfig{Enabled: true, Scope: config.PoolScopeCluster, Namespace: "ignored"}
	})
	if err != nil {
		t.Fatal(err)
	}
	if p.RegistryCache == nil || p.RegistryCache.Resolver != nil {
		t.Error("checkUpstreamDNS false still built a resolver")
	}
	if p.AuditLog == nil || p.AuditLog.Namespace != "" {
		t.Errorf("cluster-scoped pool: %+v; want no namespace", p.AuditLog)
	}

	_, err = build(func(c *config.OperatorConfig) {
		c.Shoot.AuditLog.Pool = config.AuditLogPoolConfig{Enabled: true, Namespace: "elsewhere"}
	})
	if err == nil || !strings.Contains(err.Error(), "shoot.auditLog.pool.namespace elsewhere") {
		t.Errorf("a pool in a namespace the operator does not watch: %v; want an error naming the key", err)
	}
}

// Every runtime-facing adapter reaches runtimes through the one kube.RuntimeClients of the composition root.
func TestRuntimeFacingAdaptersShareTheRuntimeClients(t *testing.T) {
	mgr, garden := unreachableClusters(t)
	opts := DefaultOptions()
	opts.GardenerProject, opts.WatchNamespaces = "kyma", []string{"kcp-system"}
	p, err := buildPorts(mgr, garden, opts)
	if err != nil {
		t.Fatal(err)
	}
	configurator, ok := p.Configurator.(*kube.RuntimeConfigurator)
	if !ok || configurator.Clients == nil {
		t.Fatalf("configurator %+v, want a kube.RuntimeConfigurator with runtime clients", p.Configurator)
	}
	identities, ok := p.Identities.(*kube.RuntimeIdentities)
	if !ok || identities.Clients != configurator.Clients {
		t.Errorf("identities %+v, want the configurator's runtime clients", p.Identities)
	}
}

// unreachableClusters are a KCP manager and a garden cluster of an address that does not resolve: building the
// ports asks neither.
func unreachableClusters(t *testing.T) (manager.Manager, cluster.Cluster) {
	t.Helper()
	scheme, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	unreachable := &rest.Config{Host: "https://kcp.invalid"} // nothing is asked while ports are built
	mgr, err := manager.New(unreachable, manager.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	garden, err := cluster.New(unreachable, func(o *cluster.Options) { o.Scheme = scheme })
	if err != nil {
		t.Fatal(err)
	}
	return mgr, garden
}
