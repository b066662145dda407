package translate

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// IMDSv2 settings: tokens required, and a hop limit that lets pods reach the metadata service.
const (
	imdsHTTPTokensRequired = "required"
	imdsHopLimit           = 2
)

// infrastructureConfig renders the provider's InfrastructureConfig.
func infrastructureConfig(p shoot.ProviderSpec) (*runtime.RawExtension, error) {
	infra := p.Infrastructure
	var obj any
	switch {
	case infra.AWS != nil:
		c := awsInfrastructureConfig{typeMeta: typeMeta{awsAPIVersion, kindInfrastructureConfig}}
		if infra.AWS.DualStack {
			c.DualStack = &struct {
				Enabled bool `json:"enabled"`
			}{Enabled: true}
		}
		c.Networks.VPC.CIDR = infra.AWS.VPCCIDR
		c.Networks.Zones = []awsZone{}
		for _, z := range infra.AWS.Zones {
			c.Networks.Zones = append(c.Networks.Zones, awsZone{Name: z.Name, Workers: z.Workers, Public: z.Public, Internal: z.Internal})
		}
		obj = c
	case infra.Azure != nil:
		c := azureInfrastructureConfig{typeMeta: typeMeta{azureAPIVersion, kindInfrastructureConfig}, Zoned: infra.Azure.Zoned}
		c.Networks.VNet.CIDR = infra.Azure.VNetCIDR
		for _, z := range infra.Azure.Zones {
			az := azureZone{Name: z.Name, CIDR: z.CIDR}
			if z.NATGatewayEnabled {
				timeout := z.NATIdleTimeoutMinutes
				az.NatGateway = &struct {
					Enabled                      bool   `json:"enabled"`
					IdleConnectionTimeoutMinutes *int32 `json:"idleConnectionTimeoutMinutes,omitempty"`
				}{Enabled: true, IdleConnectionTimeoutMinutes: &timeout}
			}
			c.Networks.Zones = append(c.Networks.Zones, az)
		}
		obj = c
	case infra.GCP != nil:
		c := gcpInfrastructureConfig{typeMeta: typeMeta{gcpAPIVersion, kindInfrastructureConfig}}
		c.Networks.Workers = infra.GCP.WorkersCIDR
		obj = c
	case infra.OpenStack != nil:
		c := openstackInfrastructureConfig{typeMeta: typeMeta{openstackAPIVersion, kindInfrastructureConfig}, FloatingPoolName: infra.OpenStack.FloatingPoolName}
		c.Networks.Workers = infra.OpenStack.WorkersCIDR
		obj = c
	case infra.Alicloud != nil:
		c := alicloudInfrastructureConfig{typeMeta: typeMeta{alicloudAPIVersion, kindInfrastructureConfig}}
		c.Networks.VPC.CIDR = infra.Alicloud.VPCCIDR
		c.Networks.Zones = []alicloudZone{}
		for _, z := range infra.Alicloud.Zones {
			c.Networks.Zones = append(c.Networks.Zones, alicloudZone{Name: z.Name, Workers: z.Workers})
		}
		obj = c
	case infra.GDCH != nil:
		c := gdchInfrastructureConfig{typeMeta: typeMeta{gdchAPIVersion, kindInfrastructureConfig}, EnableEgress: infra.GDCH.EnableEgress}
		c.Networks.NodeCIDR = infra.GDCH.NodeCIDR
		c.Networks.Zones = []gdchZone{}
		for _, z := range infra.GDCH.Zones {
			c.Networks.Zones = append(c.Networks.Zones, gdchZone{Name: z.Name, CIDR: z.CIDR})
		}
		ref := infra.GDCH.ParentReference
		c.Networks.ParentReference.Name, c.Networks.ParentReference.Namespace, c.Networks.ParentReference.Type = ref.Name, ref.Namespace, ref.Type
		obj = c
	default:
		return nil, fmt.Errorf("no infrastructure for provider %q", p.Type)
	}
	return raw(obj)
}

