// Package app wires the operator: it builds the controller-runtime manager for the KCP cluster, a second cluster
// object for the Gardener project, and registers the controllers. The production binary (operator/cmd/manager) and
// the sandbox (test/cmd/sandbox) both start the operator through Run.
package app

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/internal/health"
	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/operator/controllers"
)

// Options are the operator's settings that are not part of the versioned configuration file.
type Options struct {
	// WatchNamespaces are the KCP namespaces whose Runtimes and GardenerClusters are reconciled.
	WatchNamespaces []string
	// GardenerProject overrides gardener.project of the configuration file when not empty; shoots live in namespace
	// garden-<project>. After ResolveConfig it holds the effective project.
	GardenerProject string
	// GardenerQPS and GardenerBurst limit the client of the garden cluster.
	GardenerQPS   float32
	GardenerBurst int
	// GardenerHealthInterval is how often kim_gardener_health probes the garden API server (0: every 30 s).
	GardenerHealthInterval time.Duration
	// ConfigFile is the path of the operator configuration file (shoot generation, deletion windows, project).
	// Empty: built-in defaults, which only suffice for managing kubeconfigs (no shoot generation).
	ConfigFile string
	// Config is the effective configuration: set it directly, or let ResolveConfig load ConfigFile. Controllers
	// read it; it is the one source of the settings it holds.
	Config *config.OperatorConfig

	// KubeconfigValidity is how long an issued admin kubeconfig is valid.
	KubeconfigValidity time.Duration
	// KubeconfigRotationFraction is the fraction of the validity after which the kubeconfig is rotated.
	KubeconfigRotationFraction float64
	// GardenerClusterWorkers is the number of concurrent GardenerCluster reconciles.
	GardenerClusterWorkers int
	// RuntimeWorkers is the number of concurrent Runtime reconciles.
	RuntimeWorkers int
	// ServiceAccountKubeconfigWorkers is the number of concurrent ServiceAccountKubeconfig reconciles.
	ServiceAccountKubeconfigWorkers int
	// DeletionGracePeriod overrides deletion.defaultGracePeriod of the configuration file when >= 0 (negative: keep
	// the file's value).
	DeletionGracePeriod time.Duration
	// BindingReleaseHold overrides deletion.bindingReleaseHold of the configuration file when >= 0 (negative: keep
	// the file's value; zero is refused).
	BindingReleaseHold time.Duration

	// MetricsAddr is the address of the metrics endpoint ("0" disables it).
	MetricsAddr string
	// MetricsSecure serves metrics over HTTPS with authentication and authorization.
	MetricsSecure bool
	// EnableHTTP2 lets the HTTPS metrics endpoint negotiate HTTP/2. Off by default: HTTP/2's stream reset and
	// flow-control weaknesses (CVE-2023-44487, CVE-2023-39325) cost an endpoint that only Prometheus scrapes nothing.
	EnableHTTP2 bool
	// MetricsCertDir holds the metrics endpoint's serving certificate (MetricsCertName) and key (MetricsKeyName),
	// reloaded when they change; without them the endpoint serves a self-signed certificate made at start.
	MetricsCertDir, MetricsCertName, MetricsKeyName string
	// ProbeAddr is the address of the health and readiness probes ("0" disables them).
	ProbeAddr string
	// PprofAddr is the address of Go's profiling endpoints under /debug/pprof/ ("0" or empty disables them): heap
	// profiles are how the fleet's memory is attributed (docs/operations/scale.md).
	PprofAddr string
	// LeaderElection makes only one replica active.
	LeaderElection bool
	// LeaderElectionNamespace is where the leader lease lives (default: the first watched namespace).
	LeaderElectionNamespace string
	// Controllers names the controllers to run (controllers.Names); empty: all of them.
	Controllers []string
	// SkipNameValidation lets an operator start again in the same process (tests restart it; controller-runtime
	// refuses duplicate controller names otherwise). Not a flag.
	SkipNameValidation bool
	// LegacyMetrics serves the previous infrastructure manager's metrics from the manager's cache (manager flag
	// --legacy-metrics): LegacyMetricsLow or LegacyMetricsFull; empty: not served.
	LegacyMetrics string
}

// DefaultOptions returns the production defaults.
func DefaultOptions() Options {
	return Options{
		WatchNamespaces:                 []string{"kcp-system"},
		GardenerQPS:                     50,
		GardenerBurst:                   100,
		GardenerHealthInterval:          health.DefaultInterval,
		KubeconfigValidity:              24 * time.Hour,
		KubeconfigRotationFraction:      0.6,
		GardenerClusterWorkers:          25,
		RuntimeWorkers:                  25,
		ServiceAccountKubeconfigWorkers: 5,
		DeletionGracePeriod:             -1,
		BindingReleaseHold:              -1,
		MetricsAddr:                     ":8443",
		MetricsSecure:                   true,
		MetricsCertName:                 "tls.crt",
		MetricsKeyName:                  "tls.key",
		ProbeAddr:                       ":8081",
		PprofAddr:                       "0",
		LeaderElection:                  true,
	}
}

