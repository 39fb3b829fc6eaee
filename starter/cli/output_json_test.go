package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"handoff/internal/jsoncheck"
)

// printedResults is every type a command prints, one value of each.
var printedResults = []textWriter{
	checkpointResult{}, historyResult{}, listResult{}, migrateUpResult{}, migrateStatusResult{},
	parseErrorsResult{}, produceResult{}, resetResult{}, segmentsResult{}, startResult{},
	statusResult{}, watchLine{}, stopResult{}, operationResult{}, specUpdateResult{}, validateResult{},
	tableResult{}, tableCreateResult{},
	compactionSetResult{}, compactionShowResult{}, compactionStatusResult{}, compactionStopResult{},
	retentionSetResult{}, retentionShowResult{}, killResult{},
}

// Every -o json document has lowerCamel keys and durations as strings:
// each result, with every field set, printed as -o json prints it.
func TestJSONOutputsFollowTheConvention(t *testing.T) {
	t.Parallel()
	for _, r := range printedResults {
		name := reflect.TypeOf(r).Name()
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := reflect.New(reflect.TypeOf(r))
			jsoncheck.Fill(p.Interface())
			var out strings.Builder
			format := outputJSON
			require.NoError(t, printer{w: &out, format: &format}.print(p.Elem().Interface().(textWriter)))
			assert.NoError(t, jsoncheck.Check([]byte(out.String())), out.String())
		})
	}
}

// printedResults lists every type with a writeText method, so a new
// command's result is checked too.
func TestPrintedResultsListsEveryResult(t *testing.T) {
	t.Parallel()
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	require.NoError(t, err)
	var declared []string
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Recv == nil || fn.Name.Name != "writeText" {
					continue
				}
				typ := fn.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				declared = append(declared, typ.(*ast.Ident).Name)
			}
		}
	}
	var listed []string
	for _, r := range printedResults {
		listed = append(listed, reflect.TypeOf(r).Name())
	}
	sort.Strings(declared)
	sort.Strings(listed)
	require.NotEmpty(t, declared)
	assert.Equal(t, declared, slices.Compact(listed))
}
