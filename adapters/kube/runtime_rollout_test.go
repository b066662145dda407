package kube_test

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// The lister only reads the cache; the controller-runtime fake client stands in for it (the mapping from the
// Runtime's status is what is checked).
func TestRuntimeBootstrapListerContract(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := imv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	contract.RunRuntimeBootstrapListerContract(t, func(t *testing.T) contract.RolloutFixture {
		c := fakeclient.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&imv1.Runtime{}).Build()
		put := func(t *testing.T, rec ports.RuntimeBootstrap) {
			t.Helper()
			key := client.ObjectKey{Namespace: rec.Namespace, Name: rec.RuntimeID}
			rt := &imv1.Runtime{}
			err := c.Get(t.Context(), key, rt)
			if apierrors.IsNotFound(err) {
				rt = &imv1.Runtime{ObjectMeta: metav1.ObjectMeta{Namespace: rec.Namespace, Name: rec.RuntimeID,
					Finalizers: []string{"infrastructuremanager.kyma-project.io/runtime"}}}
				rt.Spec.Shoot.Name = rec.ShootName
				err = c.Create(t.Context(), rt)
			}
			if err != nil {
				t.Fatal(err)
			}
			rt.Status.ProvisioningCompleted = rec.EverReady
			rt.Status.State = imv1.RuntimeStateReady
			if rec.GaveUp {
				rt.Status.State = imv1.RuntimeStateFailed
			}
			rt.Status.RuntimeConfiguration = nil
			if rec.Bootstrap.Hash != "" {
				rt.Status.RuntimeConfiguration = &imv1.RuntimeConfigurationStatus{Hash: "c1", BootstrapHash: rec.Bootstrap.Hash,
					BootstrapFailed: rec.Bootstrap.Failed}
			}
			if err := c.Status().Update(t.Context(), rt); err != nil {
				t.Fatal(err)
			}
			if rec.Deleting {
				if err := c.Delete(t.Context(), rt); err != nil {
					t.Fatal(err)
				}
			}
		}
		del := func(t *testing.T, ns, id string) {
			t.Helper()
			rt := &imv1.Runtime{}
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: id}, rt); err != nil {
				t.Fatal(err)
			}
			rt.Finalizers = nil
			if err := c.Update(t.Context(), rt); err != nil {
				t.Fatal(err)
			}
			if err := c.Delete(t.Context(), rt); err != nil {
				t.Fatal(err)
			}
		}
		return contract.RolloutFixture{Lister: &kube.RuntimeBootstrapRecords{Cache: c}, Put: put, Delete: del}
	})
}
