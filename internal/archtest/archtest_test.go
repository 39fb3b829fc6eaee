package archtest

import (
	"errors"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// modulePackages is every package of the module: import path to its
// go/build description, found by walking the tree from go.mod, skipping
// what the go command skips (testdata, names starting with . or _) and
// nested modules.
func modulePackages(t *testing.T) (module string, pkgs map[string]*build.Package) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("go.mod names no module")
	}
	module = string(m[1])
	pkgs = map[string]*build.Package{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if path != root {
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		p, err := build.ImportDir(path, 0)
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		p.ImportPath = module
		if rel != "." {
			p.ImportPath += "/" + filepath.ToSlash(rel)
		}
		pkgs[p.ImportPath] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("found only %d packages under %s", len(pkgs), root)
	}
	return module, pkgs
}

// Every package under internal/, with its tests, stays below workflows/
// and activities/, directly or through another package of the module.
func TestInternalPackagesStayBelowWorkflowsAndActivities(t *testing.T) {
	t.Parallel()
	module, pkgs := modulePackages(t)
	above := []string{module + "/workflows", module + "/activities"}
	// via returns a chain of imports from path to a package above, if any.
	var via func(path string, seen map[string]bool) []string
	via = func(path string, seen map[string]bool) []string {
		if slices.Contains(above, path) {
			return []string{path}
		}
		p, ok := pkgs[path]
		if !ok || seen[path] {
			return nil
		}
		seen[path] = true
		for _, imp := range p.Imports {
			if chain := via(imp, seen); chain != nil {
				return append([]string{path}, chain...)
			}
		}
		return nil
	}
	checked := 0
	for path, p := range pkgs {
		if !strings.HasPrefix(path, module+"/internal/") {
			continue
		}
		checked++
		for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
			if imp == path {
				continue // the external test package importing its package
			}
			if chain := via(imp, map[string]bool{}); chain != nil {
				t.Errorf("%s imports %s: internal packages must not depend on %s", path, strings.Join(chain, " → "), strings.Join(above, " or "))
			}
		}
	}
	if checked == 0 {
		t.Fatal("no package under internal/")
	}
}

// Every package says what it is for in a package comment, in a file that
// is not a test (go doc reads no other): a test-only package needs a
// doc.go.
func TestEveryPackageHasAPackageComment(t *testing.T) {
	t.Parallel()
	_, pkgs := modulePackages(t)
	for path, p := range pkgs {
		if len(p.GoFiles) == 0 {
			t.Errorf("%s has only test files, so go doc sees no package comment: add a doc.go with one", path)
			continue
		}
		documented := false
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(p.Dir, name), nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			documented = documented || strings.TrimSpace(f.Doc.Text()) != ""
		}
		if !documented {
			t.Errorf("%s has no package comment: say what the package is for in a comment before its package clause", path)
		}
	}
}

// Iceberg stays behind internal/lake: no other package's code imports
// iceberg-go or arrow-go (its reader), and laketest, which reads tables as
// another engine would, is for tests and the benchmark only (which, like
// tests, may read a table through iceberg-go itself).
func TestIcebergStaysBehindLake(t *testing.T) {
	t.Parallel()
	module, pkgs := modulePackages(t)
	lake, laketest := module+"/internal/lake", module+"/internal/lake/laketest"
	for path, p := range pkgs {
		for _, imp := range p.Imports {
			foreign := strings.HasPrefix(imp, "github.com/apache/iceberg-go") || strings.HasPrefix(imp, "github.com/apache/arrow-go")
			if foreign && path != lake && path != laketest && path != module+"/bench" {
				t.Errorf("%s imports %s: Iceberg belongs behind %s", path, imp, lake)
			}
			if imp == laketest && path != module+"/bench" {
				t.Errorf("%s imports %s outside its tests", path, laketest)
			}
		}
	}
}
