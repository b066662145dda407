package docscheck

import (
	"bytes"
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/app"
	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/operator/metrics"
)

const root = "../.."

// markdownFiles returns the repository-relative paths of the markdown files of the repository (generated and
// hidden directories, build output and the sandbox's working directory excluded).
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "node_modules" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".md") {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 10 {
		t.Fatalf("only %d markdown files found; the check would prove nothing", len(out))
	}
	return out
}

// userDocs are the files whose named flags, variables, metrics and keys must exist: docs/ and the README.
func userDocs(t *testing.T) []*Doc {
	t.Helper()
	repo := NewRepo(root)
	var docs []*Doc
	for _, f := range markdownFiles(t) {
		if f != "README.md" && !strings.HasPrefix(f, "docs/") {
			continue
		}
		d, err := repo.Doc(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	return docs
}

// TestLinksResolve: every link of every markdown file to a file, directory or heading of this repository resolves,
// and so do the repository addresses in config/ and bundle/ (runbook URLs, CSV links).
func TestLinksResolve(t *testing.T) {
	repo := NewRepo(root)
	checked := 0
	for _, f := range markdownFiles(t) {
		d, err := repo.Doc(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range d.Links {
			checked++
			if err := repo.CheckLink(f, l.Text); err != nil {
				t.Errorf("%s:%d: %v", f, l.Line, err)
			}
		}
	}
	repoURL := regexp.MustCompile(regexp.QuoteMeta(RepoURL) + `[^\s"'<>)\]]*`)
	for _, dir := range []string{"config", "bundle"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			for _, u := range repoURL.FindAllString(string(data), -1) {
				checked++
				if err := repo.CheckLink(rel, u); err != nil {
					t.Errorf("%s: %v", rel, err)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 20 {
		t.Fatalf("only %d links checked; the parser is broken", checked)
	}
}

// foreignTools run with flags of their own; a flag on their command line is not ours.
var foreignTools = map[string]bool{
	"kubectl": true, "docker": true, "podman": true, "opm": true, "operator-sdk": true, "go": true, "curl": true,
	"git": true, "helm": true, "promtool": true, "controller-gen": true, "setup-envtest": true, "gardenctl": true,
	"openssl": true, "jq": true, "kustomize": true, "kind": true, "etcd": true, "kube-apiserver": true,
	"gardener-apiserver": true, "gardenlet": true,
}

var (
	envAssignment = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=\S*$`)
	flagToken     = regexp.MustCompile(`(?:^|[\s="'(\[,])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)(-?\*)?`)
)

// ownCommand tells whether the flags of a command line (or an inline code span) are ours: lines of kim, kubectl
// kim, the manager, `go run ./operator/cmd/...` and make (whose *_ARGS pass our flags), and spans that are not a
// command line at all (`--config-map`), but not lines of other tools.
func ownCommand(line string) bool {
	words := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "$ "))
	for len(words) > 0 && (envAssignment.MatchString(words[0]) || words[0] == "sudo") {
		words = words[1:]
	}
	if len(words) == 0 {
		return true
	}
	first := filepath.Base(words[0])
	switch {
	case strings.HasPrefix(words[0], "$"): // a command in a shell variable ($K create ...): not one of ours
		return false
	case first == "kubectl" && len(words) > 1 && words[1] == "kim":
		return true
	case first == "go" && len(words) > 2 && words[1] == "run" && strings.HasPrefix(words[2], "./operator/cmd/"):
		return true
	}
	return !foreignTools[first]
}

// ourFlags are the flags of the repository's binaries (manager, kim, bundlegen, benchmarks) plus the --zap-* flags
// controller-runtime adds to the manager.
func ourFlags(t *testing.T) map[string]bool {
	t.Helper()
	flags, err := DefinedFlags(root, "operator")
	if err != nil {
		t.Fatal(err)
	}
	for name := range zapFlags() {
		flags[name] = true
	}
	flags["help"] = true
	for _, known := range []string{"watch-namespaces", "config-map", "exit-when-ready", "garden-context", "validate"} {
		if !flags[known] {
			t.Fatalf("the flag reader misses --%s; it would let wrong docs pass", known)
		}
	}
	return flags
}

func zapFlags() map[string]bool {
	fs := flag.NewFlagSet("zap", flag.ContinueOnError)
	(&zap.Options{}).BindFlags(fs)
	out := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { out[f.Name] = true })
	return out
}

// TestDocumentedFlagsExist: every --flag the docs show for the manager or kim (in code, tables and command lines)
// is defined by a binary of the repository; flags on other tools' command lines are theirs.
func TestDocumentedFlagsExist(t *testing.T) {
	flags := ourFlags(t)
	for _, d := range userDocs(t) {
		for _, s := range commandLines(d.Code) {
			if !ownCommand(s.Text) {
				continue
			}
			for _, m := range flagToken.FindAllStringSubmatch(s.Text, -1) {
				if !knownFlag(flags, m[1], m[2] != "") {
					t.Errorf("%s:%d: --%s%s is not a flag of any binary of this repository", d.Path, s.Line, m[1], m[2])
				}
			}
		}
	}
}

// knownFlag accepts a defined flag, or for a pattern (--shoot-*) a prefix of one.
func knownFlag(flags map[string]bool, name string, pattern bool) bool {
	if !pattern {
		return flags[name]
	}
	for f := range flags {
		if strings.HasPrefix(f, name) {
			return true
		}
	}
	return false
}

// commandLines joins the shell continuation lines (ending in \) of code blocks, so a flag on the second line of a
// kubectl command is seen as kubectl's.
func commandLines(code []Snippet) []Snippet {
	var out []Snippet
	for i := 0; i < len(code); i++ {
		s := code[i]
		for s.Block && strings.HasSuffix(strings.TrimSpace(s.Text), "\\") && i+1 < len(code) && code[i+1].Block && code[i+1].Line == code[i].Line+1 {
			i++
			s.Text = strings.TrimSuffix(strings.TrimSpace(s.Text), "\\") + " " + code[i].Text
		}
		out = append(out, s)
	}
	return out
}

// TestDocumentedEnvironmentVariablesExist: every KIM_* variable the docs name sets a manager flag (app.EnvName).
func TestDocumentedEnvironmentVariablesExist(t *testing.T) {
	env := map[string]bool{}
	for _, dir := range []string{"operator/cmd/manager", "operator/app"} {
		flags, err := DefinedFlags(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		for f := range flags {
			env[app.EnvName(f)] = true
		}
	}
	for f := range zapFlags() {
		env[app.EnvName(f)] = true
	}
	// --version is defined after the environment is applied (operator/cmd/manager/flags.go): no variable sets it.
	delete(env, app.EnvName("version"))
	if !env["KIM_CONFIG_MAP"] || !env["KIM_WATCH_NAMESPACES"] {
		t.Fatal("the flag reader misses manager flags")
	}
	name := regexp.MustCompile(`\bKIM_[A-Z0-9_]*[A-Z0-9]\b`)
	for _, d := range userDocs(t) {
		for _, s := range append(append([]Snippet{}, d.Code...), d.Prose...) {
			for _, v := range name.FindAllString(s.Text, -1) {
				if !env[v] {
					t.Errorf("%s:%d: %s sets no manager flag", d.Path, s.Line, v)
				}
			}
		}
	}
}

var (
	ownMetric        = regexp.MustCompile(`\bkim_[a-z0-9_]*[a-z0-9]\b`)
	metricWithLabels = regexp.MustCompile(`\b(kim_[a-z0-9_]*[a-z0-9])\{([^}]*)\}`)
	labelName        = regexp.MustCompile(`^([a-zA-Z_][a-zA-Z0-9_]*)`)
	foreignMetric    = regexp.MustCompile(`\b(?:controller_runtime|workqueue|rest_client)_[a-z0-9_]*[a-z0-9]\b(\*)?`)
)

// TestDocumentedMetricsExist: every kim_* metric the docs name is registered by the code, and the metrics table of
// docs/operations/metrics.md states each metric's type and labels as registered.
func TestDocumentedMetricsExist(t *testing.T) {
	cat, err := metrics.Load()
	if err != nil {
		t.Fatal(err)
	}
	tables := 0
	for _, d := range userDocs(t) {
		for _, s := range append(append([]Snippet{}, d.Code...), d.Prose...) {
			for _, m := range ownMetric.FindAllString(s.Text, -1) {
				if !cat.Has(m) {
					t.Errorf("%s:%d: metric %s is not registered by the operator", d.Path, s.Line, m)
				}
			}
			for _, m := range metricWithLabels.FindAllStringSubmatch(s.Text, -1) {
				_, labels, ok := cat.Series(m[1])
				if !ok {
					labels = cat[m[1]].Labels
				}
				for _, part := range strings.Split(m[2], ",") {
					l := labelName.FindStringSubmatch(strings.TrimSpace(part))
					if l != nil && !setContains(labels, l[1]) {
						t.Errorf("%s:%d: %s has no label %s (labels: %v)", d.Path, s.Line, m[1], l[1], labels)
					}
				}
			}
			for _, m := range foreignMetric.FindAllStringSubmatch(s.Text, -1) {
				if m[1] == "" && !metrics.InControllerRuntimeRegistry(strings.TrimSuffix(m[0], "*")) {
					t.Errorf("%s:%d: metric %s is not in controller-runtime's registry", d.Path, s.Line, m[0])
				}
			}
		}
		tables += checkMetricTable(t, d, cat)
	}
	if tables == 0 {
		t.Error("no metrics table found in docs/; the table check proves nothing")
	}
}

func setContains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

var backticked = regexp.MustCompile("`([^`]+)`")

// checkMetricTable checks rows "| `metric` | type | `label`, ... | meaning |" and returns how many it checked.
func checkMetricTable(t *testing.T, d *Doc, cat metrics.Catalogue) int {
	t.Helper()
	checked := 0
	for i, line := range d.Lines {
		if !strings.HasPrefix(strings.TrimSpace(line), "|") {
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(strings.ReplaceAll(line, `\|`, "/")), "|"), "|")
		if len(cells) < 3 {
			continue
		}
		name := backticked.FindStringSubmatch(cells[0])
		if name == nil || strings.TrimSpace(cells[0]) != "`"+name[1]+"`" {
			continue
		}
		f, ok := cat[name[1]]
		if !ok {
			continue // TestDocumentedMetricsExist reports unknown names
		}
		checked++
		if typ := strings.TrimSpace(cells[1]); typ != f.Type {
			t.Errorf("%s:%d: %s is a %s, the table says %q", d.Path, i+1, f.Name, f.Type, typ)
		}
		labels := []string{}
		for _, m := range backticked.FindAllStringSubmatch(cells[2], -1) {
			labels = append(labels, m[1])
		}
		sort.Strings(labels)
		want := append([]string{}, f.Labels...)
		if len(want) == 0 {
			want = []string{}
		}
		if !cmp.Equal(want, labels) {
			t.Errorf("%s:%d: %s has the labels %v, the table says %v", d.Path, i+1, f.Name, f.Labels, labels)
		}
	}
	return checked
}

// configKey matches inline code that names a key of the operator configuration file (`gardener.project`).
var configKey = regexp.MustCompile(`^(gardener|shoot|deletion|registryCache)(\.[a-z][a-zA-Z0-9]*)+$`)

// TestDocumentedConfigKeysExist: every configuration key the docs name exists in the configuration file's schema
// (operator/config) or, for shoot.*, in the Runtime's spec; every example configuration decodes strictly.
func TestDocumentedConfigKeysExist(t *testing.T) {
	keys := 0
	for _, d := range userDocs(t) {
		var block []string
		flush := func(line int) {
			text := strings.Join(block, "\n")
			block = nil
			if !strings.Contains(text, "kind: OperatorConfig") {
				return
			}
			keys++
			js, err := yaml.YAMLToJSON([]byte(text))
			if err != nil {
				t.Errorf("%s:%d: example configuration is not YAML: %v", d.Path, line, err)
				return
			}
			dec := json.NewDecoder(bytes.NewReader(js))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&config.OperatorConfig{}); err != nil {
				t.Errorf("%s:%d: example configuration: %v", d.Path, line, err)
			}
		}
		last := 0
		for _, s := range d.Code {
			if !s.Block {
				if configKey.MatchString(s.Text) {
					keys++
					if !hasPath(reflect.TypeOf(config.OperatorConfig{}), strings.Split(s.Text, ".")) &&
						!hasPath(reflect.TypeOf(imv1.RuntimeSpec{}), strings.Split(s.Text, ".")) {
						t.Errorf("%s:%d: %s is not a key of the operator configuration", d.Path, s.Line, s.Text)
					}
				}
				continue
			}
			if s.Line != last+1 && len(block) > 0 {
				flush(last)
			}
			block = append(block, s.Text)
			last = s.Line
		}
		flush(last)
	}
	if keys < 5 {
		t.Fatalf("only %d configuration keys found in the docs; the check proves nothing", keys)
	}
}

// hasPath follows JSON field names through structs; any key is accepted below a map.
func hasPath(typ reflect.Type, path []string) bool {
	for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
		typ = typ.Elem()
	}
	if len(path) == 0 {
		return true
	}
	switch typ.Kind() {
	case reflect.Map:
		return hasPath(typ.Elem(), path[1:])
	case reflect.Struct:
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" && hasPath(f.Type, path) {
				return true
			}
			if name == path[0] {
				return hasPath(f.Type, path[1:])
			}
		}
	}
	return false
}

// TestCheckersCatchStaleDocs proves the checks can fail on a made-up document.
func TestCheckersCatchStaleDocs(t *testing.T) {
	d := Parse("docs/x.md", "# Title\n\nRun `manager --no-such-flag` and see `kim_no_such_metric`.\n"+
		"[broken](missing.md) and [anchor](#no-heading) and [fine](#title)\n\n```sh\nkubectl apply --server-side -f x\n```\n")
	flags := ourFlags(t)
	var bad []string
	for _, s := range d.Code {
		for _, m := range flagToken.FindAllStringSubmatch(s.Text, -1) {
			if ownCommand(s.Text) && !flags[m[1]] {
				bad = append(bad, m[1])
			}
		}
	}
	if diff := cmp.Diff([]string{"no-such-flag"}, bad); diff != "" {
		t.Errorf("unknown flags found (-want +got):\n%s", diff)
	}
	repo := NewRepo(root)
	var linkErrs []string
	for _, l := range d.Links {
		if err := repo.CheckLink("docs/x.md", l.Text); err != nil {
			linkErrs = append(linkErrs, l.Text)
		}
	}
	// docs/x.md does not exist, so even #title cannot resolve there; the relative link is what matters.
	if len(linkErrs) < 2 || linkErrs[0] != "missing.md" {
		t.Errorf("link errors for %v", linkErrs)
	}
	if Slug("`--config-map` and *KIM_CONFIG_MAP*") != "--config-map-and-kim_config_map" {
		t.Errorf("slug %q", Slug("`--config-map` and *KIM_CONFIG_MAP*"))
	}
	if hasPath(reflect.TypeOf(config.OperatorConfig{}), []string{"gardener", "projekt"}) {
		t.Error("a misspelt configuration key resolved")
	}
}

// TestManagerFlagsAreDocumented: the flag reference names every flag of the manager (its own, the options and the
// --zap-* flags), so an operator finds every setting and its KIM_* variable there.
func TestManagerFlagsAreDocumented(t *testing.T) {
	d, err := NewRepo(root).Doc("docs/operations/flags.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, s := range d.Code {
		for _, m := range flagToken.FindAllStringSubmatch(s.Text, -1) {
			documented[m[1]] = true
		}
	}
	for _, dir := range []string{"operator/cmd/manager", "operator/app"} {
		flags, err := DefinedFlags(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		for f := range flags {
			if !documented[f] {
				t.Errorf("--%s (%s) is missing from docs/operations/flags.md", f, dir)
			}
		}
	}
	for f := range zapFlags() {
		if !documented[f] {
			t.Errorf("--%s (controller-runtime's logging flags) is missing from docs/operations/flags.md", f)
		}
	}
}

// TestMetricsAreDocumented: the metrics table lists every metric the manager registers.
func TestMetricsAreDocumented(t *testing.T) {
	cat, err := metrics.Load()
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewRepo(root).Doc("docs/operations/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, line := range d.Lines {
		if m := regexp.MustCompile("^\\|\\s*`([a-z0-9_]+)`\\s*\\|").FindStringSubmatch(line); m != nil {
			rows[m[1]] = true
		}
	}
	for _, name := range cat.Names() {
		if !rows[name] {
			t.Errorf("%s is registered but has no row in docs/operations/metrics.md", name)
		}
	}
}
