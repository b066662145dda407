// Package previous turns a shoot this operator generates into the shoot the previous infrastructure manager
// rendered for the same Runtime, as far as its documented behaviour (../shared/design/PEERS.md, section 6, and its
// converter's extension rules) says they differ in form but not in meaning: the order of its extensions, the JSON
// its encoders wrote into providerConfigs, explicit "disabled: false", apiVersion/kind left out where the extension
// defaults them, "providers: null" of internal DNS, and the credentials resource shoot-dns-service's admission adds
// when it syncs the DNS providers. Adoption tests create shoots this way to prove adopting them changes nothing.
package previous

import (
	"encoding/json"
	"fmt"
	"slices"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// extensionOrder is the order in which the previous manager created a shoot's extensions; registry-cache came
// with its first update, so after them.
var extensionOrder = []string{"shoot-networking-filter", "shoot-cert-service", "shoot-dns-service", "shoot-oidc-service",
	"shoot-auditlog-service", "acl", "shoot-nvidia-openshell", "registry-cache"}

// Render rewrites s in place into the previous manager's rendering.
func Render(s *gardencorev1beta1.Shoot) error {
	slices.SortStableFunc(s.Spec.Extensions, func(a, b gardencorev1beta1.Extension) int {
		return rank(a.Type) - rank(b.Type)
	})
	for i := range s.Spec.Extensions {
		e := &s.Spec.Extensions[i]
		if e.Disabled == nil && e.Type != "shoot-cert-service" && e.Type != "shoot-dns-service" && e.Type != "shoot-auditlog-service" &&
			e.Type != "acl" {
			e.Disabled = ptr.To(false) // its networking filter, OIDC, NVIDIA and registry-cache extensions said so
		}
		var err error
		switch e.Type {
		case "shoot-networking-filter":
			err = rewrite(e, networkingFilter)
		case "shoot-cert-service":
			err = rewrite(e, cert)
		case "shoot-dns-service":
			err = rewrite(e, dnsService)
		}
		if err != nil {
			return fmt.Errorf("extension %s: %w", e.Type, err)
		}
	}
	return nil
}

func rank(t string) int {
	if i := slices.Index(extensionOrder, t); i >= 0 {
		return i
	}
	return len(extensionOrder)
}

// rewrite decodes e's providerConfig, maps it and stores the result as the previous encoder wrote it.
func rewrite(e *gardencorev1beta1.Extension, f func(map[string]any) any) error {
	if e.ProviderConfig == nil {
		return nil
	}
	var in map[string]any
	if err := json.Unmarshal(e.ProviderConfig.Raw, &in); err != nil {
		return err
	}
	raw, err := json.Marshal(f(in))
	if err != nil {
		return err
	}
	e.ProviderConfig = &runtime.RawExtension{Raw: raw}
	return nil
}

// networkingFilter: its Configuration with an empty TypeMeta (apiVersion and kind left out).
func networkingFilter(in map[string]any) any {
	return struct {
		EgressFilter any `json:"egressFilter,omitempty"`
	}{in["egressFilter"]}
}

// cert: its struct declared apiVersion, shootIssuers, kind in that order.
func cert(in map[string]any) any {
	return struct {
		APIVersion   any `json:"apiVersion"`
		ShootIssuers any `json:"shootIssuers,omitempty"`
		Kind         any `json:"kind"`
	}{in["apiVersion"], in["shootIssuers"], in["kind"]}
}

type dnsProvider struct {
	Domains     any `json:"domains,omitempty"`
	SecretName  any `json:"secretName,omitempty"`
	Credentials any `json:"credentials,omitempty"`
	Type        any `json:"type,omitempty"`
}

// dnsService: its DNSConfig, providers always written (null for internal DNS), each provider in its field order.
func dnsService(in map[string]any) any {
	var providers []dnsProvider
	list, _ := in["providers"].([]any)
	for _, item := range list {
		p, _ := item.(map[string]any)
		providers = append(providers, dnsProvider{Domains: p["domains"], SecretName: p["secretName"], Credentials: p["credentials"], Type: p["type"]})
	}
	return struct {
		APIVersion                    any           `json:"apiVersion"`
		Kind                          any           `json:"kind"`
		DNSProviderReplication        any           `json:"dnsProviderReplication,omitempty"`
		Providers                     []dnsProvider `json:"providers"`
		SyncProvidersFromShootSpecDNS any           `json:"syncProvidersFromShootSpecDNS,omitempty"`
	}{in["apiVersion"], in["kind"], in["dnsProviderReplication"], providers, in["syncProvidersFromShootSpecDNS"]}
}
