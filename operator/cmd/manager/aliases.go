package main

import (
	"flag"
	"fmt"
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
	fs.BoolFunc("runtime-bootstrapper-enabled", "deprecated, ignored: "+notHere, p.ignore("runtime-bootstrapper-enabled", notHere))
	for _, name := range []string{"runtime-bootstrapper-manifests-config-map-name", "runtime-bootstrapper-kcp-config-name",
		"runtime-bootstrapper-kcp-pull-secret-name", "runtime-bootstrapper-kcp-cluster-trust-bundle", "runtime-bootstrapper-skr-deployment-name",
		"runtime-bootstrapper-skr-config-name", "runtime-bootstrapper-skr-pull-secret-name", "runtime-bootstrapper-skr-cluster-trust-bundle",
		"runtime-bootstrapper-skr-namespace"} {
		fs.Func(name, "deprecated, ignored: "+notHere, p.ignore(name, notHere))
	}
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
