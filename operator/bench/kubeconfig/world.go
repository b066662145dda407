package main

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	gardensecrets "github.com/gardener/gardener/pkg/utils/secrets"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/internal/testenv"
	"github.com/kyma-project/kim/internal/testenv/keb"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/sandbox/gardenbox"
	"github.com/kyma-project/kim/operator/sandbox/gardenlet"
	"github.com/kyma-project/kim/operator/sandbox/runtimeapi"
)

const kcpNamespace = "kcp-system"

// world is garden-in-a-box prepared for the harness: KCP with the operator's CRDs and namespace, a garden whose
// simulated gardenlet finishes operations almost at once, no runtime API servers.
type world struct {
	env                  *gardenbox.Env
	gardenHost, kcpHost  string
	shootNamespace       string
	createWorkers, total int
}

func startWorld(ctx context.Context, n int) (*world, error) {
	env, err := testenv.StartGarden(ctx, testenv.GardenOptions{
		// The kubeconfig controller never talks to a shoot: CA objects and a placeholder address suffice.
		RuntimeAPIServers: runtimeapi.ModeNone,
		Gardenlet: gardenlet.Options{
			CreateDuration: time.Millisecond, ReconcileDuration: time.Millisecond, DeleteDuration: time.Millisecond,
			ProgressInterval: time.Millisecond, MaxConcurrentReconciles: 20,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("start garden-in-a-box: %w", err)
	}
	w := &world{env: env, shootNamespace: env.Catalogue.ProjectNamespace(), createWorkers: 16, total: n}
	gu, err1 := url.Parse(env.Garden.Host)
	ku, err2 := url.Parse(env.KCP.Host)
	if err := errors.Join(err1, err2); err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("parse API server URLs: %w", err)
	}
	w.gardenHost, w.kcpHost = gu.Host, ku.Host
	if err := env.KCPClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kcpNamespace}}); err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("create namespace %s: %w", kcpNamespace, err)
	}
	return w, nil
}

// poolGardenerKeys makes the in-process gardener-apiserver reuse a few RSA keys for the client certificates of
// admin kubeconfigs instead of generating a 3072-bit key per request (~0.7 s of CPU each on this machine, which
// would measure Gardener's key generation rather than the operator). Certificates are still issued and signed
// per request. Must be called before the garden starts.
func poolGardenerKeys(size int) {
	var mu sync.Mutex
	pool := map[int][]*rsa.PrivateKey{}
	next := 0
	generate := gardensecrets.GenerateKey
	gardensecrets.GenerateKey = func(r io.Reader, bits int) (*rsa.PrivateKey, error) {
		mu.Lock()
		defer mu.Unlock()
		if keys := pool[bits]; len(keys) >= size {
			next++
			return keys[next%len(keys)], nil
		}
		k, err := generate(r, bits)
		if err != nil {
			return nil, err
		}
		pool[bits] = append(pool[bits], k)
		return k, nil
	}
}

