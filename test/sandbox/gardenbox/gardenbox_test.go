package gardenbox_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/test/sandbox/catalogue"
	"github.com/kyma-project/kim/test/sandbox/gardenbox"
	"github.com/kyma-project/kim/test/sandbox/gardenlet"
	"github.com/kyma-project/kim/test/sandbox/runtimeapi"
	"github.com/kyma-project/kim/test/testenv"
)

func TestCatalogueIsServedByTheGarden(t *testing.T) {
	ctx := context.Background()
	profiles := &gardencorev1beta1.CloudProfileList{}
	if err := env.GardenClient.List(ctx, profiles); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range profiles.Items {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	want := []string{"alicloud", "aws", "az", "converged-cloud-kyma", "gcp", "gdch"}
	if !slices.Equal(names, want) {
		t.Errorf("cloud profiles = %v, want %v", names, want)
	}
	seeds := &gardencorev1beta1.SeedList{}
	if err := env.GardenClient.List(ctx, seeds, client.MatchingLabels{"seed.gardener.cloud/region": "westeurope"}); err != nil {
		t.Fatal(err)
	}
	if len(seeds.Items) != 1 || seeds.Items[0].Spec.Provider.Type != "azure" {
		t.Errorf("seeds in westeurope = %v, want one azure seed", seeds.Items)
	}
	binding := &securityv1alpha1.CredentialsBinding{}
	if err := env.GardenClient.Get(ctx, client.ObjectKey{Namespace: "garden-kyma", Name: "aws-trial-shared-01"}, binding); err != nil {
		t.Errorf("credentials binding of the KEB trial fixture: %v", err)
	}
	if err := catalogue.Apply(ctx, env.GardenClient, env.Catalogue); err != nil {
		t.Errorf("re-applying the catalogue must be idempotent: %v", err)
	}
}

func TestAdmissionRejectsShootsOutsideTheCatalogue(t *testing.T) {
	for _, tc := range []struct {
		reason string
		mutate func(*gardencorev1beta1.Shoot)
	}{
		{"unknown machine type", func(s *gardencorev1beta1.Shoot) { s.Spec.Provider.Workers[0].Machine.Type = "m99.huge" }},
		{"unknown zone", func(s *gardencorev1beta1.Shoot) { s.Spec.Provider.Workers[0].Zones = []string{"eu-central-1z"} }},
		{"unknown kubernetes version", func(s *gardencorev1beta1.Shoot) { s.Spec.Kubernetes.Version = "1.20.1" }},
		{"unregistered extension", func(s *gardencorev1beta1.Shoot) {
			s.Spec.Extensions = []gardencorev1beta1.Extension{{Type: "no-such-extension"}}
		}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			shoot, err := env.NewShoot("rejected", "aws")
			if err != nil {
				t.Fatal(err)
			}
			tc.mutate(shoot)
			err = env.GardenClient.Create(context.Background(), shoot)
			if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
				t.Fatalf("create = %v, want rejection by the gardener-apiserver", err)
			}
		})
	}
}

// TestAdminKubeconfigAuthenticatesAgainstRuntimeAPIServer is acceptance criterion 3 of issue 3.
func TestAdminKubeconfigAuthenticatesAgainstRuntimeAPIServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	shoot := createShoot(t, "kubeconfig", nil)
	other := createShoot(t, "other", nil)
	shoot = waitForOperation(t, shoot, gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateSucceeded)
	waitForOperation(t, other, gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateSucceeded)

	kubeconfig, err := env.AdminKubeconfig(ctx, shoot.Namespace, shoot.Name, 600)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != shoot.Status.AdvertisedAddresses[0].URL {
		t.Errorf("kubeconfig server %s, advertised %s", cfg.Host, shoot.Status.AdvertisedAddresses[0].URL)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the gardener-issued kubeconfig must authenticate against the runtime API server: %v", err)
	}
	if !slices.Contains(review.Status.UserInfo.Groups, "gardener.cloud:system:admins") {
		t.Errorf("user %v is not an admin", review.Status.UserInfo)
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kyma-system"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("admin kubeconfig cannot write: %v", err)
	}
	// The test helper reaches the same server; the other shoot's server is a different cluster.
	rc, err := env.RuntimeClient(shoot.Namespace, shoot.Name)
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Get(ctx, client.ObjectKey{Name: "kyma-system"}, &corev1.Namespace{}); err != nil {
		t.Errorf("runtime client does not see what the kubeconfig wrote: %v", err)
	}
	otherCfg, err := env.RuntimeConfig(other.Namespace, other.Name)
	if err != nil {
		t.Fatal(err)
	}
	otherCfg.Host = cfg.Host // the other shoot's certificates must not be accepted here
	otherCfg.CAData = cfg.CAData
	_, err = kubernetes.NewForConfigOrDie(otherCfg).CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if !apierrors.IsUnauthorized(err) {
		t.Errorf("certificate of another shoot's CA: err = %v, want Unauthorized", err)
	}
}

func TestShootLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	shoot := createShoot(t, "lifecycle", noServer)
	testenv.Eventually(t, 30*time.Second, "rising progress", func() (bool, string) {
		last := getShoot(t, shoot).Status.LastOperation
		return last != nil && last.State == gardencorev1beta1.LastOperationStateProcessing && last.Progress > 0 && last.Progress < 100, fmt.Sprint(last)
	})
	shoot = waitForOperation(t, shoot, gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateSucceeded)
	if shoot.Spec.SeedName == nil || *shoot.Spec.SeedName != catalogue.SeedName("aws", shoot.Spec.Region) {
		t.Errorf("seed = %v, want the aws seed of %s", shoot.Spec.SeedName, shoot.Spec.Region)
	}
	if shoot.Status.ObservedGeneration != shoot.Generation || shoot.Status.TechnicalID != "shoot--kyma--lifecycle" {
		t.Errorf("status after create: observedGeneration %d (generation %d), technicalID %q", shoot.Status.ObservedGeneration, shoot.Generation, shoot.Status.TechnicalID)
	}

	// Spec change -> Reconcile -> Succeeded for the new generation.
	shoot.Spec.Provider.Workers[0].Maximum = 5
	if err := env.GardenClient.Update(ctx, shoot); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "reconcile of the new generation", func() (bool, string) {
		s := getShoot(t, shoot)
		last := s.Status.LastOperation
		return last.Type == gardencorev1beta1.LastOperationTypeReconcile && last.State == gardencorev1beta1.LastOperationStateSucceeded &&
			s.Status.ObservedGeneration == s.Generation, fmt.Sprint(s.Status.LastOperation)
	})

	// Hibernation and wake-up.
	for _, hibernate := range []bool{true, false} {
		shoot = getShoot(t, shoot)
		shoot.Spec.Hibernation = &gardencorev1beta1.Hibernation{Enabled: ptr.To(hibernate)}
		if err := env.GardenClient.Update(ctx, shoot); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 30*time.Second, "hibernated="+map[bool]string{true: "true", false: "false"}[hibernate], func() (bool, string) {
			s := getShoot(t, shoot)
			return s.Status.IsHibernated == hibernate && s.Status.ObservedGeneration == s.Generation &&
				s.Status.LastOperation.State == gardencorev1beta1.LastOperationStateSucceeded, fmt.Sprint(s.Status.LastOperation)
		})
	}

	// Deletion needs Gardener's confirmation annotation (enforced by the real admission).
	shoot = getShoot(t, shoot)
	if err := env.GardenClient.Delete(ctx, shoot); !apierrors.IsForbidden(err) {
		t.Fatalf("delete without confirmation = %v, want Forbidden", err)
	}
	confirmDeletion(t, shoot)
	if err := env.GardenClient.Delete(ctx, shoot); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "shoot gone", func() (bool, string) {
		err := env.GardenClient.Get(ctx, client.ObjectKeyFromObject(shoot), &gardencorev1beta1.Shoot{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	err := env.GardenClient.Get(ctx, client.ObjectKey{Namespace: shoot.Namespace, Name: shoot.Name + ".ca-cluster"}, &corev1.ConfigMap{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("ca-cluster ConfigMap after deletion: %v, want NotFound", err)
	}
	logged := 0
	for _, d := range env.Gardenlet.Deletions() {
		if d.UID == shoot.UID {
			logged++
			if d.RequestedAt.IsZero() || d.SeenAt.Before(d.RequestedAt) || d.Annotations["confirmation.gardener.cloud/deletion"] != "true" {
				t.Errorf("deletion log entry %+v: want the deletion time, a later sighting and the shoot's annotations", d)
			}
		}
	}
	if logged != 1 {
		t.Errorf("the gardenlet logged the deletion %d times, want once", logged)
	}
}

func confirmDeletion(t *testing.T, shoot *gardencorev1beta1.Shoot) {
	t.Helper()
	patch := client.MergeFrom(shoot.DeepCopy())
	metav1.SetMetaDataAnnotation(&shoot.ObjectMeta, "confirmation.gardener.cloud/deletion", "true")
	if err := env.GardenClient.Patch(context.Background(), shoot, patch); err != nil {
		t.Fatal(err)
	}
}

func TestFaultInjection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	annotate := func(kv ...string) func(*gardencorev1beta1.Shoot) {
		return func(s *gardencorev1beta1.Shoot) {
			noServer(s)
			for i := 0; i < len(kv); i += 2 {
				s.Annotations[kv[i]] = kv[i+1]
			}
		}
	}
	t.Run("non-retryable code fails the creation", func(t *testing.T) {
		t.Parallel()
		shoot := createShoot(t, "quota", annotate(gardenlet.AnnotationFailWith, "ERR_INFRA_QUOTA_EXCEEDED"))
		shoot = waitForOperation(t, shoot, gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateFailed)
		if len(shoot.Status.LastErrors) != 1 || !slices.Equal(shoot.Status.LastErrors[0].Codes, []gardencorev1beta1.ErrorCode{"ERR_INFRA_QUOTA_EXCEEDED"}) {
			t.Errorf("lastErrors = %v", shoot.Status.LastErrors)
		}
		// Removing the fault lets the next attempt succeed (as a retry would in Gardener).
		patch := client.MergeFrom(shoot.DeepCopy())
		delete(shoot.Annotations, gardenlet.AnnotationFailWith)
		if err := env.GardenClient.Patch(ctx, shoot, patch); err != nil {
			t.Fatal(err)
		}
		waitForOperation(t, shoot, gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateSucceeded)
	})
	t.Run("retryable code ends in Error", func(t *testing.T) {
		t.Parallel()
		shoot := createShoot(t, "retryable", annotate(gardenlet.AnnotationFailWith, "ERR_RETRYABLE_INFRA_DEPENDENCIES", gardenlet.AnnotationFailMessage, "too many requests"))
		shoot = waitForOperation(t, shoot, gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateError)
		if !strings.Contains(shoot.Status.LastOperation.Description, "too many requests") {
			t.Errorf("description = %q", shoot.Status.LastOperation.Description)
		}
	})
	t.Run("fault only for reconcile", func(t *testing.T) {
		t.Parallel()
		shoot := createShoot(t, "reconcilefail", annotate(gardenlet.AnnotationFailWith, "ERR_INFRA_UNAUTHORIZED", gardenlet.AnnotationFailOperation, "Reconcile"))
		shoot = waitForOperation(t, shoot, gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateSucceeded)
		shoot.Spec.Provider.Workers[0].Maximum = 4
		if err := env.GardenClient.Update(ctx, shoot); err != nil {
			t.Fatal(err)
		}
		waitForOperation(t, shoot, gardencorev1beta1.LastOperationTypeReconcile, gardencorev1beta1.LastOperationStateFailed)
	})
	t.Run("stuck deletion", func(t *testing.T) {
		t.Parallel()
		shoot := createShoot(t, "stuck", annotate(gardenlet.AnnotationStuckDeletion, "true", gardenlet.AnnotationDuration, "0s"))
		shoot = waitForOperation(t, shoot, gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateSucceeded)
		confirmDeletion(t, shoot)
		if err := env.GardenClient.Delete(ctx, shoot); err != nil {
			t.Fatal(err)
		}
		waitForOperation(t, shoot, gardencorev1beta1.LastOperationTypeDelete, gardencorev1beta1.LastOperationStateProcessing)
		// Un-sticking it lets the deletion finish.
		shoot = getShoot(t, shoot)
		patch := client.MergeFrom(shoot.DeepCopy())
		delete(shoot.Annotations, gardenlet.AnnotationStuckDeletion)
		if err := env.GardenClient.Patch(ctx, shoot, patch); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 30*time.Second, "stuck shoot gone after un-sticking", func() (bool, string) {
			err := env.GardenClient.Get(ctx, client.ObjectKeyFromObject(shoot), &gardencorev1beta1.Shoot{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
	})
}

func TestRuntimeConfigWithoutServer(t *testing.T) {
	_, err := env.RuntimeConfig("garden-kyma", "does-not-exist")
	if !errors.Is(err, runtimeapi.ErrNoServer) {
		t.Errorf("err = %v, want ErrNoServer", err)
	}
}

func TestSecondStartInOneProcessFailsCleanly(t *testing.T) {
	_, err := gardenbox.Start(context.Background(), gardenbox.Options{})
	if !errors.Is(err, gardenbox.ErrOncePerProcess) {
		t.Errorf("second Start = %v, want ErrOncePerProcess", err)
	}
}