// controlPlaneConfig renders the provider's ControlPlaneConfig.
func controlPlaneConfig(p shoot.ProviderSpec) (*runtime.RawExtension, error) {
	switch p.Type {
	case shoot.AWS:
		c := awsControlPlaneConfig{typeMeta: typeMeta{awsAPIVersion, kindControlPlaneConfig}}
		if p.ControlPlane.AWSLoadBalancerController {
			c.LoadBalancerController = &struct {
				Enabled bool `json:"enabled"`
			}{Enabled: true}
		}
		return raw(c)
	case shoot.Azure:
		return raw(typeMeta{azureAPIVersion, kindControlPlaneConfig})
	case shoot.GCP:
		return raw(gcpControlPlaneConfig{typeMeta: typeMeta{gcpAPIVersion, kindControlPlaneConfig}, Zone: p.ControlPlane.GCPZone})
	case shoot.OpenStack:
		return raw(openstackControlPlaneConfig{typeMeta: typeMeta{openstackAPIVersion, kindControlPlaneConfig}, LoadBalancerProvider: p.ControlPlane.OpenStackLoadBalancerProvider})
	case shoot.Alicloud:
		return raw(typeMeta{alicloudAPIVersion, kindControlPlaneConfig})
	case shoot.GDCH:
		return raw(typeMeta{gdchAPIVersion, kindControlPlaneConfig})
	default:
		return nil, fmt.Errorf("no control plane config for provider %q", p.Type)
	}
}

// workerConfig renders a pool's WorkerConfig, or nil when the pool needs none.
func workerConfig(p shoot.Provider, w shoot.WorkerSpec) (*runtime.RawExtension, error) {
	if p != shoot.AWS || !w.IMDSv2 {
		return nil, nil
	}
	return raw(awsWorkerConfig{
		typeMeta:                typeMeta{awsAPIVersion, kindWorkerConfig},
		InstanceMetadataOptions: &awsInstanceMetadataOptions{HTTPTokens: imdsHTTPTokensRequired, HTTPPutResponseHopLimit: imdsHopLimit},
	})
}

func raw(obj any) (*runtime.RawExtension, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode provider config: %w", err)
	}
	return &runtime.RawExtension{Raw: b}, nil
}

// infrastructureZones reads the zones of a current infrastructure config, in order. It returns
// ok=false when the config cannot be read (then the caller keeps it untouched).
func infrastructureZones(provider string, ext *runtime.RawExtension) ([]shoot.CurrentZone, error) {
	if ext == nil || len(ext.Raw) == 0 {
		return nil, nil
	}
	var zones []shoot.CurrentZone
	switch shoot.Provider(provider) {
	case shoot.AWS:
		var c awsInfrastructureConfig
		if err := json.Unmarshal(ext.Raw, &c); err != nil {
			return nil, fmt.Errorf("decode aws infrastructure config: %w", err)
		}
		for _, z := range c.Networks.Zones {
			zones = append(zones, shoot.CurrentZone{Name: z.Name, CIDRs: []string{z.Workers, z.Public, z.Internal}})
		}
	case shoot.Azure:
		var c azureInfrastructureConfig
		if err := json.Unmarshal(ext.Raw, &c); err != nil {
			return nil, fmt.Errorf("decode azure infrastructure config: %w", err)
		}
		for _, z := range c.Networks.Zones {
			zones = append(zones, shoot.CurrentZone{Name: fmt.Sprint(z.Name), CIDRs: []string{z.CIDR}})
		}
	case shoot.Alicloud:
		var c alicloudInfrastructureConfig
		if err := json.Unmarshal(ext.Raw, &c); err != nil {
			return nil, fmt.Errorf("decode alicloud infrastructure config: %w", err)
		}
		for _, z := range c.Networks.Zones {
			cidr := z.Workers
			if cidr == "" {
				cidr = z.Worker
			}
			zones = append(zones, shoot.CurrentZone{Name: z.Name, CIDRs: []string{cidr}})
		}
	case shoot.GDCH:
		var c gdchInfrastructureConfig
		if err := json.Unmarshal(ext.Raw, &c); err != nil {
			return nil, fmt.Errorf("decode gdch infrastructure config: %w", err)
		}
		for _, z := range c.Networks.Zones {
			zones = append(zones, shoot.CurrentZone{Name: z.Name, CIDRs: []string{z.CIDR}})
		}
	}
	return zones, nil
}

// networkingConfig renders the calico NetworkConfig, or nil when the operator leaves calico's defaults.
func networkingConfig(n shoot.NetworkingSpec) (*runtime.RawExtension, error) {
	if !n.CalicoVXLAN {
		return nil, nil
	}
	c := calicoNetworkConfig{typeMeta: typeMeta{calicoAPIVersion, "NetworkConfig"}}
	c.Overlay = &struct {
		Enabled bool `json:"enabled"`
	}{Enabled: true}
	c.VXLAN = &struct {
		Enabled bool `json:"enabled"`
	}{Enabled: true}
	return raw(c)
}
