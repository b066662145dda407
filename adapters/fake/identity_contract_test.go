package fake_test

import (
	"context"
	"testing"
	"time"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/ports"
)

func TestIdentityKubeconfigStoreContract(t *testing.T) {
	contract.RunIdentityKubeconfigStoreContract(t, func(t *testing.T) contract.IdentityStoreFixture {
		s := fake.NewIdentityKubeconfigStore()
		return contract.IdentityStoreFixture{
			Store: s, Namespace: "kcp-system", ConcurrentWrites: 2000,
			ReadKey: func(_ context.Context, ref ports.SecretRef) ([]byte, bool, error) {
				if !s.Secrets.Exists(ref.Namespace, ref.Name) {
					return nil, false, nil
				}
				data, err := s.Secrets.Kubeconfig(ref)
				return data, err == nil, err
			},
			PutForeign: func(_ context.Context, ref ports.SecretRef, data map[string][]byte, labels, annotations map[string]string) error {
				s.Secrets.Put(ref.Namespace, ref.Name, data, labels, annotations)
				return nil
			},
		}
	})
}

func TestRuntimeIdentitiesContract(t *testing.T) {
	contract.RunRuntimeIdentitiesContract(t, func(t *testing.T) contract.IdentitiesFixture {
		clock := fake.NewClock(time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC))
		ids := fake.NewRuntimeIdentities(clock.Now)
		rt := ports.RuntimeRef{Namespace: "kcp-system", RuntimeID: "rid"}
		hanging := ports.RuntimeRef{Namespace: "kcp-system", RuntimeID: "hanging"}
		ids.AddRuntime(rt, sakubeconfig.Endpoint{Server: "https://api.rid.example", CAData: []byte("ca")})
		ids.AddRuntime(hanging, sakubeconfig.Endpoint{Server: "https://api.hanging.example", CAData: []byte("ca")})
		ids.SetUnreachable(hanging, true)
		return contract.IdentitiesFixture{
			Identities: ids, Runtime: rt, Missing: ports.RuntimeRef{Namespace: "kcp-system", RuntimeID: "missing"}, Hanging: hanging,
			CallBound: time.Second, Now: clock.Now,
			WhoAmI: func(_ context.Context, token string) (string, error) { return ids.WhoAmI(rt, token) },
			Objects: func(_ context.Context, owner sakubeconfig.Owner) ([]sakubeconfig.ObjectRef, error) {
				return ids.Objects(rt, owner), nil
			},
			NamespaceExists: func(_ context.Context, ns string) (bool, error) { return ids.NamespaceExists(rt, ns), nil },
			PutNamespace:    func(_ context.Context, ns string) error { ids.PutNamespace(rt, ns); return nil },
			PutServiceAccount: func(_ context.Context, sa sakubeconfig.ServiceAccount) error {
				ids.Put(rt, sakubeconfig.ObjectRef{Kind: sakubeconfig.KindServiceAccount, Namespace: sa.Namespace, Name: sa.Name},
					map[string]string{"app": "customer"}, nil, nil)
				return nil
			},
			PutClusterRole: func(_ context.Context, name string, role sakubeconfig.ClusterRole) error {
				ids.Put(rt, sakubeconfig.ObjectRef{Kind: sakubeconfig.KindClusterRole, Name: name}, nil, nil, role.Rules)
				ids.SetAggregated(rt, name, role.Aggregated)
				return nil
			},
		}
	})
}
