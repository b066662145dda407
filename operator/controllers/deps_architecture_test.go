package controllers_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kyma-project/kim/internal/archtest"
)

// Each controller declares what it needs: a Deps struct next to it, filled by the composition root, and one
// AddToManager(mgr manager.Manager, deps Deps) error taking exactly that. No controller reaches for a shared bag
// or takes another package's dependencies.

// notControllers are the packages under operator/controllers that hold no controller.
var notControllers = []string{"skeleton"}

// bagNames are type names that, taken from another package, are a shared bag of dependencies.
var bagNames = []string{"Deps", "Ports", "Settings", "SelfService"}

// depsViolations checks the non-test files of one controller package (file name -> source).
func depsViolations(files map[string]string) []string {
	fset := token.NewFileSet()
	var out []string
	hasDeps, hasAdd := false, false
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, files[name], parser.SkipObjectResolution)
		if err != nil {
			out = append(out, name+": "+err.Error())
			continue
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.Name == "Deps" {
						_, isStruct := ts.Type.(*ast.StructType)
						hasDeps = hasDeps || isStruct
					}
				}
			case *ast.FuncDecl:
				if d.Recv != nil || !d.Name.IsExported() {
					continue
				}
				if d.Name.Name == "AddToManager" {
					hasAdd = true
					if !addToManagerShape(d.Type) {
						out = append(out, name+": AddToManager must be func(manager.Manager, Deps) error")
					}
				}
				for _, p := range d.Type.Params.List {
					if sel, ok := p.Type.(*ast.SelectorExpr); ok && slices.Contains(bagNames, sel.Sel.Name) {
						out = append(out, name+": "+d.Name.Name+" takes "+types(sel)+" (take this package's Deps)")
					}
				}
			}
		}
	}
	if !hasDeps {
		out = append(out, "no type Deps struct (declare what the controller needs next to it)")
	}
	if !hasAdd {
		out = append(out, "no AddToManager(manager.Manager, Deps) error")
	}
	return out
}

func types(sel *ast.SelectorExpr) string {
	if x, ok := sel.X.(*ast.Ident); ok {
		return x.Name + "." + sel.Sel.Name
	}
	return sel.Sel.Name
}

func addToManagerShape(ft *ast.FuncType) bool {
	ps := ft.Params.List
	if len(ps) != 2 || len(ps[0].Names) > 1 || len(ps[1].Names) > 1 || ft.Results == nil || len(ft.Results.List) != 1 {
		return false
	}
	mgr, ok := ps[0].Type.(*ast.SelectorExpr)
	if !ok || mgr.Sel.Name != "Manager" {
		return false
	}
	deps, ok := ps[1].Type.(*ast.Ident)
	res, okRes := ft.Results.List[0].Type.(*ast.Ident)
	return ok && deps.Name == "Deps" && okRes && res.Name == "error"
}

func TestDepsViolationsOnSyntheticPackages(t *testing.T) {
	const header = "package x\nimport \"sigs.k8s.io/controller-runtime/pkg/manager\"\n"
	const own = "type Deps struct{ Workers int }\nfunc AddToManager(mgr manager.Manager, deps Deps) error { return nil }\n"
	cases := []struct {
		reason string
		files  map[string]string
		want   int
	}{
		{"its own Deps and AddToManager is clean", map[string]string{"c.go": header + own}, 0},
		{"a shared bag is reported", map[string]string{"c.go": header + own + "func NewReconciler(p app.Ports) {}\n"}, 1},
		{"another package's Deps is reported", map[string]string{"c.go": header + own + "func Setup(d other.Deps) {}\n"}, 1},
		{"AddToManager taking more than its Deps is reported", map[string]string{"c.go": header +
			"type Deps struct{}\nfunc AddToManager(mgr manager.Manager, deps Deps, extra int) error { return nil }\n"}, 1},
		{"no Deps and no AddToManager are reported", map[string]string{"c.go": "package x\n"}, 2},
	}
	for _, tc := range cases {
		if got := depsViolations(tc.files); len(got) != tc.want {
			t.Errorf("%s: want %d violations, got %q", tc.reason, tc.want, got)
		}
	}
}

// TestControllersTakeOnlyTheirDeps applies the check to every controller package (its non-test files).
func TestControllersTakeOnlyTheirDeps(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() || slices.Contains(notControllers, e.Name()) {
			continue
		}
		sources, err := filepath.Glob(filepath.Join(e.Name(), "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files := map[string]string{}
		for _, s := range sources {
			if strings.HasSuffix(s, "_test.go") {
				continue
			}
			b, err := os.ReadFile(s)
			if err != nil {
				t.Fatal(err)
			}
			files[s] = string(b)
		}
		if len(files) == 0 {
			continue
		}
		n++
		for _, v := range depsViolations(files) {
			t.Errorf("controller package %s: %s", e.Name(), v)
		}
	}
	if n < 5 {
		t.Fatalf("found %d controller packages: the check would prove nothing", n)
	}
}

// TestBinariesImportNoAdapter: the binaries under operator/cmd get what they reach the KCP and the garden with from
// the composition root's constructors (operator/app); none imports an adapter itself (non-test code).
func TestBinariesImportNoAdapter(t *testing.T) {
	cmd := module + "operator/cmd/"
	n := 0
	for _, p := range archtest.List(t, module+"operator/cmd/...") {
		if !strings.HasPrefix(p.ImportPath, cmd) {
			continue
		}
		n++
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, adapters) {
				t.Errorf("binary package %s imports %s (build it in operator/app and call that constructor)", p.ImportPath, imp)
			}
		}
	}
	if n < 3 {
		t.Fatalf("go list found %d binary packages: the check would prove nothing", n)
	}
}
