package integration_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
	"github.com/kyma-project/kim/internal/scheme"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/testenv"
)

var clusterAuditLogGVK = schema.GroupVersionKind{Group: "cluster.auditlogmanager.test", Version: "v1beta1", Kind: "AuditLog"}

// startSelfServiceEnv starts a KCP (test/testenv) and installs the test CRDs of the APIs the operator uses but
// does not own (AuditLog, Kyma, RegistryCacheConfig). The same server plays KCP, garden and runtime.
func startSelfServiceEnv(t *testing.T) (*rest.Config, client.Client, *runtime.Scheme) {
	t.Helper()
	k := testenv.StartKCP(t)
	if _, err := envtest.InstallCRDs(k.Config, envtest.CRDInstallOptions{Paths: []string{filepath.Join("..", "testdata", "crds", "kcp"),
		filepath.Join("..", "testdata", "crds", "runtime")}, ErrorIfPathMissing: true}); err != nil {
		t.Fatalf("install the test CRDs: %v", err)
	}
	scheme, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	return k.Config, k.Client, scheme
}

func newNamespace(t *testing.T, c client.Client, prefix string) string {
	t.Helper()
	return testenv.Namespace(t, c, prefix)
}

// createTenant creates an AuditLog as the audit log manager does: the spec, then status.state SiemApproved on the
// status subresource. local (the name without a test's prefix) names its subaccount and Secrets.
func createTenant(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, namespace, name, local string) error {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"platformRegion": "cf-eu10", "regions": []any{"eu-central-1", "eu-west-1"}, "subaccountID": "sub-" + local,
		"config": map[string]any{"serviceURL": "https://auditlog.example/" + local, "gardenerSecretName": local + "-write",
			"readCredsSecretName": local + "-read"}}}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(namespace)
	u.SetName(name)
	if err := c.Create(ctx, u); err != nil {
		return err
	}
	return setTenantState(ctx, c, gvk, namespace, name, auditlog.StateSiemApproved)
}

// setTenantState writes status.state as the audit log manager does (the operator never writes status).
func setTenantState(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, namespace, name string, s auditlog.State) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(namespace)
	u.SetName(name)
	patch := client.RawPatch(types.MergePatchType, []byte(`{"status":{"state":"`+string(s)+`"}}`))
	return c.Status().Patch(ctx, u, patch)
}

// startCache starts an informer cache of the AuditLogs (the operator reads the pool through its manager's cache).
func startCache(t *testing.T, cfg *rest.Config, scheme *runtime.Scheme, gvk schema.GroupVersionKind) cache.Cache {
	t.Helper()
	c, err := cache.New(cfg, cache.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = c.Start(ctx) }()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if _, err := c.GetInformer(ctx, u); err != nil {
		t.Fatal(err)
	}
	c.WaitForCacheSync(ctx)
	return c
}

