package fake_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/ports"
)

func TestKubeconfigSecretStoreContract(t *testing.T) {
	contract.RunKubeconfigSecretStoreContract(t, func(t *testing.T) contract.SecretStoreFixture {
		s := fake.NewKubeconfigSecretStore()
		return contract.SecretStoreFixture{
			Store:     s,
			Namespace: "kcp-system",
			ReadKey: func(_ context.Context, ref ports.SecretRef) ([]byte, bool, error) {
				if !s.Exists(ref.Namespace, ref.Name) {
					return nil, false, nil
				}
				data, err := s.Kubeconfig(ref)
				return data, err == nil, err
			},
			PutForeign: func(_ context.Context, ref ports.SecretRef, data map[string][]byte, labels, annotations map[string]string) error {
				s.Put(ref.Namespace, ref.Name, data, labels, annotations)
				return nil
			},
			ConcurrentWrites: 2000,
		}
	})
}

func TestKubeconfigIssuerContract(t *testing.T) {
	contract.RunKubeconfigIssuerContract(t, func(t *testing.T) contract.IssuerFixture {
		clock := fake.NewClock(time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC))
		issuer := fake.NewKubeconfigIssuer(clock)
		issuer.AddShoot("ready")
		issuer.SetShootError("creating", fmt.Errorf("no advertised address: %w", ports.ErrShootNotReady))
		forbidden := fake.NewKubeconfigIssuer(clock)
		forbidden.SetShootError("ready", fmt.Errorf("adminkubeconfig is forbidden: %w", ports.ErrForbidden))
		return contract.IssuerFixture{
			Issuer: issuer, Now: clock.Now,
			ReadyShoot: "ready", NotReadyShoot: "creating", MissingShoot: "missing",
			Forbidden: forbidden,
		}
	})
}
