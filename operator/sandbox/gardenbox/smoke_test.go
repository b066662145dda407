package gardenbox_test

import (
	"context"
	"os"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/go-logr/logr/testr"
	"github.com/kyma-project/kim/operator/sandbox/gardenbox"
	"github.com/kyma-project/kim/operator/sandbox/runtimeapi"
	"k8s.io/apimachinery/pkg/types"
)

func TestSmoke(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("KUBEBUILDER_ASSETS not set")
	}
	ctx := context.Background()
	env, err := gardenbox.Start(ctx, gardenbox.Options{RuntimeAPIServers: runtimeapi.ModePerShoot, Logger: testr.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	t.Logf("%+v", env.StartupTimes)
	s, err := env.NewShoot("smoke", "aws")
	if err != nil {
		t.Fatal(err)
	}
	if err := env.GardenClient.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 60; i++ {
		time.Sleep(time.Second)
		_ = env.GardenClient.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: s.Name}, s)
		t.Logf("%v seed=%v %+v", s.Status.LastOperation, s.Spec.SeedName, s.Status.AdvertisedAddresses)
		if s.Status.LastOperation != nil && s.Status.LastOperation.State == gardencorev1beta1.LastOperationStateSucceeded {
			break
		}
	}
	kc, err := env.AdminKubeconfig(ctx, s.Namespace, s.Name, 600)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", kc[:200])
}
