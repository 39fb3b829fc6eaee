package segment

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

func roundTrip(t *testing.T, schema domain.Schema, rows []domain.Row) Info {
	t.Helper()
	path := filepath.Join(t.TempDir(), "a", "b", "seg.parquet")
	info, err := WriteFile(path, schema, rows)
	require.NoError(t, err)
	gotSchema, gotRows, err := ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, schema, gotSchema, "schema")
	require.Len(t, gotRows, len(rows))
	want := padded(rows, len(schema.Dims))
	for i := range want {
		require.Equal(t, want[i], gotRows[i], "row %d", i)
	}
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, st.Size(), info.Bytes)
	require.Equal(t, int64(len(rows)), info.Rows)
	return info
}

func everyTypeRows(t testing.TB) []domain.Row {
	return []domain.Row{
		{Time: 3000, Dims: vals(str("z"), long(math.MaxInt64), dbl(math.Inf(1)), str("x")),
			Metrics: vals(long(1), long(-7), dbl(0.25), sketch(t, "alice"))},
		// Nulls everywhere they can be, and a row short of dimensions.
		{Time: -5, Dims: vals(null(), null()),
			Metrics: vals(null(), null(), null(), null())},
		// Empty and zero values are not nulls.
		{Time: 0, Dims: vals(str(""), long(0), dbl(0), str("")),
			Metrics: vals(long(0), long(0), dbl(math.Copysign(0, -1)), domain.BytesValue(nil))},
		{Time: 1_700_000_000_123, Dims: vals(str("emoji 🎉"), long(math.MinInt64), dbl(math.NaN()), str(strings.Repeat("long", 1000))),
			Metrics: vals(long(math.MaxInt64), long(math.MinInt64), dbl(-1e308), sketch(t, "bob", "carol"))},
		{Time: 4000, Dims: vals(str("日本語"), null(), dbl(-2.5), str("a,b\"c\x00nul")),
			Metrics: vals(long(3), null(), dbl(math.SmallestNonzeroFloat64), domain.BytesValue([]byte{0, 1, 0xff}))},
		{Time: 5000, Dims: nil, Metrics: vals(long(1), long(1), dbl(1), null())},
	}
}

// Rows come back in the order written (the writer does not sort), with
// every type, null, empty and extreme value intact.
func TestRoundTripEveryType(t *testing.T) {
	info := roundTrip(t, everyType(), everyTypeRows(t))
	require.Equal(t, int64(-5), info.MinTime)
	require.Equal(t, int64(1_700_000_000_123), info.MaxTime)
	require.Regexp(t, `^sha256:[0-9a-f]{64}$`, info.Checksum)
}

func TestRoundTripManyRows(t *testing.T) {
	roundTrip(t, benchSchema(), makeRows(100_000, 1_700_000_000_000, 1))
}

func TestRoundTripEmpty(t *testing.T) {
	info := roundTrip(t, everyType(), nil)
	require.Equal(t, Info{Rows: 0, Bytes: info.Bytes, Checksum: info.Checksum}, info)
}

func TestRoundTripNoColumns(t *testing.T) {
	roundTrip(t, domain.Schema{}, []domain.Row{{Time: 1}, {Time: 2}})
	roundTrip(t, domain.Schema{Metrics: []domain.MetricSpec{countSpec}}, []domain.Row{{Time: 1, Metrics: vals(long(2))}})
}

// Past maxDictBytes a column falls back from dictionary to plain pages
// mid-row-group; both kinds of page must read back. 300k rows also span
// three row groups.
func TestRoundTripDictionaryFallbackAndRowGroups(t *testing.T) {
	if testing.Short() {
		t.Skip("writes ~12 MB")
	}
	schema := domain.Schema{Dims: []domain.Column{{Name: "user", Type: domain.TypeString}, {Name: "kind", Type: domain.TypeString}}}
	rows := make([]domain.Row, 300_000)
	for i := range rows {
		rows[i] = domain.Row{Time: int64(i), Dims: vals(str(fmt.Sprintf("user-%034d", i)), str("low"))}
	}
	roundTrip(t, schema, rows)

	var buf bytes.Buffer
	_, err := writeAll(&buf, schema, rows, nil)
	require.NoError(t, err)
	require.Equal(t, []int64{rowGroupRows, rowGroupRows, 300_000 - 2*rowGroupRows}, rowGroupSizes(t, buf.Bytes()))
}

