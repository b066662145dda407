package gardenlet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kyma-project/kim/test/sandbox/runtimeapi"
)

// Names of the shoot CA objects the gardener-apiserver reads to issue admin kubeconfigs.
func caClientName(shoot string) string  { return shoot + ".ca-client" }
func caClusterName(shoot string) string { return shoot + ".ca-cluster" }

// ensureEndpoint makes sure the shoot has CA objects and an advertised kube-apiserver address (starting a
// runtime API server when the pool is configured to).
func (g *Gardenlet) ensureEndpoint(ctx context.Context, shoot *gardencorev1beta1.Shoot) error {
	key := shoot.Namespace + "/" + shoot.Name
	ep, err := g.runtime.Ensure(ctx, key, !strings.EqualFold(shoot.Annotations[AnnotationNoRuntimeAPIServer], "true"))
	if err != nil {
		return fmt.Errorf("runtime endpoint for shoot %s: %w", key, err)
	}
	secret := &gardencorev1beta1.InternalSecret{ObjectMeta: metav1.ObjectMeta{Name: caClientName(shoot.Name), Namespace: shoot.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, g.client, secret, func() error {
		secret.Labels = caLabels(secret.Labels, shoot.Name)
		secret.Data = map[string][]byte{"ca.crt": ep.CAs.Client.CertificatePEM, "ca.key": ep.CAs.Client.PrivateKeyPEM}
		return nil
	}); err != nil {
		return fmt.Errorf("write %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: caClusterName(shoot.Name), Namespace: shoot.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, g.client, cm, func() error {
		cm.Labels = caLabels(cm.Labels, shoot.Name)
		cm.Data = map[string]string{"ca.crt": string(ep.CAs.Cluster.CertificatePEM)}
		return nil
	}); err != nil {
		return fmt.Errorf("write %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	if err := g.serveOpenIDConnect(ctx, shoot, key); err != nil {
		return err
	}
	want := []gardencorev1beta1.ShootAdvertisedAddress{{Name: "external", URL: ep.URL}}
	if slices.Equal(shoot.Status.AdvertisedAddresses, want) {
		return nil
	}
	patch := client.MergeFrom(shoot.DeepCopy())
	shoot.Status.AdvertisedAddresses = want
	if err := g.client.Status().Patch(ctx, shoot, patch); err != nil {
		return fmt.Errorf("set advertised addresses of shoot %s: %w", key, err)
	}
	return nil
}

// serveOpenIDConnect plays the shoot-oidc-service extension: a shoot that enables it gets the OpenIDConnect CRD in
// its runtime API server (a shoot without a server has nothing to install into).
func (g *Gardenlet) serveOpenIDConnect(ctx context.Context, shoot *gardencorev1beta1.Shoot, key string) error {
	enabled := slices.ContainsFunc(shoot.Spec.Extensions, func(e gardencorev1beta1.Extension) bool {
		return e.Type == ExtensionOIDC && !ptr.Deref(e.Disabled, false)
	})
	if !enabled {
		return nil
	}
	if err := g.runtime.ServeOpenIDConnect(ctx, key); err != nil && !errors.Is(err, runtimeapi.ErrNoServer) {
		return fmt.Errorf("shoot %s: serve OpenIDConnect: %w", key, err)
	}
	return nil
}

// ExtensionOIDC is the extension type that serves OpenIDConnect resources inside a shoot.
const ExtensionOIDC = "shoot-oidc-service"

func caLabels(in map[string]string, shoot string) map[string]string {
	if in == nil {
		in = map[string]string{}
	}
	in["shoot.gardener.cloud/name"] = shoot
	return in
}

func (g *Gardenlet) deleteCAObjects(ctx context.Context, shoot *gardencorev1beta1.Shoot) error {
	for _, obj := range []client.Object{
		&gardencorev1beta1.InternalSecret{ObjectMeta: metav1.ObjectMeta{Name: caClientName(shoot.Name), Namespace: shoot.Namespace}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: caClusterName(shoot.Name), Namespace: shoot.Namespace}},
	} {
		if err := g.client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete %s: %w", obj.GetName(), err)
		}
	}
	return nil
}

// bind plays the gardener-scheduler: it picks a seed of the shoot's provider in its region (honouring
// spec.seedSelector) and binds the shoot through the shoots/binding subresource.
func (g *Gardenlet) bind(ctx context.Context, shoot *gardencorev1beta1.Shoot) error {
	seeds := &gardencorev1beta1.SeedList{}
	if err := g.client.List(ctx, seeds); err != nil {
		return fmt.Errorf("list seeds: %w", err)
	}
	selector := labels.Everything()
	if s := shoot.Spec.SeedSelector; s != nil {
		sel, err := metav1.LabelSelectorAsSelector(&s.LabelSelector)
		if err != nil {
			return fmt.Errorf("seed selector: %w", err)
		}
		selector = sel
	}
	var chosen *gardencorev1beta1.Seed
	for i := range seeds.Items {
		seed := &seeds.Items[i]
		if seed.Spec.Provider.Type != shoot.Spec.Provider.Type || !selector.Matches(labels.Set(seed.Labels)) {
			continue
		}
		if seed.Spec.Provider.Region == shoot.Spec.Region {
			chosen = seed
			break
		}
		if chosen == nil && shoot.Spec.SeedSelector == nil {
			chosen = seed
		}
	}
	if chosen == nil {
		return fmt.Errorf("no seed of provider %s matches region %s", shoot.Spec.Provider.Type, shoot.Spec.Region)
	}
	shoot.Spec.SeedName = ptr.To(chosen.Name)
	if err := g.client.SubResource("binding").Update(ctx, shoot); err != nil {
		shoot.Spec.SeedName = nil
		return fmt.Errorf("bind to seed %s: %w", chosen.Name, err)
	}
	return nil
}
