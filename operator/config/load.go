package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/domain/registrycache"
)

// Defaults of the optional settings.
const (
	DefaultDeletionGracePeriod    = 72 * time.Hour
	DefaultMaxDeletionGracePeriod = 30 * 24 * time.Hour
	// DefaultForceDeletionAfter is how long a deletion may be stuck before force-deletion is requested.
	DefaultForceDeletionAfter = 6 * time.Hour
	// DefaultDeletionBudget and DefaultDeletionBudgetPeriod size the circuit breaker for 10,000 runtimes.
	DefaultDeletionBudget       = 100
	DefaultDeletionBudgetPeriod = time.Hour
	// DefaultMaxClockAhead tolerates ordinary clock drift.
	DefaultMaxClockAhead = 2 * time.Minute
	// DefaultBindingReleaseHold is deletion.DefaultBindingReleaseHold: a little above KEB's one-hour wait.
	DefaultBindingReleaseHold = deletion.DefaultBindingReleaseHold
	// DefaultRegistryCacheSyncInterval is how often every runtime's RegistryCacheConfig objects are read.
	DefaultRegistryCacheSyncInterval = 60 * time.Minute
	// DefaultRegistryCacheWorkers is how many runtimes are synced at the same time.
	DefaultRegistryCacheWorkers = 5
	// DefaultWatcherGatewayPrincipal is the Istio principal of the default ingress gateway (istio-system).
	DefaultWatcherGatewayPrincipal = "cluster.local/ns/istio-system/sa/istio-ingressgateway-service-account"
	// Gardener's cleanup finalize grace periods the production landscape sets (seconds).
	// DefaultMachineDrainTimeout and DefaultMaxEvictRetries are what pools without their own values get: the previous
	// infrastructure manager's built-in values, which every shoot it created carries, so our shoots drain the same.
	DefaultMachineDrainTimeout = 15 * time.Minute
	DefaultMaxEvictRetries     = 2

	DefaultCleanupExtendedAPIs        = 120
	DefaultCleanupKubernetesResources = 120
	DefaultCleanupWebhooks            = 60
)

// Load reads, defaults and validates the configuration file at path.
func Load(path string) (*OperatorConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read operator config: %w", err)
	}
	cfg, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("operator config %s: %w", path, err)
	}
	return cfg, nil
}

// Parse decodes YAML or JSON strictly (unknown and duplicate keys are errors), applies defaults and validates.
func Parse(data []byte) (*OperatorConfig, error) {
	js, err := documentJSON(data)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var cfg OperatorConfig
	if err := dec.Decode(&cfg); err != nil {
		return nil, decodeError(err)
	}
	cfg.Default()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// decodeError names the key of a type mismatch; unknown keys already carry their name.
func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("%s: must be a %s, got %s", te.Field, te.Type, te.Value)
	}
	return err
}

// Default fills the optional settings.
func (c *OperatorConfig) Default() {
	// Only unset values get defaults: "0s" means what the domain says (delete at once, force-deletion off) or is
	// rejected by Validate (maxGracePeriod, the privacy cap, cannot be switched off).
	d := &c.Deletion
	for _, v := range []struct {
		d   *Duration
		def time.Duration
	}{{&d.DefaultGracePeriod, DefaultDeletionGracePeriod}, {&d.ForceDeletionAfter, DefaultForceDeletionAfter},
		{&d.MaxGracePeriod, DefaultMaxDeletionGracePeriod}, {&d.Budget.Period, DefaultDeletionBudgetPeriod},
		{&d.MaxClockAhead, DefaultMaxClockAhead}, {&d.BindingReleaseHold, DefaultBindingReleaseHold}} {
		if !v.d.IsSet() && v.d.Duration == 0 {
			*v.d = Set(v.def)
		}
	}
	if d.Budget.Limit == nil {
		limit := DefaultDeletionBudget
		d.Budget.Limit = &limit
	}
	rc := &c.RegistryCache
	for _, b := range []**bool{&rc.Enabled, &rc.CheckUpstreamDNS} {
		if *b == nil {
			v := true
			*b = &v
		}
	}
	if !rc.SyncInterval.IsSet() && rc.SyncInterval.Duration == 0 {
		rc.SyncInterval = Set(DefaultRegistryCacheSyncInterval)
	}
	if rc.Workers == 0 {
		rc.Workers = DefaultRegistryCacheWorkers
	}
	if rc.MaxConfigsPerRuntime == 0 {
		rc.MaxConfigsPerRuntime = registrycache.DefaultMaxConfigs
	}
	if rc.MaxListBytesPerRuntime == 0 {
		rc.MaxListBytesPerRuntime = registrycache.DefaultMaxListBytes
	}
	if rc.ListenerTrust.GatewayPrincipal == "" {
		rc.ListenerTrust.GatewayPrincipal = DefaultWatcherGatewayPrincipal
	}
	if w := &c.Shoot.Workers; w.MachineDrainTimeout == nil {
		d := Set(DefaultMachineDrainTimeout)
		w.MachineDrainTimeout = &d
	}
	if w := &c.Shoot.Workers; w.MaxEvictRetries == nil {
		v := int32(DefaultMaxEvictRetries)
		w.MaxEvictRetries = &v
	}
	if c.Shoot.AuditLog.Pool.Scope == "" {
		c.Shoot.AuditLog.Pool.Scope = PoolScopeNamespaced
	}
	if c.Shoot.AuditLog.MissingTenantIsError == nil {
		v := true
		c.Shoot.AuditLog.MissingTenantIsError = &v
	}
	g := &c.Shoot.CleanupGracePeriods
	for _, d := range []struct {
		v   **int64
		def int64
	}{{&g.ExtendedAPIs, DefaultCleanupExtendedAPIs}, {&g.KubernetesResources, DefaultCleanupKubernetesResources}, {&g.Webhooks, DefaultCleanupWebhooks}} {
		if *d.v == nil {
			v := d.def
			*d.v = &v
		}
	}
	c.Runtime.defaults()
	m := &c.Shoot.Maintenance
	if m.AutoUpdateKubernetesVersion == nil {
		v := true
		m.AutoUpdateKubernetesVersion = &v
	}
	if m.AutoUpdateMachineImageVersion == nil {
		v := true
		m.AutoUpdateMachineImageVersion = &v
	}
}
