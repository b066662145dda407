package integration_test

import (
	"context"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/test/testenv"
)

// TestIntegrationControlPlaneAddressesContract runs the contract on a real kube-apiserver, reading through the
// single-ConfigMap cache the operator uses, so a change is seen by watch as in production.
func TestIntegrationControlPlaneAddressesContract(t *testing.T) {
	k := testenv.StartKCP(t)
	cfg, c := k.Config, k.Client
	contract.RunControlPlaneAddressesContract(t, func(t *testing.T) contract.AddressesFixture {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "acl-"}}
		if err := c.Create(t.Context(), ns); err != nil {
			t.Fatal(err)
		}
		key := client.ObjectKey{Namespace: ns.Name, Name: "acl-ip-list"}
		// A ConfigMap with another name in the same namespace must stay invisible to the cache.
		other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "other"}, Data: map[string]string{kube.OperatorCIDRsKey: `["9.9.9.9/32"]`}}
		if err := c.Create(t.Context(), other); err != nil {
			t.Fatal(err)
		}
		cmCache, err := kube.NewControlPlaneAddressesCache(cfg, c.Scheme(), key)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		go func() { _ = cmCache.Start(ctx) }()
		if _, err := cmCache.GetInformer(ctx, &corev1.ConfigMap{}); err != nil {
			t.Fatal(err)
		}
		cmCache.WaitForCacheSync(ctx)
		write := func(ctx context.Context, data map[string]string) error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
			if data == nil {
				return client.IgnoreNotFound(c.Delete(ctx, cm))
			}
			err := c.Get(ctx, key, cm)
			cm.Data = data
			if apierrors.IsNotFound(err) {
				return c.Create(ctx, cm)
			}
			if err != nil {
				return err
			}
			return c.Update(ctx, cm)
		}
		return contract.AddressesFixture{
			Addresses: &kube.ControlPlaneAddresses{Reader: cmCache, Key: key},
			Publish: func(ctx context.Context, cidrs []string) error {
				if cidrs == nil {
					return write(ctx, nil)
				}
				list, _ := json.Marshal(cidrs)
				return write(ctx, map[string]string{kube.OperatorCIDRsKey: string(list)})
			},
			PublishInvalid: func(ctx context.Context) error {
				return write(ctx, map[string]string{kube.KCPEgressKey: "not json"})
			},
		}
	})
}