// TestAuditLogAdaptersIntegration runs the pool contract (namespaced and cluster-scoped pools), the concurrent
// claim of 50 runtimes from a pool of 40 and the runtime Secret writer against a real kube-apiserver.
func TestAuditLogAdaptersIntegration(t *testing.T) {
	cfg, c, scheme := startSelfServiceEnv(t)
	t.Run("PoolContractNamespaced", func(t *testing.T) {
		contract.RunAuditLogPoolContract(t, func(t *testing.T) contract.AuditLogPoolFixture {
			ns := newNamespace(t, c, "pool")
			return contract.AuditLogPoolFixture{Pool: &kube.AuditLogPool{Live: c, Writer: c, Namespace: ns},
				Add: func(ctx context.Context, name string) (string, error) {
					return kube.TenantName(ns, name), createTenant(ctx, c, kube.AuditLogGVK, ns, name, name)
				},
				SetState: func(ctx context.Context, name string, st auditlog.State) error {
					return setTenantState(ctx, c, kube.AuditLogGVK, ns, strings.TrimPrefix(name, ns+"/"), st)
				}}
		})
	})
	t.Run("PoolContractClusterScoped", func(t *testing.T) {
		n := 0
		contract.RunAuditLogPoolContract(t, func(t *testing.T) contract.AuditLogPoolFixture {
			n++
			prefix := fmt.Sprintf("p%d-", n) // a cluster-scoped pool is shared: each subtest lists only its own
			return contract.AuditLogPoolFixture{Pool: &prefixedPool{AuditLogPool: &kube.AuditLogPool{Live: c, Writer: c, GVK: clusterAuditLogGVK,
				CredentialsNamespace: "kcp-system"}, prefix: prefix},
				Add: func(ctx context.Context, name string) (string, error) {
					return name, createTenant(ctx, c, clusterAuditLogGVK, "", prefix+name, name)
				},
				SetState: func(ctx context.Context, name string, st auditlog.State) error {
					return setTenantState(ctx, c, clusterAuditLogGVK, "", prefix+name, st)
				}}
		})
	})
	t.Run("AuditLogPoolClaim50From40", func(t *testing.T) {
		ns := newNamespace(t, c, "claim")
		for i := range 40 {
			if err := createTenant(context.Background(), c, kube.AuditLogGVK, ns, fmt.Sprintf("tenant-%02d", i), fmt.Sprintf("tenant-%02d", i)); err != nil {
				t.Fatal(err)
			}
		}
		informers := startCache(t, cfg, scheme, kube.AuditLogGVK)
		pool := &countingPool{AuditLogPool: &kube.AuditLogPool{Cache: informers, Live: c, Writer: c, Namespace: ns}}
		claimer := &usecase.AuditLogClaimer{Pool: pool}
		start := time.Now()
		results, rounds := claimConcurrently(t, claimer, 50)
		t.Logf("50 runtimes, pool of 40: settled in %s, %d claim passes, %d writes of which %d lost a race (409)",
			time.Since(start).Round(time.Millisecond), rounds, pool.writes.Load(), pool.conflicts.Load())
		if pool.conflicts.Load() == 0 {
			t.Log("no write lost a race this time: the optimistic locking was not exercised by this run")
		}
		checkPool(t, pool, results, 40, 10)
	})
	t.Run("AuditLogRuntimesContract", func(t *testing.T) {
		contract.RunAuditLogRuntimesContract(t, func(t *testing.T) contract.AuditLogRuntimesFixture {
			first, second := newNamespace(t, c, "runtimes"), newNamespace(t, c, "runtimes")
			return contract.AuditLogRuntimesFixture{Runtimes: &kube.AuditLogRuntimes{Live: c, Namespaces: []string{first, second}},
				Put: func(ctx context.Context, id string, o ports.AuditLogOwner) error {
					return putRuntime(ctx, t, c, first, id, o)
				},
				PutElsewhere: func(ctx context.Context, id string, o ports.AuditLogOwner) error {
					return putRuntime(ctx, t, c, second, id, o)
				},
				Delete: func(ctx context.Context, id string) error {
					for _, ns := range []string{first, second} {
						rt := &imv1.Runtime{}
						rt.Namespace, rt.Name = ns, id
						if err := c.Delete(ctx, rt); client.IgnoreNotFound(err) != nil {
							return err
						}
					}
					return nil
				}}
		})
	})
	t.Run("AuditLogCredentialsContract", func(t *testing.T) {
		contract.RunAuditLogCredentialsContract(t, func(t *testing.T) contract.AuditLogCredentialsFixture {
			ns, other := newNamespace(t, c, "creds"), newNamespace(t, c, "creds")
			return contract.AuditLogCredentialsFixture{Credentials: &kube.KCPSecrets{Live: c}, Namespace: ns, OtherNamespace: other,
				Put: func(ctx context.Context, ref auditlog.SecretRef, labels map[string]string, data map[string][]byte) error {
					s := &corev1.Secret{}
					s.Namespace, s.Name = ref.Namespace, ref.Name
					_, err := controllerutil.CreateOrUpdate(ctx, c, s, func() error {
						s.Labels, s.Data = labels, data
						return nil
					})
					return err
				}}
		})
	})
	t.Run("RuntimeSecretWriterContract", func(t *testing.T) {
		contract.RunRuntimeSecretWriterContract(t, func(t *testing.T) contract.RuntimeSecretsFixture {
			kcpNS := newNamespace(t, c, "kcp")
			writeKubeconfigSecret(t, c, cfg, kcpNS, "rt-1")
			w := &kube.RuntimeSecrets{Clients: secretClients(c, kcpNS)}
			return contract.RuntimeSecretsFixture{Writer: w, RuntimeID: "rt-1",
				Read: func(ctx context.Context, ns, name string) (map[string][]byte, bool) {
					s := &corev1.Secret{}
					if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
						return nil, false
					}
					return s.Data, true
				}}
		})
	})
}

