package docscheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
)

// flagDefiners are the flag.FlagSet and pflag.FlagSet methods that define a flag, with the position of the name
// argument (pflag's ...P forms take the shorthand after it).
var flagDefiners = map[string]int{
	"String": 0, "Bool": 0, "Int": 0, "Int64": 0, "Uint": 0, "Uint64": 0, "Float64": 0, "Duration": 0,
	"Func": 0, "BoolFunc": 0,
	"StringVar": 1, "BoolVar": 1, "IntVar": 1, "Int64Var": 1, "UintVar": 1, "Uint64Var": 1, "Float64Var": 1,
	"DurationVar": 1, "Var": 1, "TextVar": 1,
	"StringP": 0, "BoolP": 0, "IntP": 0, "DurationP": 0, "StringArray": 0, "StringSlice": 0,
	"StringVarP": 1, "BoolVarP": 1, "IntVarP": 1, "DurationVarP": 1, "VarP": 1,
	"StringArrayVar": 1, "StringArrayVarP": 1, "StringSliceVar": 1, "StringSliceVarP": 1,
}

// DefinedFlags returns the names of the command-line flags defined in the non-test Go files below dir (relative to
// the repository), by reading the source: calls such as fs.StringVar(&v, "name", ...) with a literal name. It reads
// the files (so `go test` caching notices changes), unlike running the binaries.
func DefinedFlags(root, dir string) (map[string]bool, error) {
	out := map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return fmt.Errorf("parse %s: %w", path, err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			idx, ok := flagDefiners[sel.Sel.Name]
			if !ok || len(call.Args) <= idx {
				return true
			}
			lit, ok := call.Args[idx].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if name, err := strconv.Unquote(lit.Value); err == nil && name != "" && !strings.ContainsAny(name, " %") {
				out[name] = true
			}
			return true
		})
		return nil
	})
	return out, err
}

// StringLiterals returns every string literal of the non-test Go files below dirs (relative to the repository): the
// values the code can put into a metric label come from them (constants, or literals at the call).
func StringLiterals(root string, dirs ...string) (map[string]bool, error) {
	out := map[string]bool{}
	fset := token.NewFileSet()
	for _, dir := range dirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			file, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return fmt.Errorf("parse %s: %w", path, err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if v, err := strconv.Unquote(lit.Value); err == nil {
						out[v] = true
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
