package v1_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// allowedRoots are the only modules the API module may require directly: whatever else its build list holds must be
// a dependency of one of them. Importers (KEB) inherit exactly this.
var allowedRoots = []string{"k8s.io/apimachinery", "github.com/gardener/gardener/pkg/apis"}

// goCmd runs the go command in the API module's root (operator/api). It reads go.mod and go.sum itself first: go
// test caches a result by the files the test opens, and the go command it runs opens them in another process.
func goCmd(t *testing.T, args ...string) []byte {
	t.Helper()
	for _, f := range []string{"../go.mod", "../go.sum"} {
		if _, err := os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
	cmd := moduleGo(args...)
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// moduleGo is the go command on this module alone, as its importers see it: outside the repository's workspace
// (go.work), whose build list also holds the operator's dependencies.
func moduleGo(args ...string) *exec.Cmd {
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	return cmd
}

type module struct {
	Path      string
	Version   string
	Main      bool
	Indirect  bool
	GoVersion string
}

func listModules(t *testing.T) []module {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(goCmd(t, "list", "-m", "-json", "all")))
	var mods []module
	for {
		var m module
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("decode go list -m -json: %v", err)
		}
		mods = append(mods, m)
	}
	if len(mods) < 10 {
		t.Fatalf("go list -m all returned only %d modules; the check would prove nothing", len(mods))
	}
	return mods
}

// TestModuleListsOnlyAPIMachineryAndGardenerAPIs: `go list -m all` in operator/api lists the module itself,
// apimachinery, Gardener's API module and modules reachable from those two in the requirement graph, at versions
// they require. A new direct requirement, or a version raised by this module, fails.
func TestModuleListsOnlyAPIMachineryAndGardenerAPIs(t *testing.T) {
	mods := listModules(t)
	var main module
	for _, m := range mods {
		if m.Main {
			main = m
		}
	}
	if main.Path != "github.com/kyma-project/kim/operator/api" {
		t.Fatalf("main module %q; the test must run inside operator/api", main.Path)
	}

	// Requirement edges "a@v b@w", without the main module's own (its indirect requirements only record versions).
	edges := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(goCmd(t, "mod", "graph")))
	var direct []string
	for sc.Scan() {
		from, to, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(to, "go@") || strings.HasPrefix(to, "toolchain@") {
			continue
		}
		if from == main.Path {
			direct = append(direct, to)
			continue
		}
		edges[from] = append(edges[from], to)
	}
	reached := map[string]bool{}
	var queue []string
	for _, m := range mods {
		for _, root := range allowedRoots {
			if m.Path == root {
				queue = append(queue, m.Path+"@"+m.Version)
			}
		}
	}
	if len(queue) != len(allowedRoots) {
		t.Fatalf("build list lacks one of %v", allowedRoots)
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if reached[n] {
			continue
		}
		reached[n] = true
		queue = append(queue, edges[n]...)
	}
	for _, m := range mods {
		if m.Main {
			continue
		}
		if !reached[m.Path+"@"+m.Version] {
			t.Errorf("%s %s is in the build list but neither apimachinery nor Gardener's API module requires it (at this version)", m.Path, m.Version)
		}
		if !m.Indirect && !isRoot(m.Path) {
			t.Errorf("%s is a direct requirement; the API module may require only %v directly", m.Path, allowedRoots)
		}
	}
	if len(direct) == 0 {
		t.Fatal("go mod graph shows no requirement of the main module")
	}
}

func isRoot(path string) bool {
	for _, r := range allowedRoots {
		if path == r {
			return true
		}
	}
	return false
}

// TestModuleGoVersionIsNoHigherThanItsDependencies: the go directive is a floor for every importer, so it must not
// exceed what apimachinery and Gardener's API module demand already (the operator's own module needs a later patch
// release for its sandbox; importers must not inherit that).
func TestModuleGoVersionIsNoHigherThanItsDependencies(t *testing.T) {
	var own, highest string
	for _, m := range listModules(t) {
		switch {
		case m.Main:
			own = m.GoVersion
		case isRoot(m.Path) && compareGo(m.GoVersion, highest) > 0:
			highest = m.GoVersion
		}
	}
	if own == "" || highest == "" {
		t.Fatalf("go versions not found (own %q, dependencies %q)", own, highest)
	}
	if compareGo(own, highest) > 0 {
		t.Errorf("operator/api/go.mod says go %s, but its dependencies need only go %s; lower it", own, highest)
	}
}

// TestPackageImportsStayLean guards what importers of this package compile: apimachinery and Gardener's lean API
// packages, never clients, controller-runtime or the full Gardener module.
func TestPackageImportsStayLean(t *testing.T) {
	cmd := moduleGo("list", "-deps", ".")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := []string{
		"sigs.k8s.io/controller-runtime",
		"k8s.io/client-go",
		"k8s.io/apiserver",
		"github.com/prometheus/",
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list returned only %d packages; the check would prove nothing", len(deps))
	}
	for _, dep := range deps {
		for _, f := range forbidden {
			if strings.HasPrefix(dep, f) {
				t.Errorf("operator/api/v1 depends on %s; keep the public API lean", dep)
			}
		}
		if strings.HasPrefix(dep, "github.com/gardener/") && !strings.HasPrefix(dep, "github.com/gardener/gardener/pkg/apis/") {
			t.Errorf("operator/api/v1 depends on %s; only Gardener's lean pkg/apis module is allowed", dep)
		}
	}
}

// compareGo compares go directive versions ("1.26", "1.26.5"); a missing component counts as 0. The test cannot use
// golang.org/x/mod: it would become a requirement of the module it guards.
func compareGo(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}
