// Package config is the operator's versioned configuration file: its schema, defaults, a strict
// loader and a validator that names the offending key, so a bad file stops the manager at start-up.
package config

import (
	"encoding/json"
	"fmt"
	"time"
)

// Identity of the configuration file format.
const (
	APIVersion = "kim.kyma-project.io/v1alpha1"
	Kind       = "OperatorConfig"
)

// OperatorConfig is the whole configuration file.
type OperatorConfig struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Gardener   GardenerConfig `json:"gardener"`
	Shoot      ShootConfig    `json:"shoot"`
	Deletion   DeletionConfig `json:"deletion"`
}

// GardenerConfig locates the Gardener project.
type GardenerConfig struct {
	// Project is the Gardener project; shoots live in namespace garden-<project>.
	Project string `json:"project"`
}

// ShootConfig drives shoot generation.
type ShootConfig struct {
	DefaultKubernetesVersion string       `json:"defaultKubernetesVersion"`
	DefaultMachineImage      MachineImage `json:"defaultMachineImage"`
	// CloudProfiles maps provider (aws, azure, gcp, openstack, alicloud, gdch) to cloud profile name.
	CloudProfiles map[string]string `json:"cloudProfiles,omitempty"`
	DNS           DNSConfig         `json:"dns,omitempty"`
	AuditLog      AuditLogConfig    `json:"auditLog,omitempty"`
	Maintenance   MaintenanceConfig `json:"maintenance,omitempty"`
	// OIDC is the default issuer for runtimes without additional OIDC configuration.
	OIDC      *OIDCConfig     `json:"oidc,omitempty"`
	OpenStack OpenStackConfig `json:"openstack,omitempty"`
	Features  Features        `json:"features,omitempty"`
}

// MachineImage is an OS image; an empty version lets Gardener pick the newest of the cloud profile.
type MachineImage struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// DNSConfig gives every shoot the domain <shoot>.<domainPrefix> served by one provider.
type DNSConfig struct {
	DomainPrefix string `json:"domainPrefix,omitempty"`
	SecretName   string `json:"secretName,omitempty"`
	ProviderType string `json:"providerType,omitempty"`
}

// AuditLogConfig configures the shoot-auditlog-service extension.
type AuditLogConfig struct {
	Enabled             bool   `json:"enabled,omitempty"`
	PolicyConfigMapName string `json:"policyConfigMapName,omitempty"`
	SecretName          string `json:"secretName,omitempty"`
	// MissingTenantIsError fails generation for a provider/region without tenant (default true).
	MissingTenantIsError *bool `json:"missingTenantIsError,omitempty"`
	// Tenants by provider, then region.
	Tenants map[string]map[string]AuditLogTenant `json:"tenants,omitempty"`
}

// AuditLogTenant is an audit log service endpoint.
type AuditLogTenant struct {
	TenantID   string `json:"tenantID"`
	ServiceURL string `json:"serviceURL"`
}

// MaintenanceConfig controls auto-updates and production maintenance windows.
type MaintenanceConfig struct {
	AutoUpdateKubernetesVersion   *bool `json:"autoUpdateKubernetesVersion,omitempty"`
	AutoUpdateMachineImageVersion *bool `json:"autoUpdateMachineImageVersion,omitempty"`
	// Windows by region, times "HHMMSS+ZZZZ".
	Windows map[string]TimeWindow `json:"windows,omitempty"`
}

// TimeWindow is a maintenance window.
type TimeWindow struct {
	Begin string `json:"begin"`
	End   string `json:"end"`
}

// OIDCConfig is an issuer in Gardener's old OIDC field names.
type OIDCConfig struct {
	IssuerURL      string   `json:"issuerURL"`
	ClientID       string   `json:"clientID"`
	UsernameClaim  string   `json:"usernameClaim,omitempty"`
	UsernamePrefix *string  `json:"usernamePrefix,omitempty"`
	GroupsClaim    string   `json:"groupsClaim,omitempty"`
	GroupsPrefix   *string  `json:"groupsPrefix,omitempty"`
	SigningAlgs    []string `json:"signingAlgs,omitempty"`
}

// OpenStackConfig holds OpenStack infrastructure settings.
type OpenStackConfig struct {
	FloatingPoolName     string `json:"floatingPoolName,omitempty"`
	LoadBalancerProvider string `json:"loadBalancerProvider,omitempty"`
}

// Features are switches for optional behaviour.
type Features struct {
	AWSIMDSv2       bool `json:"awsIMDSv2,omitempty"`
	DisableEUAccess bool `json:"disableEUAccess,omitempty"`
}

// DeletionConfig controls the grace window between deleting a Runtime and deleting its shoot.
type DeletionConfig struct {
	// DefaultGracePeriod is the window of plans without an override; "0s" deletes at once (unset: 72h).
	DefaultGracePeriod Duration `json:"defaultGracePeriod,omitempty"`
	// PlanGracePeriods overrides the default per KEB plan name.
	PlanGracePeriods map[string]Duration `json:"planGracePeriods,omitempty"`
	// MaxGracePeriod caps every window (data privacy); it must be positive (unset: 30 days).
	MaxGracePeriod Duration `json:"maxGracePeriod,omitempty"`
	// Freeze stops all shoot deletions (incident switch). The ConfigMap kim-deletion-guard (key frozen) is the
	// same switch without a restart.
	Freeze bool `json:"freeze,omitempty"`
	// ForceDeletionAfter is how long a deletion may be stuck with an error code Gardener accepts force-deletion
	// for before the operator sets confirmation.gardener.cloud/force-deletion; "0s" disables force-deletion (unset:
	// 6h).
	ForceDeletionAfter Duration `json:"forceDeletionAfter,omitempty"`
	// Budget is the deletion circuit breaker: at most limit shoot deletions per period.
	Budget DeletionBudget `json:"budget,omitempty"`
	// MaxClockAhead is how far the operator's clock may run ahead of the garden API server's before deletions
	// stop (unset: 2m).
	MaxClockAhead Duration `json:"maxClockAhead,omitempty"`
}

// DeletionBudget is the deletion circuit breaker's limit.
type DeletionBudget struct {
	// Limit is the number of shoot deletions allowed per period (unset: 100; 0 is rejected: use the brake).
	Limit *int `json:"limit,omitempty"`
	// Period is the breaker's period (unset: 1h).
	Period Duration `json:"period,omitempty"`
}

// Duration is a time.Duration written as a Go duration string ("24h", "90m").
type Duration struct {
	time.Duration
	// set is true when the value came from the file, so "0s" and "unset" can mean different things.
	set bool
}

// Set returns a Duration of d that counts as configured.
func Set(d time.Duration) Duration { return Duration{Duration: d, set: true} }

// IsSet reports whether the value was configured (also when it is zero).
func (d Duration) IsSet() bool { return d.set }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string like \"24h\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("invalid duration %q: %w", s, err)
	}
	d.Duration, d.set = v, true
	return nil
}

// MarshalJSON writes a duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }
