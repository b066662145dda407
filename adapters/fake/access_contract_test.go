package fake_test

import (
	"testing"
	"time"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/fake"
)

func TestAccessObjectsContract(t *testing.T) {
	contract.RunAccessObjectsContract(t, func(t *testing.T) contract.AccessFixture {
		a := fake.NewAccessObjects()
		return contract.AccessFixture{Access: a, Namespace: "kcp-system", OwnerUID: "runtime-uid",
			SetKubeconfig: func(_ *testing.T, namespace, runtimeID string, expires time.Time) {
				a.SetKubeconfigExpiring(namespace, runtimeID, expires)
			},
			AddLabel: func(_ *testing.T, namespace, runtimeID, key, value string) {
				a.AddLabel(namespace, runtimeID, key, value)
			},
			Labels: func(_ *testing.T, namespace, runtimeID string) map[string]string {
				gc, _ := a.GardenerCluster(namespace, runtimeID)
				return gc.Labels
			},
		}
	})
}
