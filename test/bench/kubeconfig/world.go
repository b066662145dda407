package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/wire"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/bench/harness"
	"github.com/kyma-project/kim/test/sandbox/gardenbox"
	"github.com/kyma-project/kim/test/sandbox/gardenlet"
	"github.com/kyma-project/kim/test/sandbox/runtimeapi"
	"github.com/kyma-project/kim/test/testenv"
	"github.com/kyma-project/kim/test/testenv/keb"
)

const kcpNamespace = "kcp-system"

// world is garden-in-a-box prepared for the harness: a garden whose simulated gardenlet finishes operations almost
// at once, no runtime API servers.
type world struct {
	*harness.World
	env                  *gardenbox.Env
	gardenHost, kcpHost  string
	shootNamespace       string
	createWorkers, total int
}

func startWorld(ctx context.Context, n int) (*world, error) {
	hw, err := harness.StartWorld(ctx, testenv.GardenOptions{
		// The kubeconfig controller never talks to a shoot: CA objects and a placeholder address suffice.
		RuntimeAPIServers: runtimeapi.ModeNone,
		Gardenlet: gardenlet.Options{
			CreateDuration: time.Millisecond, ReconcileDuration: time.Millisecond, DeleteDuration: time.Millisecond,
			ProgressInterval: time.Millisecond, MaxConcurrentReconciles: 20,
		},
	}, kcpNamespace)
	if err != nil {
		return nil, err
	}
	return &world{World: hw, env: hw.Env, gardenHost: hw.GardenHost, kcpHost: hw.KCPHost, shootNamespace: hw.ShootNamespace,
		createWorkers: 16, total: n}, nil
}

// createShoots creates the shoots directly in the garden and waits until the gardenlet has created all of them.
func (w *world) createShoots(ctx context.Context, timeout time.Duration) error {
	names, ids := make([]string, w.total), make([]string, w.total)
	for i := range names {
		names[i], ids[i] = keb.ShootName(i), keb.RuntimeID(i)
	}
	return w.CreateShoots(ctx, names, ids, w.createWorkers, timeout)
}

func (w *world) createGardenerClusters(ctx context.Context) error {
	return harness.Parallel(ctx, w.total, w.createWorkers, func(ctx context.Context, i int) error {
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
