package controllers_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kyma-project/kim/internal/archtest"
)

// Each controller declares what it needs: a Deps struct next to it, filled by the composition root, and one
// AddToManager(mgr manager.Manager, deps Deps) error taking exactly that. No controller reaches for a shared bag
// or takes another package's dependencies. A controller package registers one controller (runnables beside it, such
// as a listener or a migration, are its own business), so its Deps says what that one controller needs; and the
// composition root builds each Deps where the adapters are made, with no bag of ports between them.

// notControllers are the packages under operator/controllers that hold no controller.
var notControllers = []string{"skeleton"}

// bagNames are type names that, taken from another package, are a shared bag of dependencies.
var bagNames = []string{"Deps", "Ports", "Settings", "SelfService"}

// depsViolations checks the non-test files of one controller package (file name -> source).
func depsViolations(files map[string]string) []string {
	parsed, out := parseAll(files)
	hasDeps, hasAdd, registrations := false, false, 0
	for _, p := range parsed {
		name, f := p.name, p.file
		registrations += controllerRegistrations(f)
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
	if registrations != 1 {
		out = append(out, fmt.Sprintf("registers %d controllers, want exactly one (give another controller a package of its own)", registrations))
	}
	return out
}

// parsedFile is one parsed source file and its name.
type parsedFile struct {
	name string
	file *ast.File
}

// parseAll parses files (file name -> source) in the order of their names; a file that does not parse is reported.
func parseAll(files map[string]string) ([]parsedFile, []string) {
	fset := token.NewFileSet()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []parsedFile
	var problems []string
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, files[name], parser.SkipObjectResolution)
		if err != nil {
			problems = append(problems, name+": "+err.Error())
			continue
		}
		out = append(out, parsedFile{name: name, file: f})
	}
	return out, problems
}

// controllerBuilders are the functions that register a controller with a manager, by import path.
var controllerBuilders = map[string][]string{
	"sigs.k8s.io/controller-runtime":                {"NewControllerManagedBy"},
	"sigs.k8s.io/controller-runtime/pkg/builder":    {"ControllerManagedBy", "TypedControllerManagedBy"},
	"sigs.k8s.io/controller-runtime/pkg/controller": {"New", "NewTyped", "NewUnmanaged", "NewTypedUnmanaged"},
}

// controllerRegistrations counts the calls in f that register a controller (controllerBuilders).
func controllerRegistrations(f *ast.File) int {
	imported := importNames(f)
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		call, ok := node.(*ast.CallExpr)
		if !ok {
			return true
		}
		if fn := call.Fun; fn != nil {
			if idx, ok := fn.(*ast.IndexExpr); ok { // a generic builder with its type argument
				fn = idx.X
			}
			if sel, ok := fn.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && slices.Contains(controllerBuilders[imported[x.Name]], sel.Sel.Name) {
					n++
				}
			}
		}
		return true
	})
	return n
}

