package runtimeconfig

import (
	"bytes"
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// ProvisioningInfo is the document in the kyma-provisioning-info ConfigMap (key details): a contract with the
// components that read it, documented in docs/runtime-configuration.md. Keys of the previous infrastructure manager
// keep their names and meaning; empty optional values are left out. Field order is the document's order.
type ProvisioningInfo struct {
	WorkerPools           WorkerPools `yaml:"workerPools"`
	GlobalAccountID       string      `yaml:"globalAccountID,omitempty"`
	SubaccountID          string      `yaml:"subaccountID,omitempty"`
	EnvironmentInstanceID string      `yaml:"environmentInstanceID,omitempty"`
	// InstanceID is the previous infrastructure manager's name of the same value (KEB's instance ID): it wrote both.
	InstanceID     string         `yaml:"instanceID,omitempty"`
	InstanceName   string         `yaml:"instanceName,omitempty"`
	RuntimeID      string         `yaml:"runtimeID"`
	ShootName      string         `yaml:"shootName"`
	Provider       string         `yaml:"provider"`
	Region         string         `yaml:"region"`
	PlatformRegion string         `yaml:"platformRegion,omitempty"`
	SeedRegion     string         `yaml:"seedRegion,omitempty"`
	Infrastructure Infrastructure `yaml:"infrastructure"`
	// InfrastructureConfig is the shoot's provider infrastructure config, verbatim (as a YAML mapping), as the
	// previous infrastructure manager wrote it; absent when the shoot has none (yet).
	InfrastructureConfig any            `yaml:"infrastructureConfig,omitempty"`
	NetworkDetails       NetworkDetails `yaml:"networkDetails"`
	// LastReconcileTime is when Gardener last finished an operation on the shoot successfully (RFC 3339, UTC);
	// absent until the first one. It comes from the shoot, not the clock, so an unchanged shoot keeps the document.
	LastReconcileTime string `yaml:"lastReconcileTime,omitempty"`
}

// WorkerPools splits the pools into the one Kyma runs on (spec.shoot.provider.workers[0]) and the customer's.
type WorkerPools struct {
	Kyma   WorkerPool   `yaml:"kyma"`
	Custom []WorkerPool `yaml:"custom,omitempty"`
}

// WorkerPool is what consumers need to know of a pool.
type WorkerPool struct {
	Name        string `yaml:"name"`
	MachineType string `yaml:"machineType"`
	// HAZones is true for pools spread over an odd number of at least three zones.
	HAZones       bool  `yaml:"haZones"`
	AutoScalerMin int32 `yaml:"autoScalerMin"`
	AutoScalerMax int32 `yaml:"autoScalerMax"`
}

// Infrastructure holds the cluster's CIDRs and the subnets of each zone as the shoot's infrastructure has them.
type Infrastructure struct {
	Nodes    string `yaml:"nodes"`
	Pods     string `yaml:"pods"`
	Services string `yaml:"services"`
	Zones    []Zone `yaml:"zones,omitempty"`
}

// Zone is one zone of the infrastructure with its subnets (aws: workers, public, internal; azure: one; alicloud: one).
type Zone struct {
	Name  string   `yaml:"name"`
	CIDRs []string `yaml:"cidrs"`
}

// NetworkDetails are network facts components adapt to (istio reads dualStackIPEnabled).
type NetworkDetails struct {
	DualStackIPEnabled bool          `yaml:"dualStackIPEnabled"`
	KubeAPIServer      KubeAPIServer `yaml:"kubeAPIServer,omitempty"`
}

// KubeAPIServer holds the customer's API server ACL (spec.shoot.kubernetes.kubeAPIServer.acl.allowedCIDRs).
type KubeAPIServer struct {
	ACL []string `yaml:"acl,omitempty"`
}

// highAvailability is the previous system's rule for haZones.
func highAvailability(zones []string) bool { return len(zones) >= 3 && len(zones)%2 == 1 }

// Render encodes the document as YAML (two-space indentation, the fields in declaration order): equal documents
// render to equal bytes. The reconcile time, the last key, is rendered apart from the rest (renderParts), so that
// a document that differs only in it reuses the rest (Desired.AtReconcileTime): every Gardener success changes it.
func (p ProvisioningInfo) Render() (string, error) {
	body, tail, err := p.renderParts()
	return body + tail, err
}

// renderParts returns the document without its lastReconcileTime line, and that line ("" when the time is unknown).
// A top-level block mapping is its keys' lines one after the other, so the two parts concatenated are the document
// a single encoding writes (TestRenderedInPartsIsRenderedAtOnce).
func (p ProvisioningInfo) renderParts() (body, tail string, err error) {
	t := p.LastReconcileTime
	p.LastReconcileTime = ""
	if body, err = encodeYAML(p); err != nil {
		return "", "", err
	}
	tail, err = renderReconcileTime(t)
	return body, tail, err
}

// renderReconcileTime is the lastReconcileTime line of the document for t (formatted by formatTime); "" for "".
// It changes with every Gardener success, so every such pass renders it: a time as formatTime writes it is written
// here as the encoder writes it (double-quoted: it would read as a timestamp), without an encoder's allocations
// (TestReconcileTimeLineIsWhatTheEncoderWrites); anything else goes through the encoder.
func renderReconcileTime(t string) (string, error) {
	if t == "" {
		return "", nil
	}
	if parsed, err := time.Parse(time.RFC3339, t); err == nil && formatTime(parsed) == t {
		return reconcileTimeKey + `: "` + t + "\"\n", nil
	}
	return encodeYAML(reconcileTimeLine{t})
}

const reconcileTimeKey = "lastReconcileTime"

// reconcileTimeLine is the document's last key alone.
type reconcileTimeLine struct {
	LastReconcileTime string `yaml:"lastReconcileTime"`
}

func encodeYAML(v any) (string, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("render %s: %w", ProvisioningInfoName, err)
	}
	if err := enc.Close(); err != nil {
		return "", fmt.Errorf("render %s: %w", ProvisioningInfoName, err)
	}
	return buf.String(), nil
}

// formatTime writes a time as the document does (RFC 3339, UTC, seconds); zero is empty.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
