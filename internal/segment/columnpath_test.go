package segment

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

// The column path writes what the row path wrote: the same rows, row
// groups, statistics, dictionaries and metadata, and in fact the same
// bytes, since both hand parquet-go the same cells in the same page-sized
// chunks.
func TestColumnPathMatchesRowPath(t *testing.T) {
	everyIDs := FieldIDs{TimeColumn: 1, "zeta": 2, "Alpha": 3, "ünïcode": 4, "mid": 5, "count": 6, "sum_bytes": 7, "max_ratio": 8, "users": 9}
	cases := []struct {
		name              string
		schema            domain.Schema
		ids               FieldIDs
		rows              []domain.Row
		maxRows, maxBytes int64
	}{
		{name: "empty", schema: everyType()},
		{name: "every type", schema: everyType(), ids: everyIDs, rows: everyTypeRows(t),
			maxRows: rowGroupRows, maxBytes: rowGroupBytes},
		// 1500 is no multiple of a batch or a page chunk.
		{name: "row bound", schema: everyType(), ids: everyIDs, rows: randomEveryTypeRows(t, 7000, 1),
			maxRows: 1500, maxBytes: rowGroupBytes},
		{name: "byte bound", schema: everyType(), rows: randomEveryTypeRows(t, 7000, 2),
			maxRows: rowGroupRows, maxBytes: 150_000},
		{name: "many rows", schema: benchSchema(), rows: makeRows(20_000, 1_700_000_000_000, 3),
			maxRows: 6000, maxBytes: rowGroupBytes},
		{name: "dictionary overflow", schema: overflowSchema(), rows: overflowRows(32_000),
			maxRows: rowGroupRows, maxBytes: rowGroupBytes},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var want bytes.Buffer
			require.NoError(t, writeRowPath(&want, tc.schema, tc.ids, tc.rows, tc.maxRows, tc.maxBytes))
			var got bytes.Buffer
			sw, err := NewWriterWithFieldIDs(&got, tc.schema, tc.ids)
			require.NoError(t, err)
			sw.maxRows, sw.maxBytes = tc.maxRows, tc.maxBytes
			require.NoError(t, sw.Write(tc.rows...))
			info, err := sw.Close()
			require.NoError(t, err)

			requireSameFile(t, want.Bytes(), got.Bytes(), len(tc.schema.Dims))
			require.Equal(t, int64(len(tc.rows)), info.Rows)
			require.Equal(t, int64(got.Len()), info.Bytes)
			sum := sha256.Sum256(want.Bytes())
			require.Equal(t, "sha256:"+hex.EncodeToString(sum[:]), info.Checksum)
		})
	}
}

// requireSameFile compares what a reader sees of two files, then their
// bytes.
func requireSameFile(t *testing.T, want, got []byte, numDims int) {
	t.Helper()
	wf, err := parquet.OpenFile(bytes.NewReader(want), int64(len(want)))
	require.NoError(t, err)
	gf, err := parquet.OpenFile(bytes.NewReader(got), int64(len(got)))
	require.NoError(t, err)
	wm, gm := wf.Metadata(), gf.Metadata()
	require.Equal(t, wm.KeyValueMetadata, gm.KeyValueMetadata, "key/value metadata")
	require.Equal(t, wm.Schema, gm.Schema, "schema elements and field ids")
	require.Equal(t, rowGroupSizes(t, want), rowGroupSizes(t, got), "row group sizes")
	for g := range wm.RowGroups {
		for c, wc := range wm.RowGroups[g].Columns {
			w, gc := wc.MetaData, gm.RowGroups[g].Columns[c].MetaData
			where := fmt.Sprintf("row group %d column %s", g, strings.Join(w.PathInSchema, "."))
			require.Equal(t, w.Statistics.MinValue, gc.Statistics.MinValue, "%s min", where)
			require.Equal(t, w.Statistics.MaxValue, gc.Statistics.MaxValue, "%s max", where)
			require.Equal(t, w.Statistics.NullCount, gc.Statistics.NullCount, "%s null count", where)
			require.Equal(t, w.Statistics, gc.Statistics, "%s statistics", where)
			require.Equal(t, w.NumValues, gc.NumValues, "%s values", where)
			require.Equal(t, w.Encoding, gc.Encoding, "%s encodings", where)
			require.Equal(t, w.EncodingStats, gc.EncodingStats, "%s pages by encoding", where)
			require.Equal(t, w.DictionaryPageOffset != 0, gc.DictionaryPageOffset != 0, "%s has a dictionary", where)
		}
	}
	require.Equal(t, readBytes(t, want), readBytes(t, got), "rows read back")
	require.Equal(t, want, got, "file bytes")
}

