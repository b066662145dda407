package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kyma-project/kim/operator/config"
)

// previousFlags are the command-line flags of the previous infrastructure manager, so that the Helm values of its
// Deployment work unchanged after the switch (docs/operations/flags.md#flags-of-the-previous-infrastructure-manager).
// A flag with an equivalent sets it: a flag of this manager, or a key of the operator configuration (merged by the
// rules of config.Overlay: it fills the key or must agree with it). A flag without one (a feature that is always on,
// a controller this operator does not have) is accepted and ignored; a value this operator cannot honour is refused.
// Each use is a deprecation warning, logged at start.
type previousFlags struct {
	fs *flag.FlagSet
	// used maps a previous flag to its value, in the order given.
	used     map[string]string
	targets  map[string]string // previous name -> new name, for the flags with an equivalent
	warnings []string
	// kcpKubeconfig is --kubeconfig (controller-runtime's flag in the previous manager): the KCP connection.
	kcpKubeconfig string
	// converterFile is --converter-config-filepath: the previous converter configuration, mapped to the operator
	// configuration at start (config.LoadConverterConfig).
	converterFile string
	// config holds the configuration keys the previous flags with an equivalent there set (config.Overlay).
	config *config.Overlay
	// names are the previous flags bindPreviousFlags registered: accepted, but not shown by -h (usage).
	names []string
	// bootstrapper is --runtime-bootstrapper-enabled.
	bootstrapper bool
}

