package docscheck

import (
	"flag"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kyma-project/kim/operator/app"
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
	"gardener-apiserver": true, "gardenlet": true, "goreleaser": true, "cosign": true, "sha256sum": true,
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

// ourFlags are the flags of the repository's binaries (manager, kim, probe, bundlegen under operator/; the sandbox
// and the benchmarks under test/) plus the --zap-* flags controller-runtime adds to the manager.
func ourFlags(t *testing.T) map[string]bool {
	t.Helper()
	flags := map[string]bool{}
	for _, dir := range []string{"operator", "test"} {
		defined, err := DefinedFlags(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		maps.Copy(flags, defined)
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

var backticked = regexp.MustCompile("`([^`]+)`")

// configKey matches inline code that names a key of the operator configuration file (`gardener.project`).
var configKey = regexp.MustCompile(`^(gardener|shoot|deletion|registryCache)(\.[a-z][a-zA-Z0-9]*)+$`)
