package translate

import (
	"encoding/json"
	"fmt"
	"slices"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// Extension provider configuration shapes (JSON as each extension's API defines it).

type networkingFilterConfig struct {
	typeMeta     `json:",inline"`
	EgressFilter *struct {
		BlackholingEnabled bool `json:"blackholingEnabled"`
	} `json:"egressFilter,omitempty"`
}

// aclConfig is the acl extension's config; it has no apiVersion/kind.
type aclConfig struct {
	Rule aclRule `json:"rule"`
}

type aclRule struct {
	Action string   `json:"action"`
	Type   string   `json:"type"`
	CIDRs  []string `json:"cidrs"`
}

type auditlogConfig struct {
	typeMeta            `json:",inline"`
	Type                string `json:"type"`
	TenantID            string `json:"tenantID"`
	ServiceURL          string `json:"serviceURL"`
	SecretReferenceName string `json:"secretReferenceName"`
}

type registryConfig struct {
	typeMeta `json:",inline"`
	Caches   []registryCache `json:"caches"`
}

type registryCache struct {
	Upstream  string `json:"upstream"`
	RemoteURL string `json:"remoteURL,omitempty"`
	Volume    *struct {
		Size             string `json:"size,omitempty"`
		StorageClassName string `json:"storageClassName,omitempty"`
	} `json:"volume,omitempty"`
	GarbageCollection *struct {
		TTL string `json:"ttl"`
	} `json:"garbageCollection,omitempty"`
	SecretReferenceName string `json:"secretReferenceName,omitempty"`
	HighAvailability    *struct {
		Enabled bool `json:"enabled"`
	} `json:"highAvailability,omitempty"`
	Proxy *struct {
		HTTPProxy  string `json:"httpProxy,omitempty"`
		HTTPSProxy string `json:"httpsProxy,omitempty"`
	} `json:"proxy,omitempty"`
	HTTP *struct {
		TLS bool `json:"tls"`
	} `json:"http,omitempty"`
}

type dnsServiceConfig struct {
	typeMeta               `json:",inline"`
	DNSProviderReplication *struct {
		Enabled bool `json:"enabled"`
	} `json:"dnsProviderReplication,omitempty"`
	Providers                     []dnsServiceProvider `json:"providers,omitempty"`
	SyncProvidersFromShootSpecDNS bool                 `json:"syncProvidersFromShootSpecDNS"`
}

type dnsServiceProvider struct {
	Domains *struct {
		Include []string `json:"include,omitempty"`
	} `json:"domains,omitempty"`
	Credentials string `json:"credentials,omitempty"`
	Type        string `json:"type,omitempty"`
}

type certServiceConfig struct {
	typeMeta     `json:",inline"`
	ShootIssuers struct {
		Enabled bool `json:"enabled"`
	} `json:"shootIssuers"`
}

func extensions(in []shoot.Extension) ([]gardencorev1beta1.Extension, error) {
	out := make([]gardencorev1beta1.Extension, 0, len(in))
	for _, e := range in {
		if e.KeepCurrent {
			continue // the shoot's own stays (mergeExtensions); nothing to write
		}
		cfg, err := extensionConfig(e)
		if err != nil {
			return nil, fmt.Errorf("extension %s: %w", e.Type, err)
		}
		ext := gardencorev1beta1.Extension{Type: e.Type, ProviderConfig: cfg}
		if e.Disabled {
			disabled := true
			ext.Disabled = &disabled
		}
		out = append(out, ext)
	}
	return out, nil
}

func extensionConfig(e shoot.Extension) (*runtime.RawExtension, error) {
	switch c := e.Config.(type) {
	case nil:
		return nil, nil
	case shoot.NetworkingFilterConfig:
		if !c.Blackholing {
			return nil, nil
		}
		// The extension registers Configuration only in its config group and decodes strictly: any other
		// apiVersion fails its reconcile (checked against the extension's facts in providerconfig_facts_test.go).
		cfg := networkingFilterConfig{typeMeta: typeMeta{"shoot-networking-filter.extensions.config.gardener.cloud/v1alpha1", "Configuration"}}
		cfg.EgressFilter = &struct {
			BlackholingEnabled bool `json:"blackholingEnabled"`
		}{BlackholingEnabled: true}
		return raw(cfg)
	case shoot.ACLConfig:
		return raw(aclConfig{Rule: aclRule{Action: "ALLOW", Type: "remote_ip", CIDRs: c.AllowedCIDRs}})
	case shoot.AuditLogExtensionConfig:
		return raw(auditlogConfig{
			typeMeta: typeMeta{"service.auditlog.extensions.gardener.cloud/v1alpha1", "AuditlogConfig"},
			Type:     "standard", TenantID: c.TenantID, ServiceURL: c.ServiceURL, SecretReferenceName: c.SecretReferenceName,
		})
	case shoot.RegistryCacheConfig:
		return raw(registryCacheConfig(c))
	case shoot.DNSServiceConfig:
		cfg := dnsServiceConfig{
			typeMeta:                      typeMeta{"service.dns.extensions.gardener.cloud/v1alpha1", "DNSConfig"},
			SyncProvidersFromShootSpecDNS: c.SyncProvidersFromShootSpecDNS,
		}
		if c.ProviderReplication {
			cfg.DNSProviderReplication = &struct {
				Enabled bool `json:"enabled"`
			}{Enabled: true}
		}
		for _, p := range c.Providers {
			out := dnsServiceProvider{Credentials: p.Credentials, Type: p.Type}
			if len(p.Domains) > 0 {
				out.Domains = &struct {
					Include []string `json:"include,omitempty"`
				}{Include: p.Domains}
			}
			cfg.Providers = append(cfg.Providers, out)
		}
		return raw(cfg)
	case shoot.CertServiceConfig:
		cfg := certServiceConfig{typeMeta: typeMeta{"service.cert.extensions.gardener.cloud/v1alpha1", "CertConfig"}}
		cfg.ShootIssuers.Enabled = c.ShootIssuers
		return raw(cfg)
	default:
		return nil, fmt.Errorf("unknown extension config %T", e.Config)
	}
}

func registryCacheConfig(c shoot.RegistryCacheConfig) registryConfig {
	cfg := registryConfig{typeMeta: typeMeta{"registry.extensions.gardener.cloud/v1alpha3", "RegistryConfig"}}
	for _, rc := range c.Caches {
		out := registryCache{Upstream: rc.Upstream, RemoteURL: rc.RemoteURL, SecretReferenceName: rc.SecretReferenceName}
		if rc.VolumeSize != "" || rc.VolumeStorageClass != "" {
			out.Volume = &struct {
				Size             string `json:"size,omitempty"`
				StorageClassName string `json:"storageClassName,omitempty"`
			}{rc.VolumeSize, rc.VolumeStorageClass}
		}
		if rc.GarbageCollectionTTL != "" {
			out.GarbageCollection = &struct {
				TTL string `json:"ttl"`
			}{rc.GarbageCollectionTTL}
		}
		if rc.HighAvailability {
			out.HighAvailability = &struct {
				Enabled bool `json:"enabled"`
			}{true}
		}
		if rc.HTTPProxy != "" || rc.HTTPSProxy != "" {
			out.Proxy = &struct {
				HTTPProxy  string `json:"httpProxy,omitempty"`
				HTTPSProxy string `json:"httpsProxy,omitempty"`
			}{rc.HTTPProxy, rc.HTTPSProxy}
		}
		if rc.TLS != nil {
			out.HTTP = &struct {
				TLS bool `json:"tls"`
			}{*rc.TLS}
		}
		cfg.Caches = append(cfg.Caches, out)
	}
	return cfg
}

// dnsExtensionWithoutProviders: the shoot's shoot-dns-service extension has a configuration naming no provider.
func dnsExtensionWithoutProviders(s *gardencorev1beta1.Shoot) bool {
	i := slices.IndexFunc(s.Spec.Extensions, func(e gardencorev1beta1.Extension) bool { return e.Type == shoot.ExtensionDNS })
	if i < 0 || s.Spec.Extensions[i].ProviderConfig == nil {
		return false
	}
	var cfg struct {
		Providers []json.RawMessage `json:"providers"`
	}
	return json.Unmarshal(s.Spec.Extensions[i].ProviderConfig.Raw, &cfg) == nil && len(cfg.Providers) == 0
}
