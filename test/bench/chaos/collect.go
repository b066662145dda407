package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/wire"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/sandbox/gardenbox"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// readWorld reads the Runtimes and kubeconfig Secrets from the KCP, the shoots from the garden and the deletions
// from the gardenlet, with the admin clients of garden-in-a-box (never through the operator or the fault proxy).
func readWorld(ctx context.Context, env *gardenbox.Env) (world, error) {
	w := world{Secrets: map[string]secret{}}
	var rts imv1.RuntimeList
	if err := env.KCPClient.List(ctx, &rts, client.InNamespace(keb.Namespace)); err != nil {
		return w, fmt.Errorf("list runtimes: %w", err)
	}
	for _, rt := range rts.Items {
		if rt.DeletionTimestamp != nil {
			continue // being deleted: not live
		}
		w.Runtimes = append(w.Runtimes, liveRuntime{ID: rt.Name, Shoot: rt.Spec.Shoot.Name, State: string(rt.Status.State), WorkersMax: workersMax(rt.Spec.Shoot.Provider.Workers)})
	}
	var secrets corev1.SecretList
	if err := env.KCPClient.List(ctx, &secrets, client.InNamespace(keb.Namespace)); err != nil {
		return w, fmt.Errorf("list secrets: %w", err)
	}
	for _, s := range secrets.Items {
		if strings.HasPrefix(s.Name, secretsPrefix) {
			w.Secrets[s.Name] = secret{Kubeconfig: s.Data[kubeconfig.SecretKey], ShootName: s.Annotations[kubeconfig.AnnotationShootName]}
		}
	}
	var shoots gardencorev1beta1.ShootList
	if err := env.GardenClient.List(ctx, &shoots, client.InNamespace(env.Catalogue.ProjectNamespace())); err != nil {
		return w, fmt.Errorf("list shoots: %w", err)
	}
	for _, s := range shoots.Items {
		id, _ := translate.RuntimeIDOf(s.Annotations)
		w.Shoots = append(w.Shoots, shoot{Name: s.Name, UID: string(s.UID), RuntimeID: id,
			Managed: s.Labels[wire.LabelManagedBy] == wire.ManagedByValue, Deleting: s.DeletionTimestamp != nil,
			DeletionRecord: s.Annotations[gardener.AnnotationDeletionRuntimeID], WorkersMax: workersMax(s.Spec.Provider.Workers)})
	}
	for _, d := range env.Gardenlet.Deletions() {
		if d.Labels[wire.LabelManagedBy] != wire.ManagedByValue {
			continue
		}
		id, _ := translate.RuntimeIDOf(d.Annotations)
		if id == "" {
			id = d.Annotations[gardener.AnnotationDeletionRuntimeID]
		}
		var marked time.Time
		if m := d.Annotations[gardener.AnnotationDeletionMarkedAt]; m != "" {
			t, err := time.Parse(time.RFC3339, m)
			if err != nil {
				return w, fmt.Errorf("shoot %s: unreadable %s %q: %w", d.Name, gardener.AnnotationDeletionMarkedAt, m, err)
			}
			marked = t
		}
		w.Deletions = append(w.Deletions, shootDeletion{Name: d.Name, UID: string(d.UID), RuntimeID: id, At: d.RequestedAt, MarkedAt: marked})
	}
	return w, nil
}

func workersMax(workers []gardencorev1beta1.Worker) int32 {
	if len(workers) == 0 {
		return 0
	}
	return workers[0].Maximum
}
