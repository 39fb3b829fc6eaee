package segment

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

// duckDBDir is a Node project whose check.mjs reads a file with DuckDB.
// `npm ci --prefix internal/segment/testdata/duckdb` installs it; CI does.
const duckDBDir = "testdata/duckdb"

// duckDBOutput is what check.mjs prints.
type duckDBOutput struct {
	Columns []struct{ Name, Type string }
	Rows    [][]any
	// Metadata is the file's key/value metadata.
	Metadata map[string]string
}

// needDuckDB skips the test where the Node project is not installed,
// except in CI (CI set), where it must be.
func needDuckDB(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(duckDBDir, "node_modules")); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("%s/node_modules missing: run npm ci --prefix internal/segment/%s", duckDBDir, duckDBDir)
		}
		t.Fatalf("CI is set but %s/node_modules is missing: .ci/run must npm ci it", duckDBDir)
	}
}

// readWithDuckDB runs check.mjs on path.
func readWithDuckDB(t *testing.T, path string) duckDBOutput {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "check.mjs", path)
	cmd.Dir = duckDBDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "node check.mjs: %s", stderr.String())
	var res duckDBOutput
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&res))
	return res
}

// duckDBType is the DuckDB type each column type must read as.
func duckDBType(t domain.ColumnType) string {
	switch t {
	case domain.TypeString:
		return "VARCHAR"
	case domain.TypeLong:
		return "BIGINT"
	case domain.TypeDouble:
		return "DOUBLE"
	}
	return "BLOB"
}

// checkDuckDB asserts DuckDB sees schema's columns with the right types and
// returns its rows as domain.Rows.
func checkDuckDB(t *testing.T, path string, schema domain.Schema) []domain.Row {
	t.Helper()
	res := readWithDuckDB(t, path)
	cols := schema.Columns()
	require.Len(t, res.Columns, len(cols)+1)
	require.Equal(t, TimeColumn, res.Columns[0].Name)
	require.Contains(t, []string{"TIMESTAMP WITH TIME ZONE", "TIMESTAMP"}, res.Columns[0].Type)
	for i, c := range cols {
		require.Equal(t, c.Name, res.Columns[i+1].Name)
		require.Equal(t, duckDBType(c.Type), res.Columns[i+1].Type, "column %q", c.Name)
	}
	got, err := decodeSchema(res.Metadata[SchemaKey])
	require.NoError(t, err)
	require.Equal(t, schema, got, "schema from DuckDB's view of the metadata")

	rows := make([]domain.Row, 0, len(res.Rows))
	for _, cells := range res.Rows {
		require.Len(t, cells, len(cols)+1)
		ms, err := strconv.ParseInt(cells[0].(string), 10, 64)
		require.NoError(t, err)
		row := domain.Row{Time: ms}
		for i, c := range cols {
			v := fromDuckDB(t, cells[i+1], c.Type)
			if i < len(schema.Dims) {
				row.Dims = append(row.Dims, v)
			} else {
				row.Metrics = append(row.Metrics, v)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// fromDuckDB decodes a cell as check.mjs encodes it.
func fromDuckDB(t *testing.T, cell any, typ domain.ColumnType) domain.Value {
	t.Helper()
	if cell == nil {
		return domain.NullValue()
	}
	switch typ {
	case domain.TypeString:
		return domain.StringValue(cell.(string))
	case domain.TypeLong:
		n, err := strconv.ParseInt(cell.(string), 10, 64)
		require.NoError(t, err)
		return domain.LongValue(n)
	case domain.TypeDouble:
		switch c := cell.(type) {
		case json.Number:
			f, err := c.Float64()
			require.NoError(t, err)
			return domain.DoubleValue(f)
		case string:
			switch c {
			case "NaN":
				return domain.DoubleValue(math.NaN())
			case "-0":
				return domain.DoubleValue(math.Copysign(0, -1))
			}
			f, err := strconv.ParseFloat(c, 64) // Infinity, -Infinity
			require.NoError(t, err)
			return domain.DoubleValue(f)
		}
	case domain.TypeSketch:
		b, err := base64.StdEncoding.DecodeString(cell.(string))
		require.NoError(t, err)
		return domain.BytesValue(b)
	}
	t.Fatalf("cell %v of type %s", cell, typ)
	return domain.Value{}
}

// TestDuckDBReadsSegments checks the files against an independent reader:
// DuckDB must see the same columns, types, values and order.
func TestDuckDBReadsSegments(t *testing.T) {
	needDuckDB(t)
	dir := t.TempDir()

	t.Run("every type", func(t *testing.T) {
		rows := everyTypeRows(t) // distinct times, so ORDER BY __time is total
		path := writeSegment(t, dir, "every.parquet", everyType(), rows)
		want := padded(rows, len(everyType().Dims))
		slices.SortStableFunc(want, func(a, b domain.Row) int { return cmp.Compare(a.Time, b.Time) })
		require.Equal(t, want, checkDuckDB(t, path, everyType()))
	})

	t.Run("empty", func(t *testing.T) {
		path := writeSegment(t, dir, "empty.parquet", everyType(), nil)
		require.Empty(t, checkDuckDB(t, path, everyType()))
	})

	t.Run("several row groups", func(t *testing.T) {
		rows := makeRows(20_000, 1_700_000_000_000, 5)
		path := filepath.Join(dir, "groups.parquet")
		var buf bytes.Buffer
		_, err := writeAll(&buf, benchSchema(), rows, func(w *Writer) { w.maxRows = 6000 })
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
		require.Len(t, rowGroupSizes(t, buf.Bytes()), 4)
		got := checkDuckDB(t, path, benchSchema())
		// DuckDB orders by time only: compare in a total order.
		sortTotal(got, benchSchema())
		sortTotal(rows, benchSchema())
		require.Equal(t, rows, got)
	})
}

// sortTotal sorts by time, dimensions, then metrics.
func sortTotal(rows []domain.Row, s domain.Schema) {
	slices.SortStableFunc(rows, func(a, b domain.Row) int {
		if d := domain.CompareRows(a, b, s.Dims); d != 0 {
			return d
		}
		for i, m := range s.Metrics {
			if d := domain.CompareValues(a.Metrics[i], b.Metrics[i], m.ColumnType()); d != 0 {
				return d
			}
		}
		return 0
	})
}
