package app

import (
	"context"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/internal/scheme"
	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/operator/controllers/auditlogpool"
	"github.com/kyma-project/kim/operator/controllers/registrycachesync"
)

// The self-service Deps follow the configuration: a switched-off feature has none (its controller sets nothing up),
// the pool's namespace defaults to the operator's and must be watched, a cluster-scoped pool has none.
func TestRegistryCacheAndAuditLogDepsFollowTheConfiguration(t *testing.T) {
	mgr, garden := unreachableClusters(t)
	type selfService struct {
		rc *registrycachesync.Deps
		al *auditlogpool.Deps
	}
	build := func(edit func(*config.OperatorConfig), overrides ...Override) (selfService, error) {
		opts := testOptions(t, edit)
		var r replacements
		for _, o := range overrides {
			o(&r)
		}
		clients := kube.RuntimeClientFactory(runtimeClients(mgr.GetClient(), mgr.GetAPIReader(), "kcp-system").Controller)
		if r.runtimeClients != nil {
			clients = r.runtimeClients
		}
		rc := registryCacheDeps(mgr, garden, opts, clock.RealClock{}, clients)
		al, err := auditLogPoolDeps(mgr, garden, opts, clock.RealClock{}, &gardener.Shoots{}, clients)
		return selfService{rc: rc, al: al}, err
	}
	poolNamespace := func(d *auditlogpool.Deps) string {
		pool, ok := d.Pool.(*kube.AuditLogPool)
		if !ok {
			t.Fatalf("pool %T, want a *kube.AuditLogPool", d.Pool)
		}
		return pool.Namespace
	}

	p, err := build(func(*config.OperatorConfig) {})
	if err != nil {
		t.Fatal(err)
	}
	if p.rc == nil || p.rc.Resolver == nil || p.al != nil {
		t.Errorf("defaults: registry cache %+v, audit log %+v; want the registry cache with the DNS check and no pool", p.rc, p.al)
	}

	limits := func(c *config.OperatorConfig) {
		c.RegistryCache.MaxConfigsPerRuntime, c.RegistryCache.MaxListBytesPerRuntime = 7, 70000
	}
	p, err = build(limits)
	if err != nil {
		t.Fatal(err)
	}
	want := registrycache.Limits{MaxConfigs: 7, MaxListBytes: 70000}
	if src, ok := p.rc.Source.(*kube.RegistryCacheSource); !ok || src.Limits != want {
		t.Errorf("registry cache source %+v, want the configured limits %+v", p.rc.Source, want)
	}
	p, err = build(limits, WithRuntimeClients(func(context.Context, string) (client.Client, error) { return nil, nil }))
	if err != nil {
		t.Fatal(err)
	}
	if src, ok := p.rc.Source.(*kube.RegistryCacheSource); !ok || src.Limits != want || src.Clients == nil {
		t.Errorf("other runtime clients dropped the limits: %+v", p.rc.Source)
	}

	p, err = build(func(c *config.OperatorConfig) {
		c.RegistryCache.Enabled = ptr.To(false)
		c.Shoot.AuditLog.Pool.Enabled = true
	})
	if err != nil {
		t.Fatal(err)
	}
	if p.rc != nil {
		t.Error("registryCache.enabled false still built the registry cache Deps")
	}
	if p.al == nil || poolNamespace(p.al) != "kcp-system" || p.al.TenantName("kcp-system", "a") != "kcp-system/a" {
		t.Errorf("pool without a namespace: %+v; want the operator's namespace", p.al)
	}

	p, err = build(func(c *config.OperatorConfig) {
		c.RegistryCache.CheckUpstreamDNS = ptr.To(false)
		c.Shoot.AuditLog.Pool = config.AuditLogPoolConfig{Enabled: true, Scope: config.PoolScopeCluster, Namespace: "ignored"}
	})
	if err != nil {
		t.Fatal(err)
	}
	if p.rc == nil || p.rc.Resolver != nil {
		t.Error("checkUpstreamDNS false still built a resolver")
	}
	if p.al == nil || poolNamespace(p.al) != "" {
		t.Errorf("cluster-scoped pool: %+v; want no namespace", p.al)
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
	opts := testOptions(t, func(*config.OperatorConfig) {})
	runtimes := runtimeClients(mgr.GetClient(), mgr.GetAPIReader(), "kcp-system")
	rt, _, err := runtimeDeps(mgr, garden, opts, clock.RealClock{}, &gardener.Shoots{}, runtimes)
	if err != nil {
		t.Fatal(err)
	}
	sak, err := serviceAccountKubeconfigDeps(mgr, opts, clock.RealClock{}, runtimes)
	if err != nil {
		t.Fatal(err)
	}
	configurator, ok := rt.Configurator.(*kube.RuntimeConfigurator)
	if !ok || configurator.Clients != runtimes {
		t.Fatalf("configurator %+v, want a kube.RuntimeConfigurator with the composition root's runtime clients", rt.Configurator)
	}
	identities, ok := sak.Identities.(*kube.RuntimeIdentities)
	if !ok || identities.Clients != runtimes {
		t.Errorf("identities %+v, want the composition root's runtime clients", sak.Identities)
	}
}

// testOptions are resolved options of the project kyma watching kcp-system, with the configuration edit changed.
func testOptions(t *testing.T, edit func(*config.OperatorConfig)) Options {
	t.Helper()
	cfg := &config.OperatorConfig{}
	cfg.Default()
	edit(cfg)
	opts := DefaultOptions()
	opts.GardenerProject, opts.WatchNamespaces, opts.Config = "kyma", []string{"kcp-system"}, cfg
	if err := opts.ResolveConfig(); err != nil {
		t.Fatal(err)
	}
	return opts
}

// unreachableClusters are a KCP manager and a garden cluster of an address that does not resolve: building the
// Deps asks neither.
func unreachableClusters(t *testing.T) (manager.Manager, cluster.Cluster) {
	t.Helper()
	scheme, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	unreachable := &rest.Config{Host: "https://kcp.invalid"} // nothing is asked while the Deps are built
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
