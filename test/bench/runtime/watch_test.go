package runtime_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/internal/scheme"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// Watches that record when something was first observed, for the latency benchmark.

const (
	succeededKind = "succeeded"
	readyKind     = "ready"
	clusterKind   = "gardenercluster"
	secretKind    = "secret"
	// shootKind is the shoot first seen; advertisedKind its kube-apiserver first seen advertised.
	shootKind      = "shoot"
	advertisedKind = "advertised"
)

// moments records when something was first observed, by kind and name.
type moments struct {
	mu   sync.Mutex
	seen map[string]map[string]time.Time
}

func newMoments() *moments {
	return &moments{seen: map[string]map[string]time.Time{succeededKind: {}, readyKind: {}, clusterKind: {}, secretKind: {},
		shootKind: {}, advertisedKind: {}}}
}

func (m *moments) observe(kind, name string) {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.seen[kind][name]; !ok {
		m.seen[kind][name] = now
	}
}

func (m *moments) get(kind, name string) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.seen[kind][name]
	return t, ok
}

func (m *moments) count(kind string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.seen[kind])
}

// watchShootsSucceeded records when each shoot is first seen, first seen with an advertised kube-apiserver, and
// first seen with its Create operation Succeeded.
func watchShootsSucceeded(ctx context.Context, cfg *rest.Config, namespace string, rec *moments) error {
	return watchAll(ctx, cfg, &gardencorev1beta1.ShootList{}, namespace, func(o runtime.Object) {
		s, ok := o.(*gardencorev1beta1.Shoot)
		if !ok {
			return
		}
		rec.observe(shootKind, s.Name)
		if len(s.Status.AdvertisedAddresses) > 0 {
			rec.observe(advertisedKind, s.Name)
		}
		op := s.Status.LastOperation
		if op != nil && op.Type == gardencorev1beta1.LastOperationTypeCreate && op.State == gardencorev1beta1.LastOperationStateSucceeded {
			rec.observe(succeededKind, s.Name)
		}
	})
}

// watchRuntimesReady records when each Runtime is first seen Ready.
func watchRuntimesReady(ctx context.Context, cfg *rest.Config, rec *moments) error {
	return watchAll(ctx, cfg, &imv1.RuntimeList{}, keb.Namespace, func(o runtime.Object) {
		if rt, ok := o.(*imv1.Runtime); ok && rt.Status.State == imv1.RuntimeStateReady {
			rec.observe(readyKind, rt.Name)
		}
	})
}

// watchRestarts counts watches the server closed (reported by the benchmark).
var watchRestarts atomic.Int32

// watchKCPObjects records when each GardenerCluster and each filled kubeconfig Secret is first seen (by runtime ID).
func watchKCPObjects(ctx context.Context, cfg *rest.Config, rec *moments) error {
	err := watchAll(ctx, cfg, &imv1.GardenerClusterList{}, keb.Namespace, func(o runtime.Object) {
		if gc, ok := o.(*imv1.GardenerCluster); ok {
			rec.observe(clusterKind, gc.Name)
		}
	})
	if err != nil {
		return err
	}
	return watchAll(ctx, cfg, &corev1.SecretList{}, keb.Namespace, func(o runtime.Object) {
		if s, ok := o.(*corev1.Secret); ok && len(s.Data[kubeconfig.SecretKey]) > 0 && strings.HasPrefix(s.Name, "kubeconfig-") {
			rec.observe(secretKind, strings.TrimPrefix(s.Name, "kubeconfig-"))
		}
	})
}

// watchAll hands every added or modified object to handle until ctx ends, re-establishing the watch when the
// server closes it (a gap would show as a late observation, never as an early one).
func watchAll(ctx context.Context, cfg *rest.Config, list client.ObjectList, namespace string, handle func(runtime.Object)) error {
	scheme, err := scheme.New()
	if err != nil {
		return err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = 0 // a request timeout would also end every watch
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("watch client: %w", err)
	}
	start := func() (watch.Interface, error) {
		wi, err := c.Watch(ctx, list, client.InNamespace(namespace))
		if err != nil {
			return nil, fmt.Errorf("watch %T: %w", list, err)
		}
		return wi, nil
	}
	wi, err := start()
	if err != nil {
		return err
	}
	go func() {
		for {
			for ev := range wi.ResultChan() {
				if ev.Type == watch.Added || ev.Type == watch.Modified {
					handle(ev.Object)
				}
			}
			wi.Stop()
			watchRestarts.Add(1)
			for ctx.Err() == nil {
				if wi, err = start(); err == nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if ctx.Err() != nil {
				return
			}
		}
	}()
	return nil
}
