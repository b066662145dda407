package integration_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/test/testenv"
)

// TestIntegrationKubeconfigSecretStoreContract runs the store contract on a real kube-apiserver with a cache
// restricted to managed Secrets, as the operator runs it.
func TestIntegrationKubeconfigSecretStoreContract(t *testing.T) {
	k := testenv.StartKCP(t)
	cfg, c := k.Config, k.Client
	managed := labels.SelectorFromSet(labels.Set{wire.LabelManagedBy: wire.ManagedByValue})
	secretCache, err := cache.New(cfg, cache.Options{Scheme: c.Scheme(),
		ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {Label: managed}}})
	if err != nil {
		t.Fatalf("cache: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = secretCache.Start(ctx) }()
	// Informers start on first use; touch the Secret informer so the first cached read does not wait for it.
	if _, err := secretCache.GetInformer(ctx, &corev1.Secret{}); err != nil {
		t.Fatalf("secret informer: %v", err)
	}
	secretCache.WaitForCacheSync(ctx)
	store := kube.NewKubeconfigSecretStore(secretCache, c, c)

	contract.RunKubeconfigSecretStoreContract(t, func(t *testing.T) contract.SecretStoreFixture {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "store-"}}
		if err := c.Create(t.Context(), ns); err != nil {
			t.Fatalf("create namespace: %v", err)
		}
		return contract.SecretStoreFixture{
			Store:     store,
			Namespace: ns.Name,
			ReadKey: func(ctx context.Context, ref ports.SecretRef) ([]byte, bool, error) {
				var s corev1.Secret
				err := c.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, &s)
				if apierrors.IsNotFound(err) {
					return nil, false, nil
				}
				if err != nil {
					return nil, false, err
				}
				return s.Data[ref.Key], true, nil
			},
			PutForeign: func(ctx context.Context, ref ports.SecretRef, data map[string][]byte, l, a map[string]string) error {
				return c.Create(ctx, &corev1.Secret{
					ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name, Labels: l, Annotations: a},
					Data:       data,
				}, client.FieldOwner("older-operator"))
			},
			ConcurrentWrites: 50,
		}
	})
}
