package segment

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

func writeRun(t testing.TB, path string, schema domain.Schema, rows []domain.Row) Info {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	bw := bufio.NewWriter(f)
	info, err := WriteRun(bw, schema, rows)
	require.NoError(t, err)
	require.NoError(t, bw.Flush())
	require.NoError(t, f.Close())
	return info
}

func runRoundTrip(t *testing.T, schema domain.Schema, rows []domain.Row) Info {
	t.Helper()
	path := filepath.Join(t.TempDir(), "chunk.run")
	info := writeRun(t, path, schema, rows)
	gotSchema, gotRows, err := ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, schema, gotSchema)
	s, err := ReadSchema(path)
	require.NoError(t, err)
	require.Equal(t, schema, s)
	want := padded(rows, len(schema.Dims))
	require.Len(t, gotRows, len(want))
	for i := range want {
		require.Equal(t, want[i], gotRows[i], "row %d", i)
	}
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, st.Size(), info.Bytes)
	require.Equal(t, int64(len(rows)), info.Rows)
	return info
}

// A run gives back every type, null, empty and extreme value exactly, in
// the order written.
func TestRunRoundTripEveryType(t *testing.T) {
	info := runRoundTrip(t, everyType(), everyTypeRows(t))
	require.Equal(t, int64(-5), info.MinTime)
	require.Equal(t, int64(1_700_000_000_123), info.MaxTime)
}

// 100,000 rows span many blocks.
func TestRunRoundTripManyRows(t *testing.T) {
	info := runRoundTrip(t, benchSchema(), makeRows(100_000, 1_700_000_000_000, 1))
	require.Greater(t, info.Bytes, int64(2*runBlockBytes)/10, "compressed, but more than one block's worth")
}

func TestRunRoundTripEmptyAndNoColumns(t *testing.T) {
	runRoundTrip(t, everyType(), nil)
	runRoundTrip(t, domain.Schema{}, []domain.Row{{Time: 1}, {Time: 2}})
}

func TestRunRefusesRowsThatDoNotFit(t *testing.T) {
	w, err := NewRunWriter(&discard{}, domain.Schema{Metrics: []domain.MetricSpec{countSpec}})
	require.NoError(t, err)
	require.ErrorContains(t, w.Write(domain.Row{Time: 1}), "0 metric values, want at most 0 and 1")
	require.ErrorContains(t, w.Write(domain.Row{Time: 1, Dims: vals(str("x")), Metrics: vals(long(1))}), "1 dimension")
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// A run cut short anywhere, or with a damaged block, fails to read with an
// error that names the file: it is never taken for fewer rows.
func TestRunTruncatedOrCorruptFails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "whole.run")
	writeRun(t, path, benchSchema(), makeRows(20_000, 1_700_000_000_000, 2))
	whole, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, cut := range []int{len(runMagic) + 3, len(whole) / 2, len(whole) - 1} {
		p := filepath.Join(dir, "cut.run")
		require.NoError(t, os.WriteFile(p, whole[:cut], 0o644))
		_, _, err := ReadFile(p)
		require.Error(t, err, "cut at %d of %d", cut, len(whole))
		require.ErrorContains(t, err, p)
	}
	bad := append([]byte(nil), whole...)
	bad[len(bad)/2] ^= 0xff
	p := filepath.Join(dir, "bad.run")
	require.NoError(t, os.WriteFile(p, bad, 0o644))
	_, _, err = ReadFile(p)
	require.Error(t, err)
}

// Merge takes runs and Parquet files alike (staging chunks written before
// runs existed are Parquet), mapping a narrower file onto the union schema.
func TestMergeMixesRunsAndParquet(t *testing.T) {
	dir := t.TempDir()
	wide := domain.Schema{Dims: []domain.Column{{Name: "a", Type: domain.TypeString}, {Name: "b", Type: domain.TypeString}}, Metrics: []domain.MetricSpec{countSpec}}
	narrow := domain.Schema{Dims: wide.Dims[:1], Metrics: wide.Metrics}
	runPath := filepath.Join(dir, "1.run")
	writeRun(t, runPath, narrow, []domain.Row{
		{Time: 1, Dims: vals(str("x")), Metrics: vals(long(1))},
		{Time: 3, Dims: vals(str("y")), Metrics: vals(long(1))},
	})
	pqPath := writeSegment(t, dir, "2.parquet", wide, []domain.Row{
		{Time: 1, Dims: vals(str("x"), str("q")), Metrics: vals(long(2))},
		{Time: 2, Dims: vals(str("z"), null()), Metrics: vals(long(5))},
	})
	union, err := UnionSchema([]string{runPath, pqPath})
	require.NoError(t, err)
	require.Equal(t, wide, union)
	var got []domain.Row
	err = Merge(context.Background(), []string{runPath, pqPath}, union, false, 8, dir, func(r domain.Row) error {
		got = append(got, cloneRow(r))
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []domain.Row{
		{Time: 1, Dims: vals(str("x"), null()), Metrics: vals(long(1))},
		{Time: 1, Dims: vals(str("x"), str("q")), Metrics: vals(long(2))},
		{Time: 2, Dims: vals(str("z"), null()), Metrics: vals(long(5))},
		{Time: 3, Dims: vals(str("y"), null()), Metrics: vals(long(1))},
	}, got)
}

// A row wider than a block (a 5 MiB string, as a message may hold) makes
// one large block and reads back whole.
func TestRunWideRow(t *testing.T) {
	wide := strings.Repeat("w", 5<<20)
	schema := domain.Schema{Dims: []domain.Column{{Name: "s", Type: domain.TypeString}}, Metrics: []domain.MetricSpec{countSpec}}
	runRoundTrip(t, schema, []domain.Row{
		{Time: 1, Dims: vals(str("a")), Metrics: vals(long(1))},
		{Time: 2, Dims: vals(str(wide)), Metrics: vals(long(1))},
		{Time: 3, Dims: vals(str("b")), Metrics: vals(long(1))},
	})
}
