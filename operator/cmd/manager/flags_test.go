package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kyma-project/kim/operator/app"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestParseFlagsNamespaces(t *testing.T) {
	for _, tc := range []struct {
		reason          string
		args            []string
		env             map[string]string
		wantWatch       []string
		wantLease       string
		wantConfigMapNS string
	}{
		{
			reason:          "kustomize install: no OLM annotation, everything in the pod's namespace",
			env:             map[string]string{"KIM_CONFIG_MAP": "kim-manager-config", "KIM_WATCH_NAMESPACES": "", "POD_NAMESPACE": "kcp-system"},
			wantWatch:       []string{"kcp-system"},
			wantLease:       "kcp-system",
			wantConfigMapNS: "kcp-system",
		},
		{
			reason:          "OLM SingleNamespace: olm.targetNamespaces names another namespace; lease and ConfigMap stay home",
			env:             map[string]string{"KIM_CONFIG_MAP": "kim-manager-config", "KIM_WATCH_NAMESPACES": "kcp-system", "POD_NAMESPACE": "kim-operator"},
			wantWatch:       []string{"kcp-system"},
			wantLease:       "kim-operator",
			wantConfigMapNS: "kim-operator",
		},
		{
			reason:          "outside a cluster: the defaults of the options",
			args:            []string{"--config=/tmp/config.yaml"},
			wantWatch:       []string{"kcp-system"},
			wantLease:       "",
			wantConfigMapNS: "kcp-system",
		},
		{
			reason:          "flags win over the pod namespace",
			args:            []string{"--config-map=c", "--watch-namespaces=x", "--leader-election-namespace=y", "--config-map-namespace=z"},
			env:             map[string]string{"POD_NAMESPACE": "kcp-system"},
			wantWatch:       []string{"x"},
			wantLease:       "y",
			wantConfigMapNS: "z",
		},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			s, err := parseFlags(tc.args, env(tc.env), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantWatch, s.opts.WatchNamespaces); diff != "" {
				t.Errorf("watched namespaces (-want +got):\n%s", diff)
			}
			if s.opts.LeaderElectionNamespace != tc.wantLease || s.configMapNamespace != tc.wantConfigMapNS {
				t.Errorf("lease namespace %q, ConfigMap namespace %q; want %q, %q",
					s.opts.LeaderElectionNamespace, s.configMapNamespace, tc.wantLease, tc.wantConfigMapNS)
			}
		})
	}
}

func TestParseFlagsRejects(t *testing.T) {
	for _, tc := range []struct {
		reason  string
		args    []string
		env     map[string]string
		wantHas string
	}{
		{reason: "no configuration at all", wantHas: "exactly one of --config-map"},
		{reason: "both a file and a ConfigMap", args: []string{"--config=/f"}, env: map[string]string{"KIM_CONFIG_MAP": "c"}, wantHas: "exactly one of --config-map"},
		{reason: "contradicting log formats", args: []string{"--config=/f", "--log-format=json", "--zap-encoder=console"}, wantHas: "contradicts --zap-encoder"},
		{reason: "unknown log format", args: []string{"--config=/f", "--log-format=xml"}, wantHas: "neither json nor console"},
		{reason: "a bad environment value", env: map[string]string{"KIM_RUNTIME_WORKERS": "many"}, wantHas: "KIM_RUNTIME_WORKERS"},
		{reason: "stray arguments", args: []string{"--config=/f", "extra"}, wantHas: "unexpected arguments"},
		// Numbers parse strictly: fmt.Sscanf took the 50 of 50abc.
		{reason: "a number with trailing garbage", args: []string{"--config=/f", "--gardener-qps=50abc"}, wantHas: `invalid value "50abc" for flag -gardener-qps: not a number`},
		{reason: "a number that is not finite", args: []string{"--config=/f", "--gardener-qps=NaN"}, wantHas: "flag -gardener-qps: not a finite number"},
		{reason: "a number out of range", args: []string{"--config=/f", "--gardener-qps=1e50"}, wantHas: "flag -gardener-qps: out of range"},
		{reason: "a bad number in the environment", env: map[string]string{"KIM_GARDENER_QPS": "50abc"}, wantHas: `KIM_GARDENER_QPS="50abc": not a number`},
		{reason: "a bad number through the previous name", args: []string{"--config=/f", "--gardener-ratelimiter-qps=20x"},
			wantHas: `invalid value "20x" for flag -gardener-ratelimiter-qps: (sets --gardener-qps) not a number`},
		{reason: "an integer with trailing garbage", args: []string{"--config=/f", "--gardener-burst=100x"}, wantHas: "flag -gardener-burst"},
		{reason: "a duration that is none", args: []string{"--config=/f", "--deletion-grace-period=3 days"}, wantHas: "flag -deletion-grace-period: not a duration"},
	} {
		_, err := parseFlags(tc.args, env(tc.env), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.wantHas) {
			t.Errorf("%s: error %v, want one containing %q", tc.reason, err, tc.wantHas)
		}
	}
}

