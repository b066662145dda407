package archtest_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// infoWithError finds logr Info calls that carry an error as a key-value pair ("error" or "err"): an error path
// logged at info level, which alerting on error logs and `level=error` filters miss. logr's Error(err, msg, ...) is
// the call for it.
func infoWithError(path string, src any) ([]string, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		return nil, err
	}
	var found []string
	ast.Inspect(file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Info" || len(call.Args) < 3 {
			return true
		}
		for i := 1; i < len(call.Args); i += 2 { // keys stand at odd positions after the message
			lit, ok := call.Args[i].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				continue
			}
			if key, _ := strconv.Unquote(lit.Value); key == "error" || key == "err" {
				found = append(found, fset.Position(call.Pos()).String())
			}
		}
		return true
	})
	return found, nil
}

// TestErrorsAreLoggedAtErrorLevel: no code that ships logs an error with Info.
func TestErrorsAreLoggedAtErrorLevel(t *testing.T) {
	root := filepath.Join("..", "..")
	files := 0
	for _, dir := range []string{"operator", "adapters", "internal", "core"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			files++
			found, err := infoWithError(path, nil)
			for _, at := range found {
				t.Errorf("%s: an error logged with Info; use Error(err, msg, ...)", at)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 100 {
		t.Fatalf("only %d files read: the check would prove nothing", files)
	}
}

// TestInfoWithErrorFindsTheShape: the reader finds the shape it forbids and leaves other Info calls alone.
func TestInfoWithErrorFindsTheShape(t *testing.T) {
	src := `package x
func f() {
	log.Info("sweep failed", "runtimeID", id, "error", err.Error())
	log.Info("fine", "runtimeID", id)
	log.Error(err, "sweep failed", "runtimeID", id)
}`
	found, err := infoWithError("x.go", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || !strings.HasPrefix(found[0], "x.go:3:") {
		t.Errorf("found %v, want the Info call of line 3 only", found)
	}
}