// countingPool counts the pool's writes and the ones refused as conflicts.
type countingPool struct {
	*kube.AuditLogPool
	writes, conflicts atomic.Int32
}

func (p *countingPool) count(err error) {
	p.writes.Add(1)
	if errors.Is(err, ports.ErrConflict) {
		p.conflicts.Add(1)
	}
}

func (p *countingPool) Reserve(ctx context.Context, t auditlog.Tenant, id string, at time.Time) (auditlog.Tenant, error) {
	r, err := p.AuditLogPool.Reserve(ctx, t, id, at)
	p.count(err)
	return r, err
}

func (p *countingPool) Claim(ctx context.Context, t auditlog.Tenant, id string, at time.Time) (auditlog.Tenant, error) {
	r, err := p.AuditLogPool.Claim(ctx, t, id, at)
	p.count(err)
	return r, err
}

// prefixedPool shows a subtest only the tenants of its prefix and names them without it.
type prefixedPool struct {
	*kube.AuditLogPool
	prefix string
}

func (p *prefixedPool) List(ctx context.Context, mode ports.ReadMode) ([]auditlog.Tenant, error) {
	all, err := p.AuditLogPool.List(ctx, mode)
	var out []auditlog.Tenant
	for _, t := range all {
		if len(t.Name) > len(p.prefix) && t.Name[:len(p.prefix)] == p.prefix {
			t.Name = t.Name[len(p.prefix):]
			out = append(out, t)
		}
	}
	return out, err
}

func (p *prefixedPool) in(t auditlog.Tenant) auditlog.Tenant { t.Name = p.prefix + t.Name; return t }
func (p *prefixedPool) out(t auditlog.Tenant) auditlog.Tenant {
	t.Name = t.Name[len(p.prefix):]
	return t
}
func (p *prefixedPool) Unreserve(ctx context.Context, t auditlog.Tenant) error {
	return p.AuditLogPool.Unreserve(ctx, p.in(t))
}
func (p *prefixedPool) Release(ctx context.Context, t auditlog.Tenant) error {
	return p.AuditLogPool.Release(ctx, p.in(t))
}
func (p *prefixedPool) Reserve(ctx context.Context, t auditlog.Tenant, id string, at time.Time) (auditlog.Tenant, error) {
	r, err := p.AuditLogPool.Reserve(ctx, p.in(t), id, at)
	if err != nil {
		return r, err
	}
	return p.out(r), nil
}
func (p *prefixedPool) Claim(ctx context.Context, t auditlog.Tenant, id string, at time.Time) (auditlog.Tenant, error) {
	r, err := p.AuditLogPool.Claim(ctx, p.in(t), id, at)
	if err != nil {
		return r, err
	}
	return p.out(r), nil
}