// TestNumericFlagsParseStrictly: every numeric flag of the options refuses a value with trailing garbage, naming
// the flag, as the standard flag types do (strconv, not fmt.Sscanf).
func TestNumericFlagsParseStrictly(t *testing.T) {
	fs := flag.NewFlagSet("options", flag.ContinueOnError)
	opts := app.DefaultOptions()
	opts.BindFlags(fs)
	numeric := 0
	fs.VisitAll(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok {
			return
		}
		switch g.Get().(type) {
		case int, int64, uint, uint64, float32, float64, time.Duration:
		default:
			return
		}
		numeric++
		_, err := parseFlags([]string{"--config=/f", "--" + f.Name + "=1abc"}, env(nil), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "flag -"+f.Name+":") {
			t.Errorf("--%s=1abc: %v, want an error naming the flag", f.Name, err)
		}
	})
	if numeric < 8 {
		t.Errorf("%d numeric flags found; the Getter check misses some (gardener-qps, gardener-burst, the workers, the durations)", numeric)
	}
}

// help is the output of manager -h.
func help(t *testing.T) string {
	t.Helper()
	var out bytes.Buffer
	if _, err := parseFlags([]string{"-h"}, env(nil), &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v, want flag.ErrHelp", err)
	}
	return out.String()
}

// TestHelpPrintsDurationsAndNumbers: a duration's default prints as a duration, and --deletion-grace-period, unset
// by default (the configuration decides), shows no default instead of "-1ns"; --gardener-qps shows its type and
// default like the standard numeric flags.
func TestHelpPrintsDurationsAndNumbers(t *testing.T) {
	out := help(t)
	if ns := regexp.MustCompile(`\(default -?[0-9.]+ns\)`).FindString(out); ns != "" {
		t.Errorf("a default in nanoseconds, %s:\n%s", ns, out)
	}
	for _, want := range []string{
		"  -deletion-grace-period duration\n",
		"(default 24h0m0s)",
		"  -gardener-qps number\n",
		"[env KIM_GARDENER_QPS] (default 50)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
	_, grace, _ := strings.Cut(out, "  -deletion-grace-period ")
	if line, _, _ := strings.Cut(strings.SplitN(grace, "\n", 2)[1], "\n"); strings.Contains(line, "(default") {
		t.Errorf("--deletion-grace-period shows a default: %q", line)
	}
	// Set, it prints as a duration.
	s, err := parseFlags([]string{"--config=/f", "--deletion-grace-period=90m"}, env(nil), io.Discard)
	if err != nil || s.opts.DeletionGracePeriod != 90*time.Minute {
		t.Fatalf("--deletion-grace-period=90m: %v, %s", err, s.opts.DeletionGracePeriod)
	}
}

// TestBadFlagIsOneLine: a refused command line writes nothing (main prints the error, naming the flag, as one line);
// the flag package printed its message and then the whole help.
func TestBadFlagIsOneLine(t *testing.T) {
	for _, args := range [][]string{{"--gardener-qps=50abc"}, {"--no-such-flag"}, {"--gardener-ratelimiter-qps=x"}} {
		var out bytes.Buffer
		_, err := parseFlags(append([]string{"--config=/f"}, args...), env(nil), &out)
		if err == nil || strings.Contains(err.Error(), "\n") || out.Len() > 0 {
			t.Errorf("%v: error %q and output %q, want a one-line error and no output", args, err, out.String())
		}
	}
}

func TestVersionIgnoresEnvironment(t *testing.T) {
	s, err := parseFlags([]string{"--config=/f"}, env(map[string]string{"KIM_VERSION": "0.2.0"}), io.Discard)
	if err != nil || s.showVersion {
		t.Errorf("KIM_VERSION in the environment: err %v, showVersion %v", err, s != nil && s.showVersion)
	}
}

// logLine logs an error and an info line with the logger the flags configure and returns what was written.
func logLine(t *testing.T, args ...string) string {
	t.Helper()
	s, err := parseFlags(append([]string{"--config=/f"}, args...), env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	log := newLogger(s, &buf)
	log.Error(errors.New("boom"), "reconcile failed", "runtimeID", "rt-1")
	log.V(1).Info("debug detail")
	return buf.String()
}

// TestLoggingFlags: production logs are JSON with errors under controller-runtime's key "error" at level error; the
// standard --zap-* flags change format and verbosity, and the old --log-format no longer overrides them.
func TestLoggingFlags(t *testing.T) {
	out := logLine(t)
	var entry map[string]any
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &entry); err != nil {
		t.Fatalf("default output is not JSON: %q", out)
	}
	if entry["level"] != "error" || entry["error"] != "boom" || entry["runtimeID"] != "rt-1" {
		t.Errorf("error entry %v: want level error, error boom, runtimeID rt-1", entry)
	}
	if _, ok := entry["ts"].(string); !ok {
		t.Errorf("timestamp %v is not ISO 8601 text", entry["ts"])
	}
	if strings.Contains(out, "debug detail") {
		t.Error("debug line logged at the default level")
	}

	console := logLine(t, "--zap-encoder=console", "--zap-log-level=debug")
	if strings.HasPrefix(console, "{") || !strings.Contains(console, "debug detail") {
		t.Errorf("--zap-encoder=console --zap-log-level=debug ignored: %q", console)
	}
	if alias := logLine(t, "--log-format=console"); strings.HasPrefix(alias, "{") {
		t.Errorf("--log-format=console (alias) ignored: %q", alias)
	}
}

// TestHelpStatesTheLoggingDefaults: the manager's logger without any --zap-* flag writes JSON lines with ISO 8601
// timestamps at info level and stack traces from error, and -h says so (controller-runtime's own help names its
// library defaults, epoch timestamps among them).
func TestHelpStatesTheLoggingDefaults(t *testing.T) {
	s, err := parseFlags([]string{"--config=/f"}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	log := zap.New(zap.UseFlagOptions(&s.zap), zap.WriteTo(&buf))
	log.V(1).Info("debug line")
	log.Info("info line")
	log.Error(errors.New("boom"), "error line")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("logged %d lines, want the info and the error line only (level info):\n%s", len(lines), buf.String())
	}
	var info, failure map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &info); err != nil {
		t.Fatalf("not a JSON line (encoder json): %v\n%s", err, lines[0])
	}
	if err := json.Unmarshal([]byte(lines[1]), &failure); err != nil {
		t.Fatal(err)
	}
	ts, _ := info["ts"].(string)
	if _, err := time.Parse("2006-01-02T15:04:05.000Z0700", ts); err != nil {
		t.Errorf("timestamp %v is not ISO 8601: %v", info["ts"], err)
	}
	if _, ok := info["stacktrace"]; ok {
		t.Error("an info line carries a stack trace")
	}
	if _, ok := failure["stacktrace"]; !ok {
		t.Error("an error line carries no stack trace (stack traces from error)")
	}
	out := help(t)
	for _, want := range []string{"(default json)", "(default info)", "(default error)", "(default iso8601)"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "'epoch'") || strings.Contains(out, "Defaults to") {
		t.Errorf("help still states controller-runtime's library defaults:\n%s", out)
	}
}