// BindFlags registers the options as command-line flags with the current values as defaults. The manager also
// applies ApplyEnv to them, so each can be set by its environment variable KIM_<FLAG> (env.go).
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.Func("watch-namespaces", "comma-separated KCP namespaces to reconcile (default "+strings.Join(o.WatchNamespaces, ",")+")",
		func(v string) error {
			o.WatchNamespaces = splitList(v)
			return nil
		})
	fs.StringVar(&o.GardenerProject, "gardener-project", o.GardenerProject,
		"Gardener project (overrides gardener.project of --config); shoots live in garden-<project>")
	fs.Var(float32Value{&o.GardenerQPS}, "gardener-qps", "`number` of queries per second to the garden cluster")
	fs.IntVar(&o.GardenerBurst, "gardener-burst", o.GardenerBurst, "burst of queries to the garden cluster")
	fs.DurationVar(&o.GardenerHealthInterval, "gardener-health-interval", o.GardenerHealthInterval,
		"how often the garden API server's /healthz is probed for kim_gardener_health")
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "path of the operator configuration file")
	fs.DurationVar(&o.KubeconfigValidity, "kubeconfig-validity", o.KubeconfigValidity, "validity of issued admin kubeconfigs")
	fs.Float64Var(&o.KubeconfigRotationFraction, "kubeconfig-rotation-fraction", o.KubeconfigRotationFraction,
		"fraction of the validity after which a kubeconfig is rotated (0 < f < 1)")
	fs.IntVar(&o.GardenerClusterWorkers, "gardener-cluster-workers", o.GardenerClusterWorkers, "concurrent GardenerCluster reconciles")
	fs.IntVar(&o.RuntimeWorkers, "runtime-workers", o.RuntimeWorkers, "concurrent Runtime reconciles")
	fs.IntVar(&o.ServiceAccountKubeconfigWorkers, "serviceaccount-kubeconfig-workers", o.ServiceAccountKubeconfigWorkers,
		"concurrent ServiceAccountKubeconfig reconciles")
	fs.Var(unsetDuration{&o.DeletionGracePeriod}, "deletion-grace-period",
		"how long a deleted runtime's cluster stays hibernated before it is deleted, a `duration` (overrides deletion.defaultGracePeriod of the configuration; "+
			"not set or negative: the configuration's value)")
	fs.Var(unsetDuration{&o.BindingReleaseHold}, "binding-release-hold",
		"how long the dirty label on a deleted runtime's credentials binding stays while another shoot of its global account names the binding, a `duration` "+
			"(overrides deletion.bindingReleaseHold of the configuration; not set or negative: the configuration's value)")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr, "address of the metrics endpoint (0 disables it)")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure, "serve metrics over HTTPS with authentication and authorization")
	fs.BoolVar(&o.EnableHTTP2, "enable-http2", o.EnableHTTP2, "let the HTTPS metrics endpoint negotiate HTTP/2 (off: HTTP/1.1 only)")
	fs.StringVar(&o.MetricsCertDir, "metrics-cert-path", o.MetricsCertDir,
		"directory with the metrics endpoint's serving certificate and key (reloaded on change; empty or missing files: a self-signed certificate)")
	fs.StringVar(&o.MetricsCertName, "metrics-cert-name", o.MetricsCertName, "file name of the metrics serving certificate in --metrics-cert-path")
	fs.StringVar(&o.MetricsKeyName, "metrics-cert-key", o.MetricsKeyName, "file name of the metrics serving key in --metrics-cert-path")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", o.ProbeAddr, "address of the health probes (0 disables them)")
	fs.StringVar(&o.PprofAddr, "pprof-bind-address", o.PprofAddr,
		"address of the Go profiling endpoints /debug/pprof/ (0 disables them; never expose it beyond the pod)")
	fs.BoolVar(&o.LeaderElection, "leader-elect", o.LeaderElection, "enable leader election")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "namespace of the leader lease")
	fs.Func("controllers", "comma-separated controllers to run, of "+strings.Join(controllers.Names(), ", ")+" (default all)",
		func(v string) error {
			o.Controllers = splitList(v)
			_, err := controllers.Select(o.Controllers)
			return err
		})
}

// Validate reports every invalid option at once, naming the flag to fix.
func (o Options) Validate() error {
	var errs []error
	if len(o.WatchNamespaces) == 0 {
		errs = append(errs, errors.New("--watch-namespaces: at least one namespace is required"))
	}
	if o.GardenerProject == "" && (o.Config == nil || o.Config.Gardener.Project == "") {
		errs = append(errs, errors.New("no Gardener project: set gardener.project in the configuration file or --gardener-project"))
	}
	if o.GardenerQPS <= 0 || o.GardenerBurst <= 0 {
		errs = append(errs, errors.New("--gardener-qps and --gardener-burst must be positive"))
	}
	if o.GardenerHealthInterval < 0 {
		errs = append(errs, fmt.Errorf("--gardener-health-interval: %s must not be negative", o.GardenerHealthInterval))
	}
	if o.KubeconfigValidity < 10*time.Minute {
		errs = append(errs, fmt.Errorf("--kubeconfig-validity: %s is shorter than Gardener's minimum of 10m", o.KubeconfigValidity))
	}
	if o.KubeconfigRotationFraction <= 0 || o.KubeconfigRotationFraction >= 1 {
		errs = append(errs, fmt.Errorf("--kubeconfig-rotation-fraction: %g must be between 0 and 1 (exclusive)", o.KubeconfigRotationFraction))
	}
	if o.GardenerClusterWorkers < 1 || o.RuntimeWorkers < 1 || o.ServiceAccountKubeconfigWorkers < 1 {
		errs = append(errs, errors.New("--gardener-cluster-workers, --runtime-workers and --serviceaccount-kubeconfig-workers must be at least 1"))
	}
	return errors.Join(errs...)
}