// readBytes reads a whole file held in memory.
func readBytes(t *testing.T, file []byte) []domain.Row {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f.parquet")
	require.NoError(t, os.WriteFile(path, file, 0o644))
	_, rows, err := ReadFile(path)
	require.NoError(t, err)
	return rows
}

// randomEveryTypeRows is n rows of everyType: a tenth of the values null,
// a quarter of the rows short of dimensions, sketches of a few sizes.
func randomEveryTypeRows(t testing.TB, n int, seed uint64) []domain.Row {
	rng := rand.New(rand.NewPCG(seed, 7))
	sketches := []domain.Value{sketch(t, "a"), sketch(t, "b", "c"), domain.BytesValue(nil), domain.BytesValue(bytes.Repeat([]byte{9}, 3000))}
	strs := []string{"", "x", "日本語", "emoji 🎉", strings.Repeat("long", 300), "a,b\"c\x00nul"}
	pick := func(v domain.Value) domain.Value {
		if rng.IntN(10) == 0 {
			return null()
		}
		return v
	}
	rows := make([]domain.Row, n)
	for i := range rows {
		dims := vals(
			pick(str(strs[rng.IntN(len(strs))]+fmt.Sprint(rng.IntN(50)))),
			pick(long(rng.Int64()-math.MaxInt64/2)),
			pick(dbl(rng.NormFloat64()*1e6)),
			pick(str(strs[rng.IntN(len(strs))])),
		)
		if rng.IntN(4) == 0 {
			dims = dims[:rng.IntN(len(dims))]
		}
		rows[i] = domain.Row{
			Time: 1_700_000_000_000 + int64(rng.IntN(1_000_000)),
			Dims: dims,
			Metrics: vals(pick(long(1)), pick(long(rng.Int64N(1<<40))), pick(dbl(rng.Float64())),
				pick(sketches[rng.IntN(len(sketches))])),
		}
	}
	return rows
}

// overflowSchema has a dimension whose distinct values outgrow
// maxDictBytes in one row group, beside one that does not.
func overflowSchema() domain.Schema {
	return domain.Schema{
		Dims:    []domain.Column{{Name: "id", Type: domain.TypeString}, {Name: "kind", Type: domain.TypeString}},
		Metrics: []domain.MetricSpec{countSpec},
	}
}

// overflowRows is n rows of overflowSchema with distinct 1 KiB ids. A
// dictionary is checked against its cap when a page is cut, and the first
// page of an optional dictionary column holds some 28,000 rows (its buffer
// keeps 9 bytes a row), so 32,000 rows overflow: 28 MiB of ids, past the
// 8 MiB cap, at the first cut, and plain pages after it.
func overflowRows(n int) []domain.Row {
	pad := strings.Repeat("p", 1016)
	rows := make([]domain.Row, n)
	for i := range rows {
		rows[i] = domain.Row{Time: int64(i), Dims: vals(str(fmt.Sprintf("%08d", i)+pad), str([]string{"a", "b"}[i%2])), Metrics: vals(long(1))}
	}
	return rows
}

// The overflow case does overflow: the id column falls back to plain data
// pages after dictionary ones, and the kind column does not.
func TestOverflowRowsOutgrowTheDictionary(t *testing.T) {
	var buf bytes.Buffer
	_, err := writeAll(&buf, overflowSchema(), overflowRows(32_000), nil)
	require.NoError(t, err)
	pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)
	require.Len(t, pf.Metadata().RowGroups, 1)
	dataPages := func(c int) (encs []format.Encoding) {
		for _, s := range pf.Metadata().RowGroups[0].Columns[c].MetaData.EncodingStats {
			if s.PageType == format.DataPageV2 && !slices.Contains(encs, s.Encoding) {
				encs = append(encs, s.Encoding)
			}
		}
		slices.Sort(encs)
		return encs
	}
	require.Equal(t, []format.Encoding{format.Plain, format.RLEDictionary}, dataPages(1), "id")
	require.Equal(t, []format.Encoding{format.RLEDictionary}, dataPages(2), "kind")
}
