package translate

// Minimal copies of the provider extensions' configuration shapes (JSON field names as in each
// extension's v1alpha1 API). We define them here instead of importing the extension modules,
// which would pull their whole dependency trees into the operator.

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

const (
	kindInfrastructureConfig = "InfrastructureConfig"
	kindControlPlaneConfig   = "ControlPlaneConfig"
	kindWorkerConfig         = "WorkerConfig"

	awsAPIVersion       = "aws.provider.extensions.gardener.cloud/v1alpha1"
	azureAPIVersion     = "azure.provider.extensions.gardener.cloud/v1alpha1"
	gcpAPIVersion       = "gcp.provider.extensions.gardener.cloud/v1alpha1"
	openstackAPIVersion = "openstack.provider.extensions.gardener.cloud/v1alpha1"
	alicloudAPIVersion  = "alicloud.provider.extensions.gardener.cloud/v1alpha1"
	// The GDCH provider extension is not public; this is the group the production landscape's extension serves.
	gdchAPIVersion   = "gdch.provider.extensions.gardener.gdc.goog/v1alpha1"
	calicoAPIVersion = "calico.networking.extensions.gardener.cloud/v1alpha1"
	gvisorAPIVersion = "gvisor.runtime.extensions.config.gardener.cloud/v1alpha1"
)

type awsInfrastructureConfig struct {
	typeMeta  `json:",inline"`
	DualStack *struct {
		Enabled bool `json:"enabled"`
	} `json:"dualStack,omitempty"`
	Networks struct {
		VPC   vpcConfig `json:"vpc"`
		Zones []awsZone `json:"zones"`
	} `json:"networks"`
}

type awsControlPlaneConfig struct {
	typeMeta               `json:",inline"`
	LoadBalancerController *struct {
		Enabled bool `json:"enabled"`
	} `json:"loadBalancerController,omitempty"`
}

type awsZone struct {
	Name     string `json:"name"`
	Internal string `json:"internal"`
	Public   string `json:"public"`
	Workers  string `json:"workers"`
}

type awsWorkerConfig struct {
	typeMeta                `json:",inline"`
	InstanceMetadataOptions *awsInstanceMetadataOptions `json:"instanceMetadataOptions,omitempty"`
}

type awsInstanceMetadataOptions struct {
	HTTPTokens              string `json:"httpTokens,omitempty"`
	HTTPPutResponseHopLimit int64  `json:"httpPutResponseHopLimit,omitempty"`
}

type azureInfrastructureConfig struct {
	typeMeta `json:",inline"`
	Networks struct {
		VNet struct {
			CIDR string `json:"cidr,omitempty"`
		} `json:"vnet"`
		Workers string      `json:"workers,omitempty"` // legacy zone-less layout
		Zones   []azureZone `json:"zones,omitempty"`
	} `json:"networks"`
	Zoned bool `json:"zoned"`
}

type azureZone struct {
	Name       int32  `json:"name"`
	CIDR       string `json:"cidr"`
	NatGateway *struct {
		Enabled                      bool   `json:"enabled"`
		IdleConnectionTimeoutMinutes *int32 `json:"idleConnectionTimeoutMinutes,omitempty"`
	} `json:"natGateway,omitempty"`
}

type gcpInfrastructureConfig struct {
	typeMeta `json:",inline"`
	Networks struct {
		Workers string `json:"workers"`
	} `json:"networks"`
}

type gcpControlPlaneConfig struct {
	typeMeta `json:",inline"`
	Zone     string `json:"zone"`
}

type openstackInfrastructureConfig struct {
	typeMeta         `json:",inline"`
	FloatingPoolName string `json:"floatingPoolName"`
	Networks         struct {
		Workers string `json:"workers"`
	} `json:"networks"`
}

type openstackControlPlaneConfig struct {
	typeMeta             `json:",inline"`
	LoadBalancerProvider string `json:"loadBalancerProvider"`
}

type alicloudInfrastructureConfig struct {
	typeMeta `json:",inline"`
	Networks struct {
		VPC   vpcConfig      `json:"vpc"`
		Zones []alicloudZone `json:"zones"`
	} `json:"networks"`
}

type alicloudZone struct {
	Name    string `json:"name"`
	Worker  string `json:"worker,omitempty"` // deprecated by the extension, read for old shoots
	Workers string `json:"workers,omitempty"`
}

// vpcConfig is the VPC of the aws and alicloud infrastructure configs: an existing one by ID or a new one by CIDR.
type vpcConfig struct {
	ID   string `json:"id,omitempty"`
	CIDR string `json:"cidr,omitempty"`
}

type gdchInfrastructureConfig struct {
	typeMeta     `json:",inline"`
	EnableEgress bool `json:"enableEgress"`
	Networks     struct {
		NodeCIDR        string     `json:"nodeCIDR"`
		Zones           []gdchZone `json:"zones"`
		ParentReference struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace,omitempty"`
			Type      string `json:"type,omitempty"`
		} `json:"parentReference"`
	} `json:"networks"`
}

type gdchZone struct {
	Name string `json:"name"`
	CIDR string `json:"CIDR"` // upper case in the extension's API
}

// calicoNetworkConfig is the calico NetworkConfig the operator sets: the VXLAN overlay.
type calicoNetworkConfig struct {
	typeMeta `json:",inline"`
	Overlay  *struct {
		Enabled bool `json:"enabled"`
	} `json:"overlay,omitempty"`
	VXLAN *struct {
		Enabled bool `json:"enabled"`
	} `json:"vxlan,omitempty"`
}

// gvisorConfiguration is gVisor's container runtime config.
type gvisorConfiguration struct {
	typeMeta    `json:",inline"`
	ConfigFlags map[string]string `json:"configFlags,omitempty"`
}
