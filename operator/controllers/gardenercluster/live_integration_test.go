package gardenercluster_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/gardenercluster"
	"github.com/kyma-project/kim/operator/controllers/skeleton"
	"github.com/kyma-project/kim/test/testenv"
)

// TestIntegrationKubeconfigRequestsContract runs the KubeconfigRequests contract against the controller's
// implementation (a reconcile's state confirming with the API server) on a real kube-apiserver.
func TestIntegrationKubeconfigRequestsContract(t *testing.T) {
	k := testenv.StartKCP(t)
	c := k.Client
	contract.RunKubeconfigRequestsContract(t, func(t *testing.T) contract.RequestsFixture {
		ns := testenv.Namespace(t, c, "requests")
		state := skeleton.NewState(client.ObjectKey{Namespace: ns, Name: "rid"}, c, func() *imv1.GardenerCluster { return &imv1.GardenerCluster{} })
		return contract.RequestsFixture{Requests: gardenercluster.Live(state), Namespace: ns,
			Put: func(t *testing.T, req ports.KubeconfigRequest) {
				gc := &imv1.GardenerCluster{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name}}
				_, err := ctrlCreateOrUpdate(t, c, gc, func() {
					gc.Labels = req.Labels
					gc.Annotations = map[string]string{}
					if req.Force {
						gc.Annotations[imv1.AnnotationForceKubeconfigRotation] = "true"
					}
					gc.Spec.Shoot.Name = req.Shoot
					gc.Spec.Kubeconfig.Secret = imv1.Secret{Namespace: req.Secret.Namespace, Name: req.Secret.Name, Key: req.Secret.Key}
				})
				require.NoError(t, err)
			},
			Delete: func(t *testing.T, name string) {
				gc := &imv1.GardenerCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
				patch := fmt.Appendf(nil, `{"metadata":{"finalizers":[%q]}}`, gardenercluster.Finalizer)
				require.NoError(t, c.Patch(t.Context(), gc, client.RawPatch(types.MergePatchType, patch)))
				require.NoError(t, c.Delete(t.Context(), gc))
			}}
	})
}

func ctrlCreateOrUpdate(t *testing.T, c client.Client, gc *imv1.GardenerCluster, change func()) (bool, error) {
	t.Helper()
	err := c.Get(t.Context(), client.ObjectKeyFromObject(gc), gc)
	change()
	if client.IgnoreNotFound(err) != nil {
		return false, err
	}
	if err != nil {
		return true, c.Create(t.Context(), gc)
	}
	return false, c.Update(t.Context(), gc)
}