// claimConcurrently lets n runtimes claim at once, each repeating its pass while it lost races (what the
// controller's requeue does), and returns their outcomes and the number of passes.
func claimConcurrently(t *testing.T, c *usecase.AuditLogClaimer, n int) (map[string]usecase.AuditLogClaim, int) {
	t.Helper()
	var mu sync.Mutex
	out, passes := map[string]usecase.AuditLogClaim{}, 0
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("runtime-%02d", i)
			req := auditlog.Request{RuntimeID: id, Region: "eu-central-1", Enabled: true}
			for attempt := 0; attempt < 50; attempt++ {
				res, err := c.Claim(context.Background(), req, time.Now())
				mu.Lock()
				passes++
				mu.Unlock()
				if err != nil {
					t.Errorf("%s: %v", id, err)
					return
				}
				if res.Wait != nil && res.Wait.Reason == lifecycle.ReasonClaimingAuditLog {
					continue
				}
				mu.Lock()
				out[id] = res
				mu.Unlock()
				return
			}
			t.Errorf("%s: no outcome after 50 passes", id)
		}()
	}
	wg.Wait()
	return out, passes
}

// checkPool asserts the outcome as the runtimes saw it and as the API server stores it: distinct tenants, every
// waiting runtime with the stable reason, no reservation left, nobody holding two tenants.
func checkPool(t *testing.T, pool ports.AuditLogPool, results map[string]usecase.AuditLogClaim, wantClaimed, wantWaiting int) {
	t.Helper()
	claimed, waiting := map[string]string{}, 0
	for id, r := range results {
		switch {
		case r.Tenant != nil:
			if other, dup := claimed[r.Tenant.Name]; dup {
				t.Errorf("tenant %s claimed by %s and %s", r.Tenant.Name, other, id)
			}
			claimed[r.Tenant.Name] = id
		case r.Wait != nil && r.Wait.Reason == lifecycle.ReasonAuditLogPoolEmpty:
			waiting++
		default:
			t.Errorf("%s: %+v", id, r)
		}
	}
	if len(claimed) != wantClaimed || waiting != wantWaiting {
		t.Errorf("%d claimed, %d waiting (%s); want %d and %d", len(claimed), waiting, lifecycle.ReasonAuditLogPoolEmpty, wantClaimed, wantWaiting)
	}
	stored, err := pool.List(context.Background(), ports.ReadLive)
	if err != nil {
		t.Fatal(err)
	}
	holders := map[string]string{}
	for _, tn := range stored {
		if tn.ReservedFor != "" && tn.AssignedTo == "" {
			t.Errorf("tenant %s left reserved for %s", tn.Name, tn.ReservedFor)
		}
		if tn.AssignedTo == "" {
			continue
		}
		if prev, dup := holders[tn.AssignedTo]; dup {
			t.Errorf("runtime %s holds %s and %s", tn.AssignedTo, prev, tn.Name)
		}
		holders[tn.AssignedTo] = tn.Name
		if claimed[tn.Name] != tn.AssignedTo {
			t.Errorf("tenant %s is stored as assigned to %s, but %q was told it holds it", tn.Name, tn.AssignedTo, claimed[tn.Name])
		}
	}
	if len(holders) != wantClaimed {
		t.Errorf("%d tenants assigned in the API server, want %d", len(holders), wantClaimed)
	}
}

// putRuntime creates the KEB-shaped Runtime id in namespace, or changes it, to what o says: the shoot name and
// auditLogAccessEnabled in the spec, provisioningCompleted in the status.
func putRuntime(ctx context.Context, t *testing.T, c client.Client, namespace, id string, o ports.AuditLogOwner) error {
	rt := &imv1.Runtime{}
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: id}, rt)
	switch {
	case apierrors.IsNotFound(err):
		rt = kebRuntime(t, namespace, id)
		rt.Spec.Shoot.Name, rt.Spec.AuditLogAccessEnabled = o.ShootName, ptr.To(o.Enabled)
		if err := c.Create(ctx, rt); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		rt.Spec.Shoot.Name, rt.Spec.AuditLogAccessEnabled = o.ShootName, ptr.To(o.Enabled)
		if err := c.Update(ctx, rt); err != nil {
			return err
		}
	}
	rt.Status.ProvisioningCompleted = o.Provisioned
	return c.Status().Update(ctx, rt)
}