// parallel runs do(0..n-1) on workers goroutines and returns the first error.
func parallel(ctx context.Context, n, workers int, do func(ctx context.Context, i int) error) error {
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				if err := do(ctx, i); err != nil {
					once.Do(func() { firstErr = err; cancel() })
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}

// createShoots creates the shoots directly in the garden and waits until the gardenlet has created all of them
// (lastOperation Create Succeeded, CA objects written, address advertised).
func (w *world) createShoots(ctx context.Context, timeout time.Duration) error {
	err := parallel(ctx, w.total, w.createWorkers, func(ctx context.Context, i int) error {
		s, err := w.env.NewShoot(keb.ShootName(i), "aws")
		if err != nil {
			return err
		}
		if err := w.env.GardenClient.Create(ctx, s); err != nil {
			return fmt.Errorf("create shoot %s: %w", s.Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return testenv.Poll(ctx, timeout, 2*time.Second, "shoots ready", reaches(func() (int, error) {
		var list gardencorev1beta1.ShootList
		if err := w.env.GardenClient.List(ctx, &list, client.InNamespace(w.shootNamespace)); err != nil {
			return 0, fmt.Errorf("list shoots: %w", err)
		}
		ready := 0
		for _, s := range list.Items {
			if op := s.Status.LastOperation; op != nil && op.State == gardencorev1beta1.LastOperationStateSucceeded && len(s.Status.AdvertisedAddresses) > 0 {
				ready++
			}
		}
		return ready, nil
	}, w.total), progressLog)
}

func (w *world) createGardenerClusters(ctx context.Context) error {
	return parallel(ctx, w.total, w.createWorkers, func(ctx context.Context, i int) error {
		if err := w.env.KCPClient.Create(ctx, keb.GardenerCluster(keb.RuntimeID(i), keb.ShootName(i))); err != nil {
			return fmt.Errorf("create gardener cluster %d: %w", i, err)
		}
		return nil
	})
}

// progress is what convergence polling sees.
type progress struct {
	ready, written int
	// reasons counts the GardenerClusters by the reason of their KubeconfigManagement condition.
	reasons map[string]int
}

// converged counts Ready GardenerClusters and Secrets with an issued kubeconfig (metadata only, cheap to poll: the
// operator writes data and annotations in one apply, so the annotation implies the data).
func (w *world) converged(ctx context.Context) (progress, error) {
	p := progress{reasons: map[string]int{}}
	var gcs imv1.GardenerClusterList
	if err := w.env.KCPClient.List(ctx, &gcs, client.InNamespace(kcpNamespace)); err != nil {
		return p, fmt.Errorf("list gardener clusters: %w", err)
	}
	for _, gc := range gcs.Items {
		if gc.Status.State == imv1.GardenerClusterStateReady {
			p.ready++
		}
		if c := meta.FindStatusCondition(gc.Status.Conditions, imv1.ConditionKubeconfigManagement); c != nil {
			p.reasons[c.Reason]++
		}
	}
	secrets := &metav1.PartialObjectMetadataList{}
	secrets.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := w.env.KCPClient.List(ctx, secrets, client.InNamespace(kcpNamespace),
		client.MatchingLabels{wire.LabelManagedBy: wire.ManagedByValue}); err != nil {
		return p, fmt.Errorf("list secrets: %w", err)
	}
	for _, s := range secrets.Items {
		if s.Annotations[kubeconfig.AnnotationLastSync] != "" {
			p.written++
		}
	}
	return p, nil
}

// verifySecrets reads every kubeconfig Secret in full and counts those holding a usable kubeconfig (non-empty
// current-context, server and CA data).
func (w *world) verifySecrets(ctx context.Context) (int, error) {
	good, cont := 0, ""
	for {
		var list corev1.SecretList
		if err := w.env.KCPClient.List(ctx, &list, client.InNamespace(kcpNamespace), client.Limit(500), client.Continue(cont),
			client.MatchingLabels{wire.LabelManagedBy: wire.ManagedByValue}); err != nil {
			return good, fmt.Errorf("list secrets: %w", err)
		}
		for _, s := range list.Items {
			cfg, err := clientcmd.Load(s.Data["config"])
			if err != nil || cfg.CurrentContext == "" || cfg.Contexts[cfg.CurrentContext] == nil {
				continue
			}
			if c := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster]; c != nil && c.Server != "" && len(c.CertificateAuthorityData) > 0 {
				good++
			}
		}
		if cont = list.Continue; cont == "" {
			return good, nil
		}
	}
}

// reaches is a polling condition: count reaches want (what it saw, or the error, describes the progress).
func reaches(count func() (int, error), want int) func() (bool, string) {
	return func() (bool, string) {
		n, err := count()
		if err != nil {
			return false, fmt.Sprintf("%d/%d (%v)", n, want, err)
		}
		return n >= want, fmt.Sprintf("%d/%d", n, want)
	}
}

func progressLog(what, seen string) { logf("%s: %s", what, seen) }
