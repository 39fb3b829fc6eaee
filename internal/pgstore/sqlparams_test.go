package pgstore_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/testenv"
)

// TestAllSQLIsParameterised reads every Go file of the module and checks
// that each SQL statement handed to Exec, Query or QueryRow is a string
// literal (values go in as $n parameters), or a literal joined with an
// identifier quoted by pgx.Identifier.Sanitize (CREATE/DROP DATABASE take
// no parameters). Anything built from values would be an injection waiting
// for a hostile name.
func TestAllSQLIsParameterised(t *testing.T) {
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	fset := token.NewFileSet()
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) < 2 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Exec" && sel.Sel.Name != "Query" && sel.Sel.Name != "QueryRow") {
				return true
			}
			if id, ok := call.Args[0].(*ast.Ident); !ok || !strings.HasPrefix(strings.ToLower(id.Name), "ctx") {
				return true // not a database call (e.g. url.Query)
			}
			checked++
			if !safeSQL(call.Args[1]) {
				t.Errorf("%s: SQL built from values; use a literal with $n parameters", fset.Position(call.Pos()))
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, checked, 20, "the walk must find the module's SQL")
}

func safeSQL(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.BasicLit:
		return x.Kind == token.STRING
	case *ast.BinaryExpr:
		return x.Op == token.ADD && safeSQL(x.X) && safeSQL(x.Y)
	case *ast.CallExpr: // pgx.Identifier{...}.Sanitize()
		sel, ok := x.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Sanitize" {
			return false
		}
		lit, ok := sel.X.(*ast.CompositeLit)
		if !ok {
			return false
		}
		typ, ok := lit.Type.(*ast.SelectorExpr)
		return ok && typ.Sel.Name == "Identifier"
	}
	return false
}