// The effective configuration the controllers decide with, derived from the resolved configuration and the flags;
// the composition root puts each part into the Deps of the controllers that need it.

// shootConfig is the landscape's shoot configuration, in the Gardener project of the flags when the configuration
// names none.
func (o Options) shootConfig() shoot.Config {
	cfg := o.Config.ShootConfig()
	if cfg.Project == "" {
		cfg.Project = o.GardenerProject
	}
	return cfg
}

// deletionPolicy is the configured deletion policy; an invalid one is an error.
func (o Options) deletionPolicy() (deletion.Policy, error) {
	policy := o.Config.Deletion.DeletionPolicy()
	if err := policy.Validate(); err != nil {
		return deletion.Policy{}, fmt.Errorf("deletion policy: %w", err)
	}
	return policy, nil
}

// kubeconfigPolicy is the validity and rotation of the admin kubeconfigs (and the rotation of least-privilege ones).
func (o Options) kubeconfigPolicy() (kubeconfig.Policy, error) {
	kc, err := kubeconfig.NewPolicy(o.KubeconfigValidity, o.KubeconfigRotationFraction)
	if err != nil {
		return kubeconfig.Policy{}, fmt.Errorf("kubeconfig rotation policy: %w", err)
	}
	return kc, nil
}

// checkPolicies fails on a policy the configuration gets wrong before the manager is built (and Gardener asked).
func (o Options) checkPolicies() error {
	if _, err := o.deletionPolicy(); err != nil {
		return err
	}
	_, err := o.kubeconfigPolicy()
	return err
}

// identityAccess is the landscape's part of the no-escalation policy of ServiceAccountKubeconfigs.
func (o Options) identityAccess() sakubeconfig.AccessPolicy {
	identities := o.Config.ServiceAccountKubeconfigs
	return sakubeconfig.AccessPolicy{ClusterWideSecretsNamespaces: identities.ClusterWideSecretsNamespaces,
		SystemNamespaces: identities.SystemNamespaces, AllowedPowers: allowedPowers(identities.AllowedPowers),
		SharedNamespaces: identities.SharedNamespaces}
}

// allowedPowers converts the landscape's power allowances (validated at load) to the policy's.
func allowedPowers(in map[string][]string) map[string][]sakubeconfig.RefusalCode {
	out := make(map[string][]sakubeconfig.RefusalCode, len(in))
	for kcp, powers := range in {
		for _, p := range powers {
			out[kcp] = append(out[kcp], sakubeconfig.RefusalCode(p))
		}
	}
	return out
}

// GardenNamespace is the garden namespace of the configured project.
func (o Options) GardenNamespace() string { return wire.GardenNamespace(o.GardenerProject) }

// ResolveConfig loads the configuration file (unless Config is already set), applies the flag overrides and makes
// GardenerProject the effective project. A bad file is an error that names the key to fix.
func (o *Options) ResolveConfig() error {
	if o.Config == nil {
		if o.ConfigFile == "" {
			o.Config = &config.OperatorConfig{APIVersion: config.APIVersion, Kind: config.Kind}
			o.Config.Default()
		} else {
			cfg, err := config.Load(o.ConfigFile)
			if err != nil {
				return err
			}
			o.Config = cfg
		}
	}
	if o.GardenerProject != "" {
		o.Config.Gardener.Project = o.GardenerProject
	}
	o.GardenerProject = o.Config.Gardener.Project
	if o.DeletionGracePeriod >= 0 {
		// A flag never raises the data-privacy cap: a window above it is an error, not a silent new cap.
		if max := o.Config.Deletion.MaxGracePeriod.Duration; o.DeletionGracePeriod > max {
			return fmt.Errorf("--deletion-grace-period %s exceeds deletion.maxGracePeriod %s of the configuration (the data-privacy cap); raise the cap in the configuration file if that is intended",
				o.DeletionGracePeriod, max)
		}
		o.Config.Deletion.DefaultGracePeriod = config.Set(o.DeletionGracePeriod)
	}
	if o.BindingReleaseHold == 0 {
		return fmt.Errorf("--binding-release-hold must be positive: KEB's deprovisioning step of a deletion relies on the dirty label until it ran")
	}
	if o.BindingReleaseHold > 0 {
		o.Config.Deletion.BindingReleaseHold = config.Set(o.BindingReleaseHold)
	}
	return nil
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