// withCounter counts the fields the cores it makes were given, whether they encoded them or not.
type withCounter struct {
	zapcore.Core
	withs *int
}

func (c withCounter) With(fields []zapcore.Field) zapcore.Core {
	*c.withs++
	return withCounter{c.Core.With(fields), c.withs}
}

// TestLoggerEncodesFieldsOnlyForWhatItWrites: a logger given keys by every reconcile encodes them only when it
// writes an entry, and the entry carries them all, in order, as an eager logger writes them.
func TestLoggerEncodesFieldsOnlyForWhatItWrites(t *testing.T) {
	var buf bytes.Buffer
	withs := 0
	enc := zapcore.NewJSONEncoder(uberzap.NewProductionEncoderConfig())
	base := withCounter{zapcore.NewCore(enc, zapcore.AddSync(&buf), zapcore.InfoLevel), &withs}
	log := uberzap.New(lazyFields{base}).With(uberzap.String("controller", "runtime")).With(uberzap.String("runtimeID", "rt-1"))
	log.Debug("not written")
	if withs != 0 || buf.Len() != 0 {
		t.Fatalf("nothing written, yet %d cores were given fields (%q)", withs, buf.String())
	}
	log.Info("written", uberzap.String("shootName", "c-1"))
	var entry map[string]any
	if err := json.Unmarshal(buf.Bytes(), &entry); err != nil {
		t.Fatalf("entry %q: %v", buf.String(), err)
	}
	if entry["controller"] != "runtime" || entry["runtimeID"] != "rt-1" || entry["shootName"] != "c-1" || entry["msg"] != "written" {
		t.Errorf("entry %v: want the fields of both With calls and the message's", entry)
	}
	if withs != 2 {
		t.Errorf("%d cores given fields for one entry with two With calls, want 2", withs)
	}
	// The logger the flags build is lazy too, and still writes the keys it was given.
	s, err := parseFlags([]string{"--config=/f"}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	newLogger(s, &buf).WithValues("runtimeID", "rt-2").Info("configured")
	if !strings.Contains(buf.String(), `"runtimeID":"rt-2"`) {
		t.Errorf("flag-built logger wrote %q, want the runtime ID it was given", buf.String())
	}
}
