package segment

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"handoff/internal/domain"
)

func makeRows(n, dims int) []domain.Row {
	rows := make([]domain.Row, n)
	for i := range rows {
		vals := make([]string, dims)
		for d := range vals {
			vals[d] = fmt.Sprintf("d%d-v%d", d, (i*(d+3))%97)
		}
		rows[i] = domain.Row{Time: 1_700_000_000_000 + int64(i/10)*1000, Dims: vals}
	}
	return rows
}

func roundTrip(t *testing.T, dims []string, rows []domain.Row) Info {
	t.Helper()
	path := filepath.Join(t.TempDir(), "a", "b", "seg.parquet")
	info, err := WriteFile(path, dims, rows)
	if err != nil {
		t.Fatal(err)
	}
	gotDims, gotRows, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotDims, dims) {
		t.Fatalf("dims = %q, want %q", gotDims, dims)
	}
	if len(gotRows) != len(rows) {
		t.Fatalf("read %d rows, want %d", len(gotRows), len(rows))
	}
	for i := range rows {
		if gotRows[i].Time != rows[i].Time || !reflect.DeepEqual(gotRows[i].Dims, rows[i].Dims) {
			t.Fatalf("row %d = %+v, want %+v", i, gotRows[i], rows[i])
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Bytes != st.Size() || info.Rows != int64(len(rows)) {
		t.Fatalf("info = %+v, file size %d", info, st.Size())
	}
	return info
}

func TestRoundTripOrderAndValues(t *testing.T) {
	// Names chosen so alphabetical order would differ from the given order.
	dims := []string{"zeta", "Alpha", "ünïcode", "mid"}
	rows := []domain.Row{
		{Time: 3000, Dims: []string{"z", "", "日本語", "x"}},
		{Time: -5, Dims: []string{"", "", "", ""}},
		{Time: 1_700_000_000_123, Dims: []string{"emoji 🎉", "a,b\"c", "\x00nul", strings.Repeat("long", 1000)}},
	}
	info := roundTrip(t, dims, rows)
	if info.MinTime != -5 || info.MaxTime != 1_700_000_000_123 {
		t.Fatalf("min/max = %d/%d", info.MinTime, info.MaxTime)
	}
	if !strings.HasPrefix(info.Checksum, "sha256:") || len(info.Checksum) != len("sha256:")+64 {
		t.Fatalf("checksum = %q", info.Checksum)
	}
}

func TestRoundTripManyRows(t *testing.T) {
	roundTrip(t, []string{"a", "b", "c"}, makeRows(100_000, 3))
}

func TestRoundTripEmpty(t *testing.T) {
	info := roundTrip(t, []string{"a", "b"}, nil)
	if info.Rows != 0 || info.MinTime != 0 || info.MaxTime != 0 {
		t.Fatalf("info = %+v", info)
	}
}

func TestRoundTripNoDims(t *testing.T) {
	roundTrip(t, []string{}, []domain.Row{{Time: 1}, {Time: 2}})
}

func TestWriteInfoMatchesBytes(t *testing.T) {
	var buf bytes.Buffer
	info, err := Write(&buf, []string{"a"}, makeRows(10, 1))
	if err != nil {
		t.Fatal(err)
	}
	if info.Bytes != int64(buf.Len()) {
		t.Fatalf("Bytes = %d, wrote %d", info.Bytes, buf.Len())
	}
}

func TestChecksumChangesWithContent(t *testing.T) {
	sum := func(rows []domain.Row) string {
		info, err := Write(&bytes.Buffer{}, []string{"a"}, rows)
		if err != nil {
			t.Fatal(err)
		}
		return info.Checksum
	}
	base := []domain.Row{{Time: 1, Dims: []string{"x"}}}
	if sum(base) != sum(base) {
		t.Fatal("checksum is not deterministic")
	}
	if sum(base) == sum([]domain.Row{{Time: 1, Dims: []string{"y"}}}) {
		t.Fatal("checksum ignores a dimension value")
	}
	if sum(base) == sum([]domain.Row{{Time: 2, Dims: []string{"x"}}}) {
		t.Fatal("checksum ignores the time")
	}
}

func TestWriteRejectsBadInput(t *testing.T) {
	cases := map[string]struct {
		dims []string
		rows []domain.Row
	}{
		"ragged row":     {[]string{"a", "b"}, []domain.Row{{Time: 1, Dims: []string{"x"}}}},
		"duplicate dim":  {[]string{"a", "a"}, nil},
		"reserved dim":   {[]string{TimeColumn}, nil},
		"empty dim name": {[]string{""}, nil},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Write(&bytes.Buffer{}, c.dims, c.rows); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(dir, "*.tmp-*"))
	if err != nil {
		t.Fatal(err)
	}
	return matches
}

func TestWriteFileLeavesNoTempFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "seg.parquet")
	if _, err := WriteFile(path, []string{"a"}, makeRows(10, 1)); err != nil {
		t.Fatal(err)
	}
	if tmp := tempFiles(t, dir); len(tmp) != 0 {
		t.Fatalf("temp files left after success: %q", tmp)
	}

	// A failed rewrite keeps the old file intact and cleans up.
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = WriteFile(path, []string{"a", "b"}, makeRows(10, 1))
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want an error naming %s", err, path)
	}
	if tmp := tempFiles(t, dir); len(tmp) != 0 {
		t.Fatalf("temp files left after error: %q", tmp)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("failed write changed the existing file")
	}
}