// A row group closes at its byte bound as well as its row bound.
func TestRowGroupByteBound(t *testing.T) {
	schema := domain.Schema{Metrics: []domain.MetricSpec{usersSpec}}
	blob := domain.BytesValue(bytes.Repeat([]byte{7}, 10_000))
	rows := make([]domain.Row, 500)
	for i := range rows {
		rows[i] = domain.Row{Time: int64(i), Metrics: vals(blob)}
	}
	var buf bytes.Buffer
	_, err := writeAll(&buf, schema, rows, func(w *Writer) { w.maxBytes = 1 << 20 })
	require.NoError(t, err)
	sizes := rowGroupSizes(t, buf.Bytes())
	require.Len(t, sizes, 5) // 105 rows of ~10 kB pass 1 MiB
	for _, n := range sizes[:4] {
		require.EqualValues(t, 105, n)
	}
}

func writeAll(w *bytes.Buffer, schema domain.Schema, rows []domain.Row, tweak func(*Writer)) (Info, error) {
	sw, err := NewWriter(w, schema)
	if err != nil {
		return Info{}, err
	}
	if tweak != nil {
		tweak(sw)
	}
	if err := sw.Write(rows...); err != nil {
		return Info{}, err
	}
	return sw.Close()
}

func rowGroupSizes(t *testing.T, file []byte) []int64 {
	pf, err := parquet.OpenFile(bytes.NewReader(file), int64(len(file)))
	require.NoError(t, err)
	var sizes []int64
	for _, rg := range pf.RowGroups() {
		sizes = append(sizes, rg.NumRows())
	}
	return sizes
}

func TestWriteInfoMatchesBytes(t *testing.T) {
	var buf bytes.Buffer
	info, err := writeAll(&buf, benchSchema(), makeRows(10, 0, 1), nil)
	require.NoError(t, err)
	require.Equal(t, int64(buf.Len()), info.Bytes)
	require.Equal(t, int64(10), info.Rows)
}

// Rows may also arrive one Write at a time.
func TestWriteStreams(t *testing.T) {
	rows := makeRows(3000, 0, 2)
	var whole, streamed bytes.Buffer
	_, err := writeAll(&whole, benchSchema(), rows, nil)
	require.NoError(t, err)
	w, err := NewWriter(&streamed, benchSchema())
	require.NoError(t, err)
	for _, r := range rows {
		require.NoError(t, w.Write(r))
	}
	_, err = w.Close()
	require.NoError(t, err)
	require.Equal(t, whole.Bytes(), streamed.Bytes())
}

func TestChecksumChangesWithContent(t *testing.T) {
	schema := domain.Schema{Dims: []domain.Column{{Name: "a", Type: domain.TypeString}}, Metrics: []domain.MetricSpec{countSpec}}
	sum := func(rows ...domain.Row) string {
		info, err := writeAll(&bytes.Buffer{}, schema, rows, nil)
		require.NoError(t, err)
		return info.Checksum
	}
	base := domain.Row{Time: 1, Dims: vals(str("x")), Metrics: vals(long(1))}
	require.Equal(t, sum(base), sum(base), "deterministic")
	require.NotEqual(t, sum(base), sum(domain.Row{Time: 1, Dims: vals(str("y")), Metrics: vals(long(1))}))
	require.NotEqual(t, sum(base), sum(domain.Row{Time: 2, Dims: vals(str("x")), Metrics: vals(long(1))}))
	require.NotEqual(t, sum(base), sum(domain.Row{Time: 1, Dims: vals(str("x")), Metrics: vals(long(2))}))
	require.NotEqual(t, sum(base), sum(domain.Row{Time: 1, Dims: vals(null()), Metrics: vals(long(1))}))
}

