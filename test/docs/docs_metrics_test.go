package docscheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/test/metrics"
)

// TestDocumentedMetricsExist: every kim_* metric the docs name is registered by the code, and the metrics table of
// docs/operations/metrics.md states each metric's type and labels as registered.
func TestDocumentedMetricsExist(t *testing.T) {
	cat, err := metrics.Load()
	if err != nil {
		t.Fatal(err)
	}
	values, err := StringLiterals(root, "operator", "adapters", "core", "internal")
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
					if bad := unknownLabelValue(strings.TrimSpace(part), values); bad != "" {
						t.Errorf("%s:%d: %s: the code never sets %s", d.Path, s.Line, m[1], bad)
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

// freeFormLabels have values from the landscape (identities, addresses) or from Prometheus (histogram buckets), not
// from the code.
var freeFormLabels = map[string]bool{"runtime_id": true, "shoot_name": true, "url": true, "le": true, "instance": true,
	"job": true, "namespace": true, "pod": true}

// labelMatcher is one matcher of a selector: name, operator, quoted value.
var labelMatcher = regexp.MustCompile(`^([a-zA-Z_][a-zA-Z0-9_]*)\s*(=|!=|=~|!~)\s*"([^"]*)"$`)

// unknownLabelValue returns `label="value"` when a documented equality matcher names a value of an enumerated label
// that no string literal of the code has (a typo or a renamed reason); "" otherwise. Regex matchers are not judged.
func unknownLabelValue(matcher string, values map[string]bool) string {
	m := labelMatcher.FindStringSubmatch(matcher)
	if m == nil || freeFormLabels[m[1]] || (m[2] != "=" && m[2] != "!=") || values[m[3]] {
		return ""
	}
	return fmt.Sprintf("%s%s%q", m[1], m[2], m[3])
}

func setContains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

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
	values, err := StringLiterals(root, "operator", "adapters", "core", "internal")
	if err != nil {
		t.Fatal(err)
	}
	for matcher, want := range map[string]string{
		`state="Faild"`:     `state="Faild"`, // a typo
		`outcome!="succes"`: `outcome!="succes"`,
		`state="Failed"`:    "", // a value the code sets
		`runtime_id="rt-1"`: "", // free-form
		`reason=~"Shoot.*"`: "", // regex matchers are not judged
	} {
		if got := unknownLabelValue(matcher, values); got != want {
			t.Errorf("%s: %q, want %q", matcher, got, want)
		}
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