// bindPreviousFlags registers the previous names on fs. They are bound after the environment is applied: they have
// no KIM_* variables.
func bindPreviousFlags(fs *flag.FlagSet) *previousFlags {
	p := &previousFlags{fs: fs, used: map[string]string{}, targets: map[string]string{}, config: &config.Overlay{}}
	ours := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { ours[f.Name] = true })
	defer fs.VisitAll(func(f *flag.Flag) {
		if !ours[f.Name] {
			p.names = append(p.names, f.Name)
		}
	})
	fs.Func("gardener-project-name", "deprecated name of --gardener-project", p.forward("gardener-project-name", "gardener-project"))
	fs.Func("kubeconfig-expiration-time", "deprecated name of --kubeconfig-validity", p.forward("kubeconfig-expiration-time", "kubeconfig-validity"))
	fs.Func("minimal-rotation-time", "deprecated name of --kubeconfig-rotation-fraction", p.forward("minimal-rotation-time", "kubeconfig-rotation-fraction"))
	fs.Func("gardener-cluster-ctrl-workers-cnt", "deprecated name of --gardener-cluster-workers",
		p.forward("gardener-cluster-ctrl-workers-cnt", "gardener-cluster-workers"))
	fs.Func("runtime-ctrl-workers-cnt", "deprecated name of --runtime-workers", p.forward("runtime-ctrl-workers-cnt", "runtime-workers"))
	fs.Func("gardener-ratelimiter-qps", "deprecated name of --gardener-qps", p.forward("gardener-ratelimiter-qps", "gardener-qps"))
	fs.Func("gardener-ratelimiter-burst", "deprecated name of --gardener-burst", p.forward("gardener-ratelimiter-burst", "gardener-burst"))
	fs.Func("kubeconfig", "deprecated: the KCP kubeconfig file (use the KUBECONFIG variable)", func(v string) error {
		p.note("kubeconfig", v, "--kubeconfig is deprecated: set the KUBECONFIG variable (or run in the cluster)")
		p.kcpKubeconfig = v
		return nil
	})
	// The previous system spelt this flag so; its Helm values still do.
	const timeouts = "requests and reconciles are bounded by the operator itself"
	fs.Func("gardener-request-timeout", "deprecated, ignored: "+timeouts, p.ignore("gardener-request-timeout", timeouts))
	fs.Func("gardener-ctrl-reconcilation-timeout", "deprecated, ignored: "+timeouts, p.ignore("gardener-ctrl-reconcilation-timeout", timeouts)) //nolint:misspell // the previous flag's name
	fs.Func("status-requeue-delay", "deprecated, ignored: status writes do not requeue", p.ignore("status-requeue-delay", "status writes do not requeue"))
	fs.Func("converter-config-filepath", "deprecated: the previous converter configuration (JSON), mapped to the operator configuration",
		func(v string) error {
			p.note("converter-config-filepath", v, "--converter-config-filepath of the previous infrastructure manager is deprecated: "+
				"the file is read and mapped to the operator configuration (docs/operations/flags.md#the-converter-configuration); move its settings there")
			p.converterFile = v
			return nil
		})
	fs.BoolFunc("audit-log-mandatory", "deprecated: sets shoot.auditLog.missingTenantIsError of the configuration",
		p.toConfig("audit-log-mandatory", parseBool, "shoot", "auditLog", "missingTenantIsError"))
	fs.BoolFunc("api-server-acl-enabled", "deprecated: sets shoot.acl.enabled of the configuration",
		p.toConfig("api-server-acl-enabled", parseBool, "shoot", "acl", "enabled"))
	fs.BoolFunc("dedicated-audit-logging-enabled", "deprecated: sets shoot.auditLog.pool.enabled of the configuration",
		p.toConfig("dedicated-audit-logging-enabled", parseBool, "shoot", "auditLog", "pool", "enabled"))
	fs.BoolFunc("registry-cache-config-controller-enabled", "deprecated: sets registryCache.enabled of the configuration",
		p.toConfig("registry-cache-config-controller-enabled", parseBool, "registryCache", "enabled"))
	fs.Func("registry-cache-reconcile-period", "deprecated: sets registryCache.syncInterval of the configuration",
		p.toConfig("registry-cache-reconcile-period", parseDuration, "registryCache", "syncInterval"))
	fs.BoolFunc("network-restriction-enabled", "deprecated: sets shoot.features.disableNetworkingFilter of the configuration to its opposite",
		p.toConfig("network-restriction-enabled", parseNegatedBool, "shoot", "features", "disableNetworkingFilter"))
	fs.Func("registry-cache-listener-port", "deprecated: sets registryCache.listenerPort of the configuration",
		p.toConfig("registry-cache-listener-port", parsePort, "registryCache", "listenerPort"))
	fs.BoolFunc("structured-auth-enabled", "deprecated, ignored: structured authentication is always used",
		p.ignore("structured-auth-enabled", "structured authentication is always used"))
	fs.BoolFunc("shoot-spec-dump-enabled", "deprecated, ignored", p.ignore("shoot-spec-dump-enabled", "shoot specs are not dumped"))
	const notHere = "this operator has no such controller"
	fs.BoolFunc("custom-config-controller-enabled", "deprecated, ignored: "+notHere, p.ignore("custom-config-controller-enabled", notHere))
	// The runtime bootstrapper: off (the previous default), its settings had no effect there either; on, it is
	// refused at start (checkBootstrapper) rather than ignored.
	const bootstrapperOff = "it only configured the runtime bootstrapper, which --runtime-bootstrapper-enabled switches on"
	fs.BoolFunc("runtime-bootstrapper-enabled", "deprecated: true is refused (see docs/operations/migration.md#the-runtime-bootstrapper)",
		func(v string) error {
			on, err := strconv.ParseBool(v)
			if err != nil {
				return err
			}
			p.bootstrapper = on
			p.note("runtime-bootstrapper-enabled", v, "--runtime-bootstrapper-enabled of the previous infrastructure manager is deprecated: "+
				"false is this operator's default (no bootstrap unless runtime.bootstrap names manifests)")
			return nil
		})
	// Literal names: the documentation check reads the flags from the source (previousBootstrapperFlags lists them too).
	fs.Func("runtime-bootstrapper-manifests-config-map-name", "deprecated: "+bootstrapperOff, p.ignore("runtime-bootstrapper-manifests-config-map-name", bootstrapperOff))
	fs.Func("runtime-bootstrapper-kcp-config-name", "deprecated: "+bootstrapperOff, p.ignore("runtime-bootstrapper-kcp-config-name", bootstrapperOff))
	fs.Func("runtime-bootstrapper-skr-config-name", "deprecated: "+bootstrapperOff, p.ignore("runtime-bootstrapper-skr-config-name", bootstrapperOff))
	fs.Func("runtime-bootstrapper-kcp-pull-secret-name", "deprecated: "+bootstrapperOff, p.ignore("runtime-bootstrapper-kcp-pull-secret-name", bootstrapperOff))
	fs.Func("runtime-bootstrapper-skr-pull-secret-name", "deprecated: "+bootstrapperOff, p.ignore("runtime-bootstrapper-skr-pull-secret-name", bootstrapperOff))
	fs.Func("runtime-bootstrapper-kcp-cluster-trust-bundle", "deprecated: "+bootstrapperOff, p.ignore("runtime-bootstrapper-kcp-cluster-trust-bundle", bootstrapperOff))
	fs.Func("runtime-bootstrapper-skr-cluster-trust-bundle", "deprecated: "+bootstrapperOff, p.ignore("runtime-bootstrapper-skr-cluster-trust-bundle", bootstrapperOff))
	fs.Func("runtime-bootstrapper-skr-namespace", "deprecated: "+bootstrapperOff, p.ignore("runtime-bootstrapper-skr-namespace", bootstrapperOff))
	fs.Func("runtime-bootstrapper-skr-deployment-name", "deprecated: "+bootstrapperOff, p.ignore("runtime-bootstrapper-skr-deployment-name", bootstrapperOff))
	return p
}

func (p *previousFlags) note(name, value, warning string) {
	p.used[name] = value
	p.warnings = append(p.warnings, warning)
}

// forward sets target to the value of the previous flag name.
func (p *previousFlags) forward(name, target string) func(string) error {
	p.targets[name] = target
	return func(v string) error {
		p.note(name, v, fmt.Sprintf("--%s is the previous infrastructure manager's name of --%s and is deprecated; use --%s", name, target, target))
		if err := p.fs.Set(target, v); err != nil {
			return fmt.Errorf("(sets --%s) %w", target, err)
		}
		return nil
	}
}

// toConfig sets the configuration key path to the parsed value of the previous flag name.
func (p *previousFlags) toConfig(name string, parse func(string) (any, error), path ...string) func(string) error {
	return func(v string) error {
		value, err := parse(v)
		if err != nil {
			return err
		}
		key := strings.Join(path, ".")
		p.note(name, v, fmt.Sprintf("--%s of the previous infrastructure manager is deprecated: it sets %s of the operator configuration; set it there", name, key))
		p.config.State("--"+name+"="+v, value, path...)
		return nil
	}
}

func parseBool(v string) (any, error) { return strconv.ParseBool(v) }

// parseNegatedBool is the opposite of a boolean flag, for a flag that switched on what the configuration switches off.
func parseNegatedBool(v string) (any, error) {
	b, err := strconv.ParseBool(v)
	return !b, err
}

func parsePort(v string) (any, error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return nil, fmt.Errorf("not a port: %w", err)
	}
	return n, nil
}

func parseDuration(v string) (any, error) {
	if _, err := time.ParseDuration(v); err != nil {
		return nil, err
	}
	return v, nil
}

// previousConverterPath is the previous manager's default of --converter-config-filepath: its Deployment names no
// file and mounts its converter ConfigMap there (U:cmd/main.go, config/default/manager_converter_config_patch.yaml).
const previousConverterPath = "/converter-config/converter_config.json"

// converterFileExists reports whether the file at path is there (a variable for the tests).
var converterFileExists = func(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir()
}

// defaultConverterFile reads the previous manager's converter configuration from its default path, as that manager
// did when no flag named one, when the file is there: the previous Deployment, unchanged, names no configuration.
func (p *previousFlags) defaultConverterFile() {
	if !converterFileExists(previousConverterPath) {
		return
	}
	p.converterFile = previousConverterPath
	p.warnings = append(p.warnings, "no configuration named: the previous infrastructure manager's converter configuration "+
		previousConverterPath+" (its default path) is read and mapped to the operator configuration "+
		"(docs/operations/flags.md#the-converter-configuration); name the configuration with --config-map instead")
}

// previousDefaults records, when the previous manager's configuration is read (--converter-config-filepath), its
// defaults that differ from this operator's for the flags not given: such a Deployment never ran what they
// switched on. They only fill keys the configuration leaves out.
func (p *previousFlags) previousDefaults() {
	if p.converterFile == "" {
		return
	}
	if _, given := p.used["registry-cache-config-controller-enabled"]; !given {
		p.config.Default("the previous infrastructure manager's default of --registry-cache-config-controller-enabled (false)", false,
			"registryCache", "enabled")
	}
	if _, given := p.used["registry-cache-listener-port"]; !given {
		// The previous manager listened for the Runtime Watcher on 8082 whenever its registry cache controller ran.
		p.config.Default("the previous infrastructure manager's default of --registry-cache-listener-port (8082)", 8082,
			"registryCache", "listenerPort")
	}
}