func TestReadFileErrorsNameThePath(t *testing.T) {
	dir := t.TempDir()
	notParquet := filepath.Join(dir, "junk.parquet")
	if err := os.WriteFile(notParquet, []byte("this is not a parquet file at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{notParquet, filepath.Join(dir, "missing.parquet")} {
		if _, _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Fatalf("ReadFile(%s) err = %v, want an error naming the path", path, err)
		}
	}
}

func BenchmarkWrite(b *testing.B) {
	dims := []string{"country", "device", "os", "campaign", "page"}
	rows := makeRows(100_000, len(dims))
	var buf bytes.Buffer
	info, err := Write(&buf, dims, rows)
	if err != nil {
		b.Fatal(err)
	}
	var raw int64 // input volume, for MB/s
	for _, r := range rows {
		raw += 8
		for _, d := range r.Dims {
			raw += int64(len(d))
		}
	}
	b.SetBytes(raw)
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if _, err := Write(&buf, dims, rows); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(info.Bytes), "file-bytes")
}

// Past maxDictBytes a column falls back from dictionary to plain pages
// mid-row-group; both kinds of page must read back.
func TestRoundTripDictionaryFallback(t *testing.T) {
	if testing.Short() {
		t.Skip("writes ~12 MB")
	}
	rows := make([]domain.Row, 300_000)
	for i := range rows {
		rows[i] = domain.Row{Time: int64(i), Dims: []string{fmt.Sprintf("user-%034d", i), "low"}}
	}
	roundTrip(t, []string{"user", "kind"}, rows)
}

func TestFileSchema(t *testing.T) {
	var buf bytes.Buffer
	if _, err := Write(&buf, []string{"b", "a"}, nil); err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	want := "message segment {\n" +
		"\trequired int64 __time (TIMESTAMP(isAdjustedToUTC=true,unit=MILLIS));\n" +
		"\trequired binary b (STRING);\n" +
		"\trequired binary a (STRING);\n" +
		"}"
	if got := pf.Schema().String(); got != want {
		t.Fatalf("schema:\n%s\nwant:\n%s", got, want)
	}
	if rgs := pf.Metadata().RowGroups; len(rgs) != 0 {
		t.Fatalf("empty file has %d row groups", len(rgs))
	}
}

func TestReadFileRejectsOtherLayouts(t *testing.T) {
	type timeNotFirst struct {
		Dim  string `parquet:"dim"`
		Time int64  `parquet:"__time"`
	}
	path := filepath.Join(t.TempDir(), "other.parquet")
	if err := parquet.WriteFile(path, []timeNotFirst{{"x", 1}}); err != nil {
		t.Fatal(err)
	}
	_, _, err := ReadFile(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), TimeColumn) {
		t.Fatalf("err = %v, want an error naming the path and %s", err, TimeColumn)
	}
}
