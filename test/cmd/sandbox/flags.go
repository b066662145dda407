package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/kyma-project/kim/operator/app"
	"github.com/kyma-project/kim/test/sandbox/catalogue"
	"github.com/kyma-project/kim/test/sandbox/faultproxy"
	"github.com/kyma-project/kim/test/sandbox/gardenlet"
	"github.com/kyma-project/kim/test/sandbox/runtimeapi"
)

// sandboxFlags are the settings of the sandbox command.
type sandboxFlags struct {
	dir           string
	exitWhenReady bool
	timeout       time.Duration
	noSamples     bool
	samplesDir    string
	crdDir        string
	runtimeMode   string
	verbose       bool
	gardenFaults  float64
	gardenlet     gardenlet.Options
	operator      app.Options
}

// sandboxOperatorDefaults are the operator settings that make the sandbox watchable in minutes: kubeconfigs
// valid for Gardener's minimum of 10 minutes (rotated after 6), deleted runtimes kept hibernated for 2 minutes (the
// credentials binding a sibling runtime still names held dirty for 1 of them: --binding-release-hold), no leader
// election and no probes; metrics served as in production (HTTPS, token required) on localhost only.
func sandboxOperatorDefaults() app.Options {
	o := app.DefaultOptions()
	o.KubeconfigValidity = 10 * time.Minute
	o.KubeconfigRotationFraction = 0.6
	o.DeletionGracePeriod = 2 * time.Minute
	// A sibling's credentials binding comes back to its global account within the (short) window.
	o.BindingReleaseHold = time.Minute
	// The seeded catalogue's project; sandboxConfig uses the same.
	o.GardenerProject = catalogue.Default().Project
	o.LeaderElection = false
	o.MetricsAddr = "127.0.0.1:8443"
	o.ProbeAddr = "0"
	o.RuntimeWorkers, o.GardenerClusterWorkers = 5, 5
	return o
}

// bindSandboxFlags registers the sandbox's flags, and every operator flag with sandbox defaults, on fs.
func bindSandboxFlags(fs *flag.FlagSet) *sandboxFlags {
	f := &sandboxFlags{operator: sandboxOperatorDefaults(), gardenlet: gardenlet.Defaults()}
	fs.StringVar(&f.dir, "dir", ".sandbox", "directory for kcp.kubeconfig, garden.kubeconfig, ready and logs")
	fs.BoolVar(&f.exitWhenReady, "exit-when-ready", false, "exit 0 once every sample is Ready (non-zero on failure or timeout)")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Minute, "with --exit-when-ready: give up after this long")
	fs.BoolVar(&f.noSamples, "no-samples", false, "start empty: do not apply the samples")
	fs.StringVar(&f.samplesDir, "samples", "config/samples", "directory of the sample manifests to apply")
	fs.StringVar(&f.crdDir, "crds", "config/crd/bases", "directory of the operator's CRDs")
	fs.StringVar(&f.runtimeMode, "runtime-api-servers", "shared", "API servers behind shoots: none, shared or per-shoot")
	fs.BoolVar(&f.verbose, "verbose", false, "also print the operator's log to the terminal (it always goes to DIR/operator.log)")
	fs.DurationVar(&f.gardenlet.CreateDuration, "shoot-create-duration", f.gardenlet.CreateDuration, "simulated duration of a shoot creation")
	fs.DurationVar(&f.gardenlet.ReconcileDuration, "shoot-reconcile-duration", f.gardenlet.ReconcileDuration, "simulated duration of a shoot reconciliation")
	fs.DurationVar(&f.gardenlet.DeleteDuration, "shoot-delete-duration", f.gardenlet.DeleteDuration, "simulated duration of a shoot deletion")
	fs.StringVar(&f.gardenlet.FailWith, "shoot-fail-with", "", "make every shoot operation fail with these Gardener error codes (e.g. ERR_INFRA_QUOTA_EXCEEDED)")
	fs.Float64Var(&f.gardenFaults, "garden-faults", 0, "share (0..1) of the operator's garden requests answered 429/500/503 or held, and its watches dropped now and then (a fault proxy in front of the garden)")
	fs.BoolVar(&f.gardenlet.StuckDeletion, "shoot-stuck-deletion", false, "never finish shoot deletions")
	// Every operator flag (kubeconfig validity/rotation, deletion grace period, workers, ...) with sandbox defaults.
	f.operator.BindFlags(fs)
	return f
}

// validate checks the parsed flags.
func (f *sandboxFlags) validate() error {
	if _, err := runtimeapi.ParseMode(f.runtimeMode); err != nil {
		return fmt.Errorf("--runtime-api-servers: %w", err)
	}
	if err := (faultproxy.Options{Share: f.gardenFaults}).Validate(); err != nil {
		return fmt.Errorf("--garden-faults: %w", err)
	}
	return f.operator.Validate()
}
