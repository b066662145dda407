package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kyma-project/kim/operator/app"
)

// settings are the parsed command line of the manager.
type settings struct {
	opts             app.Options
	gardenKubeconfig string
	// configMap names the ConfigMap (key config.yaml) holding the landscape configuration; opts.ConfigFile is the
	// alternative for running outside a cluster. Exactly one of them is set.
	configMap          string
	configMapNamespace string
	zap                zap.Options
	showVersion        bool
	// legacyMetrics exports the previous infrastructure manager's metrics; legacyMetricsFull with its
	// high-cardinality label contents (condition messages, expiry timestamps).
	legacyMetrics, legacyMetricsFull bool
	// previous holds the flags of the previous infrastructure manager that were given (deprecation warnings).
	previous *previousFlags
}

// configMapKey is the key of the configuration file in the ConfigMap named by --config-map.
const configMapKey = "config.yaml"

// parseFlags reads the command line and, for every flag not given there, the environment (KIM_<FLAG>, see
// app.ApplyEnv). It writes to output only the help, for -h (returning flag.ErrHelp); an error is returned, for the
// caller to print as one line, without the help after it. podNamespace is the namespace the manager runs in (POD_NAMESPACE, empty outside a cluster): it is
// the default of the watched namespace, the lease namespace and the ConfigMap namespace, so an install into any
// namespace works without arguments.
func parseFlags(args []string, lookupEnv func(string) (string, bool), output io.Writer) (*settings, error) {
	s := &settings{opts: app.DefaultOptions()}
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the flag package's own messages: the error is returned, the help printed below
	s.opts.BindFlags(fs)
	fs.StringVar(&s.gardenKubeconfig, "gardener-kubeconfig-path", "/gardener/kubeconfig/kubeconfig",
		"kubeconfig of the Gardener project's service account")
	fs.StringVar(&s.configMap, "config-map", "",
		"ConfigMap (key "+configMapKey+") with the operator configuration, read at start-up; alternative to --config")
	fs.StringVar(&s.configMapNamespace, "config-map-namespace", "",
		"namespace of --config-map (default: the manager's own namespace, else the first watched namespace)")
	// Production logging by default: JSON lines with ISO 8601 timestamps at info level. The standard --zap-* flags
	// change it (--zap-encoder=console for people, --zap-log-level=debug, ...).
	s.zap = zap.Options{TimeEncoder: zapcore.ISO8601TimeEncoder}
	s.zap.BindFlags(fs)
	zapDefaults(fs)
	logFormat := fs.String("log-format", "", "deprecated alias of --zap-encoder (json or console)")
	fs.BoolVar(&s.legacyMetrics, "legacy-metrics", false,
		"also export the previous infrastructure manager's metrics (infrastructure_manager_im_*, unexpected_stops_total) for its dashboards and alerts")
	fs.BoolVar(&s.legacyMetricsFull, "legacy-metrics-full-labels", false,
		"with --legacy-metrics: fill the high-cardinality labels as the previous system did (message text, expiry timestamp)")
	applied, err := app.ApplyEnv(fs, lookupEnv)
	if err != nil {
		return nil, err
	}
	// After ApplyEnv: a variable such as KIM_VERSION=0.2.0 in someone's environment must not turn this on.
	fs.BoolVar(&s.showVersion, "version", false, "print the version and exit")
	s.previous = bindPreviousFlags(fs)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fs, output, append([]string{"log-format"}, s.previous.names...))
		}
		return nil, err
	}
	if err := s.previous.checkConflicts(args); err != nil {
		return nil, err
	}
	if err := s.previous.checkBootstrapper(); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %v", fs.Args())
	}
	given := map[string]bool{}
	for _, name := range applied {
		given[name] = true
	}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if err := applyLogFormat(fs, *logFormat, given); err != nil {
		return nil, err
	}
	if *logFormat != "" {
		s.previous.warnings = append(s.previous.warnings, "--log-format is deprecated; use --zap-encoder")
	}
	if s.showVersion {
		return s, nil
	}
	podNamespace, _ := lookupEnv("POD_NAMESPACE")
	s.applyNamespaceDefaults(strings.TrimSpace(podNamespace), given)
	// The previous manager's converter configuration can be the whole configuration (its Deployment, unchanged,
	// names no ConfigMap of this operator) or be merged into one.
	both, none := s.opts.ConfigFile != "" && s.configMap != "", s.opts.ConfigFile == "" && s.configMap == ""
	if none && s.previous.converterFile == "" {
		s.previous.defaultConverterFile()
	}
	s.previous.previousDefaults()
	if both || (none && s.previous.converterFile == "") {
		return nil, fmt.Errorf("set exactly one of --config-map (KIM_CONFIG_MAP; the Deployment does) and --config "+
			"(a file, for running outside the cluster), or the previous manager's --converter-config-filepath "+
			"(read from its default %s when that file exists); see docs/configuration.md", previousConverterPath)
	}
	return s, nil
}

