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
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/app"
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

func startWorld(ctx context.Context, crdDir string, n int) (*world, error) {
	scheme, err := app.NewScheme()
	if err != nil {
		return nil, err
	}
	env, err := gardenbox.Start(ctx, gardenbox.Options{
		CRDDirectoryPaths: []string{crdDir},
		KCPScheme:         scheme,
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

func shootName(i int) string { return fmt.Sprintf("c-%06x", i) }

func runtimeID(i int) string { return fmt.Sprintf("5e1d0c2a-be4c-4000-8000-%012x", i) }

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
		s, err := w.env.NewShoot(shootName(i), "aws")
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
	return poll(ctx, timeout, 2*time.Second, "shoots ready", func() (int, error) {
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
	}, w.total)
}

// gardenerCluster is a GardenerCluster in the shape KEB creates (docs/keb-contract.md).
func gardenerCluster(i int) *imv1.GardenerCluster {
	id, shoot := runtimeID(i), shootName(i)
	return &imv1.GardenerCluster{
		ObjectMeta: metav1.ObjectMeta{
			Name: id, Namespace: kcpNamespace,
			Labels: map[string]string{
				imv1.LabelInstanceID: fmt.Sprintf("instance-%06x", i), imv1.LabelRuntimeID: id,
				imv1.LabelBrokerPlanID: "7d55d31d-35ae-4438-bf13-6ffdfa107d9f", imv1.LabelBrokerPlanName: "trial",
				imv1.LabelGlobalAccountID: "ga-bench", imv1.LabelSubaccountID: fmt.Sprintf("sa-%06x", i), imv1.LabelShootName: shoot,
				imv1.LabelRegion: "eu-central-1", imv1.LabelKymaName: id, imv1.LabelManagedBy: "lifecycle-manager",
			},
			Annotations: map[string]string{imv1.AnnotationSKRDomain: shoot + ".kyma.example"},
		},
		Spec: imv1.GardenerClusterSpec{
			Shoot:      imv1.Shoot{Name: shoot},
			Kubeconfig: imv1.Kubeconfig{Secret: imv1.Secret{Name: "kubeconfig-" + id, Namespace: kcpNamespace, Key: "config"}},
		},
	}
}

func (w *world) createGardenerClusters(ctx context.Context) error {
	return parallel(ctx, w.total, w.createWorkers, func(ctx context.Context, i int) error {
		if err := w.env.KCPClient.Create(ctx, gardenerCluster(i)); err != nil {
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
		client.MatchingLabels{kubeconfig.LabelManagedBy: kubeconfig.ManagedByValue}); err != nil {
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
			client.MatchingLabels{kubeconfig.LabelManagedBy: kubeconfig.ManagedByValue}); err != nil {
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

// poll calls count every interval until it returns want; it reports progress on stderr.
func poll(ctx context.Context, timeout, interval time.Duration, what string, count func() (int, error), want int) error {
	deadline := time.Now().Add(timeout)
	lastReport := time.Now()
	for {
		n, err := count()
		if err == nil && n >= want {
			return nil
		}
		if time.Since(lastReport) > 15*time.Second {
			logf("%s: %d/%d", what, n, want)
			lastReport = time.Now()
		}
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("%s: %d/%d after %s: %w", what, n, want, timeout, err)
			}
			return fmt.Errorf("%s: %d/%d after %s", what, n, want, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}
