package deploy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"handoff/internal/kafka"
	"handoff/internal/restcatalog"
	"handoff/internal/secure"
	"handoff/internal/storage"
	"handoff/internal/testenv"
)

// The environment the deployment may set is what the code reads, found by
// reading the code itself: nothing here repeats a list of names.

// envCalls are the calls whose argument at the index names an environment
// variable: the os functions, and the helpers of worker/config.go (envOr)
// and starter/cli (bindEnv(flags, flag, env)).
var envCalls = map[string]int{"os.Getenv": 0, "os.LookupEnv": 0, "envOr": 0, "bindEnv": 2}

// envReaders are the functions of our packages that read a list of
// variables through the getenv they are given: a package that calls one
// reads its list.
// Keys are import path and function name.
var envReaders = map[[2]string][]string{
	{"handoff/internal/storage", "S3ConfigFromEnv"}:    storage.S3EnvNames,
	{"handoff/internal/kafka", "SecurityFromEnv"}:      kafka.SecurityEnvNames,
	{"handoff/internal/secure", "TemporalFromEnv"}:     secure.TemporalEnvNames,
	{"handoff/internal/restcatalog", "SecretsFromEnv"}: restcatalog.EnvNames,
}

// workerEnv is every environment variable the worker reads: the names its
// Go files (tests excluded) pass to envCalls, plus the lists of the
// envReaders it calls.
func workerEnv(t *testing.T) map[string]bool {
	t.Helper()
	return parseDir(t, filepath.Join(repoRoot(t), "worker")).allEnvReads(t)
}

// starterEnv is every environment variable the starter CLI reads.
func starterEnv(t *testing.T) map[string]bool {
	t.Helper()
	return parseDir(t, filepath.Join(repoRoot(t), "starter", "cli")).allEnvReads(t)
}

func (p goPackage) allEnvReads(t *testing.T) map[string]bool {
	t.Helper()
	names := p.envReads(t)
	for fn, list := range envReaders {
		if p.usesFunc(fn[0], fn[1]) {
			for _, n := range list {
				names[n] = true
			}
		}
	}
	return names
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

type goPackage struct {
	dir    string
	files  []*ast.File
	consts map[string]string // package-level string constants
}

// parseDir parses the non-test Go files of dir.
func parseDir(t *testing.T, dir string) goPackage {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := goPackage{dir: dir, consts: map[string]string{}}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		p.files = append(p.files, f)
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.CONST {
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if i < len(vs.Values) {
							if s, ok := stringLit(vs.Values[i]); ok {
								p.consts[name.Name] = s
							}
						}
					}
				}
			}
		}
	}
	if len(p.files) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	return p
}

// envReads collects the names passed to envCalls. An argument that is
// neither a string literal nor a package constant fails the test: the
// deployment could not be checked against it.
func (p goPackage) envReads(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, f := range p.files {
		ast.Inspect(f, func(n ast.Node) bool {
			if fd, ok := n.(*ast.FuncDecl); ok && fd.Recv == nil {
				_, helper := envCalls[fd.Name.Name]
				return !helper // a helper's own os.Getenv(param) names nothing
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			idx, ok := envCalls[callName(call.Fun)]
			if !ok || idx >= len(call.Args) {
				return true
			}
			arg := call.Args[idx]
			name, ok := stringLit(arg)
			if id, isIdent := arg.(*ast.Ident); !ok && isIdent {
				name, ok = p.consts[id.Name]
			}
			if !ok {
				t.Errorf("%s: %s reads an environment variable named by %T, not a constant", p.dir, callName(call.Fun), arg)
				return true
			}
			names[name] = true
			return true
		})
	}
	return names
}

// uses reports whether the package refers to pkg.name.
func (p goPackage) uses(pkg, name string) bool {
	found := false
	for _, f := range p.files {
		ast.Inspect(f, func(n ast.Node) bool {
			if callName(n) == pkg+"."+name {
				found = true
			}
			return !found
		})
	}
	return found
}

// usesFunc reports whether a file of the package refers to function name
// of the package at import path, under whatever name the file imports it.
func (p goPackage) usesFunc(path, name string) bool {
	for _, f := range p.files {
		for _, imp := range f.Imports {
			if ip, err := strconv.Unquote(imp.Path.Value); err != nil || ip != path {
				continue
			}
			local := path[strings.LastIndexByte(path, '/')+1:]
			if imp.Name != nil {
				local = imp.Name.Name
			}
			if (goPackage{files: []*ast.File{f}}).uses(local, name) {
				return true
			}
		}
	}
	return false
}

func callName(e ast.Node) string {
	switch f := e.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok {
			return x.Name + "." + f.Sel.Name
		}
	}
	return ""
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

func sortedKeys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }

func TestEnvReadsFindsWhatTheCodeReads(t *testing.T) {
	worker := workerEnv(t)
	for _, want := range []string{"DATABASE_URL", "TEMPORAL_ADDRESS", "KAFKA_BROKERS", "HANDOFF_DEEP_STORAGE", "HANDOFF_HTTP_ADDR", "HANDOFF_SHUTDOWN_GRACE"} {
		if !worker[want] {
			t.Errorf("worker env %q lacks %s", sortedKeys(worker), want)
		}
	}
	for _, want := range []string{"AWS_SECRET_ACCESS_KEY", "KAFKA_SASL_PASSWORD", "KAFKA_TLS_CA_FILE", "TEMPORAL_API_KEY", "TEMPORAL_TLS_CLIENT_CERT_PATH"} {
		if !worker[want] {
			t.Errorf("worker env %q lacks %s", sortedKeys(worker), want)
		}
	}
	starter := starterEnv(t)
	for _, want := range []string{"TEMPORAL_ADDRESS", "TEMPORAL_UI_URL", "KAFKA_BROKERS", "DATABASE_URL", "KAFKA_SASL_PASSWORD", "TEMPORAL_API_KEY"} {
		if !starter[want] {
			t.Errorf("starter env %q lacks %s", sortedKeys(starter), want)
		}
	}

	// Constants, helpers and the S3 names of a package that reads them.
	dir := t.TempDir()
	src := `package main

import (
	"os"
	"handoff/internal/storage"
)

const profileEnv = "X_PROFILE"

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func main() {
	_ = os.Getenv(profileEnv)
	_, _ = os.LookupEnv("X_LOOKUP")
	_ = envOr("X_OR", "d")
	_ = storage.S3ConfigFromEnv(os.Getenv)
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main_test.go"), []byte("package main\nimport \"os\"\nvar _ = os.Getenv(\"X_TEST_ONLY\")\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := parseDir(t, dir)
	if got := sortedKeys(p.envReads(t)); !slices.Equal(got, []string{"X_LOOKUP", "X_OR", "X_PROFILE"}) {
		t.Errorf("envReads = %q", got)
	}
	if !p.uses("storage", "S3ConfigFromEnv") || p.uses("storage", "NewS3") {
		t.Error("uses does not tell which storage functions the package calls")
	}
	if all := p.allEnvReads(t); !all["AWS_SECRET_ACCESS_KEY"] || !all["X_OR"] || all["KAFKA_SASL_PASSWORD"] || all["TEMPORAL_API_KEY"] {
		t.Errorf("allEnvReads = %q: want the S3 names and X_*, not the Kafka or Temporal security names", sortedKeys(all))
	}
}