// deprecatedNote ends the help: the deprecated aliases it leaves out are still accepted.
const deprecatedNote = "Deprecated flags (those of the previous infrastructure manager, --log-format) are accepted: see docs/operations/flags.md"

// printUsage writes the help of fs to w without the flags named hidden, the deprecated aliases: they are accepted
// (each use is logged as a warning) but would be half of the list, and nobody should start using them. The flag
// package has no hidden flags, so the visible ones are copied, with their defaults as registered, into a FlagSet
// that prints them.
func printUsage(fs *flag.FlagSet, w io.Writer, hidden []string) {
	visible := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	visible.SetOutput(w)
	fs.VisitAll(func(f *flag.Flag) {
		if slices.Contains(hidden, f.Name) {
			return
		}
		visible.Var(f.Value, f.Name, f.Usage)
		visible.Lookup(f.Name).DefValue = f.DefValue
	})
	fmt.Fprintf(w, "Usage of %s:\n", fs.Name())
	visible.PrintDefaults()
	fmt.Fprintln(w, deprecatedNote)
}

// applyLogFormat keeps the old --log-format working as an alias of --zap-encoder without overriding it: both given
// with different values is an error instead of one silently winning.
func applyLogFormat(fs *flag.FlagSet, logFormat string, given map[string]bool) error {
	if logFormat == "" {
		return nil
	}
	if logFormat != "json" && logFormat != "console" {
		return fmt.Errorf("--log-format: %q is neither json nor console", logFormat)
	}
	if given["zap-encoder"] {
		if enc := fs.Lookup("zap-encoder").Value.String(); enc != logFormat {
			return fmt.Errorf("--log-format=%s contradicts --zap-encoder=%s; use --zap-encoder only", logFormat, enc)
		}
		return nil
	}
	return fs.Set("zap-encoder", logFormat)
}

func (s *settings) applyNamespaceDefaults(podNamespace string, given map[string]bool) {
	if podNamespace != "" {
		if !given["watch-namespaces"] {
			s.opts.WatchNamespaces = []string{podNamespace}
		}
		if !given["leader-election-namespace"] {
			s.opts.LeaderElectionNamespace = podNamespace
		}
	}
	if s.configMapNamespace == "" {
		s.configMapNamespace = podNamespace
	}
	if s.configMapNamespace == "" && len(s.opts.WatchNamespaces) > 0 {
		s.configMapNamespace = s.opts.WatchNamespaces[0]
	}
}

// zapDefaults rewrites the help of controller-runtime's --zap-* flags: theirs describes the library's defaults
// (epoch timestamps, the development mode's levels), not what this manager logs when none is given.
func zapDefaults(fs *flag.FlagSet) {
	for name, usage := range map[string]string{
		"zap-encoder":          "log encoding, json or console (default json)",
		"zap-log-level":        "least level logged: debug, info, error, panic, or an integer > 0 for more verbose debug levels (default info)",
		"zap-stacktrace-level": "level at and above which stack traces are logged: info, error or panic (default error)",
		"zap-time-encoding":    "timestamp encoding: epoch, millis, nano, iso8601, rfc3339 or rfc3339nano (default iso8601)",
		"zap-devel":            "development logging: console encoding, debug level, stack traces from warn (default false: JSON lines at info)",
	} {
		if f := fs.Lookup(name); f != nil {
			f.Usage = usage
		}
	}
}