// ignore accepts any value of the previous flag name.
func (p *previousFlags) ignore(name, why string) func(string) error {
	return func(v string) error {
		p.note(name, v, fmt.Sprintf("--%s of the previous infrastructure manager is deprecated and ignored: %s", name, why))
		return nil
	}
}

// previousBootstrapperFlags are the previous manager's runtime bootstrapper settings with their defaults
// (U:cmd/main.go) and what it did with each (U:internal/rtbootstrapper) that this operator does not do.
var previousBootstrapperFlags = []struct{ name, def, unsupported string }{
	{"runtime-bootstrapper-manifests-config-map-name", "runtime-bootstrapper-manifests",
		"its key manifests.yaml was applied with namespace-less objects placed in default; runtime.bootstrap.configMap applies every key, namespace-less objects in kyma-system"},
	{"runtime-bootstrapper-kcp-config-name", "rt-bootstrapper-config", "this KCP ConfigMap was copied into every runtime; this operator copies no ConfigMap"},
	{"runtime-bootstrapper-skr-config-name", "rt-bootstrapper-config", "the name of that copy"},
	{"runtime-bootstrapper-kcp-pull-secret-name", "", "this KCP pull secret was copied under another name; runtime.bootstrap.pullSecret keeps its name and needs the opt-in label"},
	{"runtime-bootstrapper-skr-pull-secret-name", "registry-credentials", "the name of that copy"},
	{"runtime-bootstrapper-kcp-cluster-trust-bundle", "", "this ClusterTrustBundle was copied into every runtime and its feature gates switched on; this operator copies none"},
	{"runtime-bootstrapper-skr-cluster-trust-bundle", "", "the name of that copy"},
	{"runtime-bootstrapper-skr-namespace", "kyma-system", "the namespace of the copies and of the Deployment waited for"},
	{"runtime-bootstrapper-skr-deployment-name", "rt-bootstrapper-controller-manager", "the one Deployment waited for; runtime.bootstrap waits for every Deployment of the manifests"},
}

// checkBootstrapper refuses --runtime-bootstrapper-enabled=true, naming every setting of the previous runtime
// bootstrapper this operator cannot carry out as it did: accepted and ignored, new runtimes would come up without
// the bootstrapper's objects (config, registry-credentials, trust bundle, Deployment) and private-registry pulls
// would fail. The same objects can be given to runtime.bootstrap (docs/operations/migration.md#the-runtime-bootstrapper).
func (p *previousFlags) checkBootstrapper() error {
	if !p.bootstrapper {
		return nil
	}
	var lines []string
	for _, f := range previousBootstrapperFlags {
		v, given := p.used[f.name]
		if !given {
			v = f.def + " (its default)"
		}
		if v == "" || v == " (its default)" {
			continue // unset: the previous manager did nothing with it
		}
		lines = append(lines, fmt.Sprintf("--%s=%s: %s", f.name, v, f.unsupported))
	}
	return fmt.Errorf("--runtime-bootstrapper-enabled=true cannot be honoured: this operator has no runtime bootstrapper of the previous "+
		"kind; give the same objects to runtime.bootstrap of the operator configuration (docs/operations/migration.md#the-runtime-bootstrapper) "+
		"and remove the flag. Not carried out:\n  %s", strings.Join(lines, "\n  "))
}

// checkConflicts refuses a previous flag given together with its new name and another value: which one would win
// depends on their order, so neither may silently.
func (p *previousFlags) checkConflicts(args []string) error {
	for _, f := range givenFlags(args) {
		for name, value := range p.used {
			if target := p.targets[name]; target != "" && f.name == target && f.value != value {
				return fmt.Errorf("--%s=%s contradicts --%s=%s (its previous name); give only --%s", target, f.value, name, value, target)
			}
		}
	}
	return nil
}

type givenFlag struct{ name, value string }

// givenFlags lists the flags of a command line with their values as written ("--name=value" or "--name value").
func givenFlags(args []string) []givenFlag {
	var out []givenFlag
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") {
			break
		}
		name := strings.TrimLeft(a, "-")
		if n, v, ok := strings.Cut(name, "="); ok {
			out = append(out, givenFlag{n, v})
			continue
		}
		v := ""
		if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
			v = args[i]
		}
		out = append(out, givenFlag{name, v})
	}
	return out
}