// importNames maps the names f refers to its imports by to their paths.
func importNames(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := strings.ReplaceAll(path[strings.LastIndex(path, "/")+1:], "-", "")
		if imp.Name != nil {
			name = imp.Name.Name
		}
		out[name] = path
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
	const header = "package x\nimport (\n\"sigs.k8s.io/controller-runtime/pkg/manager\"\nctrl \"sigs.k8s.io/controller-runtime\"\n)\n"
	const own = "type Deps struct{ Workers int }\nfunc AddToManager(mgr manager.Manager, deps Deps) error { return ctrl.NewControllerManagedBy(mgr).Complete(nil) }\n"
	cases := []struct {
		reason string
		files  map[string]string
		want   int
	}{
		{"its own Deps and AddToManager is clean", map[string]string{"c.go": header + own}, 0},
		{"a shared bag is reported", map[string]string{"c.go": header + own + "func NewReconciler(p app.Ports) {}\n"}, 1},
		{"another package's Deps is reported", map[string]string{"c.go": header + own + "func Setup(d other.Deps) {}\n"}, 1},
		{"AddToManager taking more than its Deps is reported", map[string]string{"c.go": header +
			"type Deps struct{}\nfunc AddToManager(mgr manager.Manager, deps Deps, extra int) error { return ctrl.NewControllerManagedBy(mgr).Complete(nil) }\n"}, 1},
		{"no Deps, no AddToManager and no controller are reported", map[string]string{"c.go": "package x\n"}, 3},
		{"a second controller, in another file, is reported", map[string]string{"c.go": header + own,
			"reaper.go": "package x\nimport b \"sigs.k8s.io/controller-runtime/pkg/builder\"\nfunc addReaper(mgr manager.Manager) error { return b.ControllerManagedBy(mgr).Complete(nil) }\n"}, 1},
		{"a controller built with pkg/controller counts", map[string]string{"c.go": header + own,
			"raw.go": "package x\nimport \"sigs.k8s.io/controller-runtime/pkg/controller\"\nfunc raw(mgr manager.Manager) { controller.NewTyped[int](\"raw\", mgr, controller.TypedOptions[int]{}) }\n"}, 1},
		{"runnables and other New functions are not controllers", map[string]string{"c.go": header + own,
			"run.go": "package x\nimport \"errors\"\nfunc run(mgr manager.Manager) error { _ = mgr.Add(nil); return errors.New(\"x\") }\n"}, 0},
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
		files := archtest.Sources(t, e.Name())
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

// The composition root (operator/app) builds each controller's Deps where the adapters are made. A struct there
// that carries the ports of several controllers is a bag between the adapters and the Deps: it hides which controller
// needs what, and every Deps is then copied from it field by field.

// rootBagNames are the names the composition root's bags had (the ports, the audit log ports, the settings).
var rootBagNames = []string{"Ports", "AuditLogPorts", "Settings", "settings"}

// maxRootPortFields is how many ports (core/ports types, or types of a controller package such as its Deps) a
// struct of the composition root may carry: a test seam names the adapter or two it replaces; a bag carries many.
const maxRootPortFields = 2

// rootBags checks the non-test files of the composition root (file name -> source).
func rootBags(files map[string]string) []string {
	parsed, out := parseAll(files)
	for _, p := range parsed {
		name, f := p.name, p.file
		imported := importNames(f)
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			if slices.Contains(rootBagNames, ts.Name.Name) {
				out = append(out, fmt.Sprintf("%s: type %s (build each controller's Deps where its adapters are made)", name, ts.Name.Name))
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			var portFields []string
			for _, field := range st.Fields.List {
				if path := portType(field.Type, imported); path != "" {
					for range max(len(field.Names), 1) {
						portFields = append(portFields, path)
					}
				}
			}
			if len(portFields) > maxRootPortFields {
				out = append(out, fmt.Sprintf("%s: struct %s carries %d ports (at most %d: build each controller's Deps where its adapters are made)",
					name, ts.Name.Name, len(portFields), maxRootPortFields))
			}
			return true
		})
	}
	return out
}

// portType returns the import path of the port a field's type is (also through pointers, slices and map values, not
// into function types), or "" when it is no port.
func portType(e ast.Expr, imported map[string]string) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ArrayType:
			e = t.Elt
		case *ast.MapType:
			e = t.Value
		case *ast.SelectorExpr:
			x, ok := t.X.(*ast.Ident)
			if !ok {
				return ""
			}
			path := imported[x.Name]
			if path == module+"core/ports" || strings.HasPrefix(path, controllers+"/") {
				return path
			}
			return ""
		default:
			return ""
		}
	}
}

func TestRootBagsOnSyntheticPackages(t *testing.T) {
	const header = "package app\nimport (\n\"github.com/kyma-project/kim/core/ports\"\nrc \"" + controllers + "/registrycachesync\"\n)\n"
	cases := []struct {
		reason string
		files  map[string]string
		want   int
	}{
		{"a test seam of two ports and other fields is clean", map[string]string{"o.go": header +
			"type replacements struct { clock ports.Clock; issuer ports.KubeconfigIssuer; wrap func(ports.RuntimeConfigurator) ports.RuntimeConfigurator; n int }\n"}, 0},
		{"a struct of many ports is reported", map[string]string{"p.go": header +
			"type adapters struct { Clock ports.Clock; Shoots, Lister ports.Shoots; Cache *rc.Deps }\n"}, 1},
		{"a bag by its old name is reported, with or without ports", map[string]string{"s.go": header +
			"type settings struct { Namespaces []string }\n"}, 1},
		{"pointers and slices of ports count", map[string]string{"p.go": header +
			"type ports2 struct { A *ports.Clock; B []ports.Shoots; C map[string]ports.Seeds }\n"}, 1},
	}
	for _, tc := range cases {
		if got := rootBags(tc.files); len(got) != tc.want {
			t.Errorf("%s: want %d violations, got %q", tc.reason, tc.want, got)
		}
	}
}

// TestCompositionRootHasNoBag applies the check to the composition root's non-test files.
func TestCompositionRootHasNoBag(t *testing.T) {
	files := archtest.Sources(t, "../app")
	if len(files) < 5 {
		t.Fatalf("found %d files of operator/app: the check would prove nothing", len(files))
	}
	for _, v := range rootBags(files) {
		t.Errorf("operator/app: %s", v)
	}
}