func TestNewWriterRejectsBadSchemas(t *testing.T) {
	dim := func(name string, typ domain.ColumnType) domain.Column { return domain.Column{Name: name, Type: typ} }
	cases := map[string]domain.Schema{
		"duplicate dim":         {Dims: []domain.Column{dim("a", domain.TypeString), dim("a", domain.TypeLong)}},
		"dim named like metric": {Dims: []domain.Column{dim("count", domain.TypeString)}, Metrics: []domain.MetricSpec{countSpec}},
		"reserved dim":          {Dims: []domain.Column{dim(TimeColumn, domain.TypeString)}},
		"empty dim name":        {Dims: []domain.Column{dim("", domain.TypeString)}},
		"comma in name":         {Dims: []domain.Column{dim("a,b", domain.TypeString)}},
		"sketch dimension":      {Dims: []domain.Column{dim("a", domain.TypeSketch)}},
		"untyped dimension":     {Dims: []domain.Column{dim("a", "")}},
		"reserved metric":       {Metrics: []domain.MetricSpec{{Type: domain.MetricCount, Name: TimeColumn}}},
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := NewWriter(&bytes.Buffer{}, s)
			require.Error(t, err)
		})
	}
}

func TestWriteRejectsBadRows(t *testing.T) {
	schema := domain.Schema{Dims: []domain.Column{{Name: "a", Type: domain.TypeString}}, Metrics: []domain.MetricSpec{countSpec}}
	cases := map[string]domain.Row{
		"too many dims":    {Dims: vals(str("x"), str("y")), Metrics: vals(long(1))},
		"missing metric":   {Dims: vals(str("x"))},
		"too many metrics": {Metrics: vals(long(1), long(2))},
	}
	for name, row := range cases {
		t.Run(name, func(t *testing.T) {
			w, err := NewWriter(&bytes.Buffer{}, schema)
			require.NoError(t, err)
			require.Error(t, w.Write(row))
		})
	}
	w, err := NewWriter(&bytes.Buffer{}, schema)
	require.NoError(t, err)
	_, err = w.Close()
	require.NoError(t, err)
	require.Error(t, w.Write(domain.Row{Metrics: vals(long(1))}), "write after close")
	_, err = w.Close()
	require.Error(t, err, "second close")
}

func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(dir, "*.tmp-*"))
	require.NoError(t, err)
	return matches
}

func TestWriteFileLeavesNoTempFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "seg.parquet")
	_, err := WriteFile(path, benchSchema(), makeRows(10, 0, 1))
	require.NoError(t, err)
	require.Empty(t, tempFiles(t, dir), "after success")

	// A failed rewrite keeps the old file intact and cleans up.
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	bad := []domain.Row{{Time: 1}} // no metrics
	_, err = WriteFile(path, benchSchema(), bad)
	require.ErrorContains(t, err, path)
	require.Empty(t, tempFiles(t, dir), "after error")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after, "failed write changed the existing file")
}

func TestReadFileErrorsNameThePath(t *testing.T) {
	dir := t.TempDir()
	notParquet := filepath.Join(dir, "junk.parquet")
	require.NoError(t, os.WriteFile(notParquet, []byte("this is not a parquet file at all"), 0o644))
	for _, path := range []string{notParquet, filepath.Join(dir, "missing.parquet")} {
		_, _, err := ReadFile(path)
		require.ErrorContains(t, err, path)
		_, err = UnionSchema([]string{path})
		require.ErrorContains(t, err, path)
	}
}

// Parquet files not written by this package, or whose metadata lies about
// their columns, are refused rather than misread.
func TestReadFileRejectsOtherLayouts(t *testing.T) {
	type plain struct {
		Time int64  `parquet:"__time"`
		Dim  string `parquet:"dim"`
	}
	dir := t.TempDir()
	noMeta := filepath.Join(dir, "nometa.parquet")
	require.NoError(t, parquet.WriteFile(noMeta, []plain{{1, "x"}}))
	_, _, err := ReadFile(noMeta)
	require.ErrorContains(t, err, noMeta)
	require.ErrorContains(t, err, SchemaKey)

	meta, err := encodeSchema(domain.Schema{Dims: []domain.Column{{Name: "dim", Type: domain.TypeLong}}})
	require.NoError(t, err)
	lying := filepath.Join(dir, "lying.parquet")
	require.NoError(t, parquet.WriteFile(lying, []plain{{1, "x"}}, parquet.KeyValueMetadata(SchemaKey, meta)))
	_, _, err = ReadFile(lying)
	require.ErrorContains(t, err, lying)
	require.ErrorContains(t, err, "column")
}

// The layout other readers see: column order and types, encodings,
// compression and the schema metadata.
func TestFileLayout(t *testing.T) {
	var buf bytes.Buffer
	_, err := writeAll(&buf, everyType(), everyTypeRows(t), nil)
	require.NoError(t, err)
	pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)
	want := "message segment {\n" +
		"\trequired int64 __time (TIMESTAMP(isAdjustedToUTC=true,unit=MICROS));\n" +
		"\toptional binary zeta (STRING);\n" +
		"\toptional int64 Alpha (INT(64,true));\n" +
		"\toptional double ünïcode;\n" +
		"\toptional binary mid (STRING);\n" +
		"\toptional int64 count (INT(64,true));\n" +
		"\toptional int64 sum_bytes (INT(64,true));\n" +
		"\toptional double max_ratio;\n" +
		"\toptional binary users;\n" +
		"}"
	require.Equal(t, want, pf.Schema().String())
	meta, ok := pf.Lookup(SchemaKey)
	require.True(t, ok)
	require.JSONEq(t, `{"version":1,
		"dimensions":[{"name":"zeta","type":"string"},{"name":"Alpha","type":"long"},{"name":"ünïcode","type":"double"},{"name":"mid","type":"string"}],
		"metrics":[{"type":"count","name":"count"},{"type":"longSum","name":"sum_bytes","fieldName":"bytes"},
			{"type":"doubleMax","name":"max_ratio","fieldName":"ratio"},{"type":"hyperUnique","name":"users","fieldName":"user"}]}`, meta)
	rg := pf.Metadata().RowGroups
	require.Len(t, rg, 1)
	for _, c := range rg[0].Columns {
		require.Equal(t, "ZSTD", c.MetaData.Codec.String(), "column %v", c.MetaData.PathInSchema)
	}
	require.Contains(t, fmt.Sprint(rg[0].Columns[1].MetaData.Encoding), "RLE_DICTIONARY", "string dimension")
}

func TestEmptyFileHasNoRowGroups(t *testing.T) {
	var buf bytes.Buffer
	_, err := writeAll(&buf, everyType(), nil, nil)
	require.NoError(t, err)
	require.Empty(t, rowGroupSizes(t, buf.Bytes()))
}

func TestReaderStreams(t *testing.T) {
	path := writeSegment(t, t.TempDir(), "s.parquet", benchSchema(), makeRows(2500, 0, 3))
	r, err := Open(path)
	require.NoError(t, err)
	require.Equal(t, benchSchema(), r.Schema())
	var got []domain.Row
	for {
		row, ok, err := r.Next()
		require.NoError(t, err)
		if !ok {
			break
		}
		got = append(got, row)
	}
	_, ok, err := r.Next()
	require.NoError(t, err)
	require.False(t, ok, "Next past the end")
	require.NoError(t, r.Close())
	require.Equal(t, makeRows(2500, 0, 3), got, "rows kept across batches stay intact")
}
