package segment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/aggregate"
	"handoff/internal/domain"
)

// mergeAll runs Merge and collects its rows.
func mergeAll(t *testing.T, paths []string, into domain.Schema, rollup bool, maxOpen int, tmpDir string) []domain.Row {
	t.Helper()
	var got []domain.Row
	err := Merge(context.Background(), paths, into, rollup, maxOpen, tmpDir, func(r domain.Row) error {
		got = append(got, cloneRow(r))
		return nil
	})
	require.NoError(t, err)
	return got
}

// naiveMerge is the expected result: every file's rows in into's layout,
// stably sorted, then rolled up in memory.
func naiveMerge(t *testing.T, files [][]domain.Row, into domain.Schema, rollup bool) []domain.Row {
	var all []domain.Row
	for _, rows := range files {
		all = append(all, rows...)
	}
	sortRows(all, into.Dims)
	if !rollup {
		return all
	}
	var out []domain.Row
	for _, r := range all {
		if n := len(out); n > 0 && domain.CompareRows(out[n-1], r, into.Dims) == 0 {
			acc := out[n-1].Metrics
			for i, m := range into.Metrics {
				v, err := aggregate.Combine(m, acc[i], r.Metrics[i])
				require.NoError(t, err)
				acc[i] = v
			}
			continue
		}
		r.Metrics = append([]domain.Value(nil), r.Metrics...)
		out = append(out, r)
	}
	return out
}

// overlapping writes k sorted files of n rows whose keys overlap: the
// same seconds and few dimension values.
func overlapping(t *testing.T, dir string, k, n int) ([]string, [][]domain.Row) {
	var paths []string
	var files [][]domain.Row
	for i := range k {
		rows := makeRows(n, 1_700_000_000_000, uint64(i))
		for j := range rows {
			// Few dimension values, so keys collide within and across files.
			d := rows[j].Dims
			d[0], d[1], d[2], d[3], d[4], d[5] = str(fmt.Sprint((j+i)%2)), str("c"), str("c"), str("c"), str(fmt.Sprint(j%3)), long(200)
			if j%5 == 0 {
				d[1] = null()
			}
		}
		sortRows(rows, benchSchema().Dims)
		paths = append(paths, writeSegment(t, dir, fmt.Sprintf("in-%d.parquet", i), benchSchema(), rows))
		files = append(files, rows)
	}
	return paths, files
}

func TestMergeRollupOff(t *testing.T) {
	paths, files := overlapping(t, t.TempDir(), 4, 5000)
	got := mergeAll(t, paths, benchSchema(), false, 4, t.TempDir())
	require.Len(t, got, 4*5000)
	require.Equal(t, naiveMerge(t, files, benchSchema(), false), got)
}

func TestMergeRollupOn(t *testing.T) {
	paths, files := overlapping(t, t.TempDir(), 4, 5000)
	got := mergeAll(t, paths, benchSchema(), true, 4, t.TempDir())
	want := naiveMerge(t, files, benchSchema(), true)
	require.Less(t, len(want), 4*5000/2, "keys overlap")
	require.Equal(t, want, got)
	var count int64
	for _, r := range got {
		count += r.Metrics[0].Long()
	}
	require.Equal(t, int64(4*5000), count, "count sums to the input rows")
}

// Rollup combines each metric as its aggregator says, nulls included.
func TestMergeRollupCombinesMetrics(t *testing.T) {
	schema := domain.Schema{
		Dims:    []domain.Column{{Name: "page", Type: domain.TypeString}},
		Metrics: []domain.MetricSpec{countSpec, bytesSpec, ratioSpec, usersSpec},
	}
	row := func(ts int64, page domain.Value, count, sum domain.Value, ratio domain.Value, users domain.Value) domain.Row {
		return domain.Row{Time: ts, Dims: vals(page), Metrics: vals(count, sum, ratio, users)}
	}
	dir := t.TempDir()
	paths := []string{
		writeSegment(t, dir, "1.parquet", schema, []domain.Row{
			row(1, null(), long(1), long(5), dbl(0.1), sketch(t, "ann")),
			row(1, str("a"), long(1), long(10), dbl(0.5), sketch(t, "alice")),
			row(2, str("a"), long(4), long(1), dbl(2), sketch(t, "x")),
		}),
		writeSegment(t, dir, "2.parquet", schema, []domain.Row{
			row(1, str("a"), long(2), null(), dbl(0.7), sketch(t, "bob", "alice")),
			row(1, str("b"), long(1), long(3), dbl(-1), null()),
		}),
		writeSegment(t, dir, "3.parquet", schema, []domain.Row{
			row(1, null(), long(2), long(6), dbl(0.05), sketch(t, "ann", "al")),
			row(1, str("a"), long(3), long(-4), null(), sketch(t, "carol")),
		}),
	}
	got := mergeAll(t, paths, schema, true, 3, t.TempDir())
	type summary struct {
		Time              int64
		Page              domain.Value
		Count, Sum, Ratio domain.Value
		Users             uint64
	}
	var sums []summary
	for _, r := range got {
		var users uint64
		if !r.Metrics[3].Null {
			var err error
			users, err = aggregate.Estimate(r.Metrics[3])
			require.NoError(t, err)
		}
		sums = append(sums, summary{r.Time, r.Dims[0], r.Metrics[0], r.Metrics[1], r.Metrics[2], users})
	}
	require.Equal(t, []summary{
		{1, null(), long(3), long(11), dbl(0.1), 2},
		{1, str("a"), long(6), long(6), dbl(0.7), 3},
		{1, str("b"), long(1), long(3), dbl(-1), 0},
		{2, str("a"), long(4), long(1), dbl(2), 1},
	}, sums)
}

func entries(t *testing.T, dir string) int {
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	return len(des)
}

// Seven files through at most two open at once take several passes; the
// final pass reads temporary files, and none is left afterwards.
func TestMergeMultiPass(t *testing.T) {
	paths, files := overlapping(t, t.TempDir(), 7, 3000)
	for _, rollup := range []bool{false, true} {
		t.Run(fmt.Sprint("rollup=", rollup), func(t *testing.T) {
			tmp := t.TempDir()
			var got []domain.Row
			maxTemps := 0
			err := Merge(context.Background(), paths, benchSchema(), rollup, 2, tmp, func(r domain.Row) error {
				if len(got)%1000 == 0 {
					maxTemps = max(maxTemps, entries(t, tmp))
				}
				got = append(got, cloneRow(r))
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, naiveMerge(t, files, benchSchema(), rollup), got)
			require.Equal(t, 2, maxTemps, "the last pass merges two temporary files")
			require.Zero(t, entries(t, tmp), "temporary files removed")
		})
	}
}

func TestPassGroups(t *testing.T) {
	p := []string{"a", "b", "c", "d", "e", "f", "g"}
	require.Equal(t, [][]string{{"a", "b"}, {"c", "d"}, {"e", "f"}, {"g"}}, passGroups(p, 2))
	require.Equal(t, [][]string{{"a", "b", "c"}, {"d", "e", "f"}, {"g"}}, passGroups(p, 3))
	// One merge of the first two brings 5 down to 4.
	require.Equal(t, [][]string{{"a", "b"}, {"c"}, {"d"}, {"e"}}, passGroups(p[:5], 4))
}

func TestMergeCleansUpOnError(t *testing.T) {
	paths, _ := overlapping(t, t.TempDir(), 5, 3000)
	boom := errors.New("boom")
	tmp := t.TempDir()
	n := 0
	err := Merge(context.Background(), paths, benchSchema(), false, 2, tmp, func(domain.Row) error {
		if n++; n == 100 {
			return boom
		}
		return nil
	})
	require.ErrorIs(t, err, boom)
	require.Zero(t, entries(t, tmp))

	ctx, cancel := context.WithCancel(context.Background())
	n = 0
	err = Merge(ctx, paths, benchSchema(), true, 2, tmp, func(domain.Row) error {
		if n++; n == 10 {
			cancel()
		}
		return nil
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, entries(t, tmp))
}

// Files with different discovered dimensions merge into their union, the
// missing dimensions null; a file whose dimensions come in another order
// (so its rows sort differently) is re-sorted first.
func TestMergeUnionOfDiscoveredDims(t *testing.T) {
	page := domain.Column{Name: "page", Type: domain.TypeString}
	country := domain.Column{Name: "country", Type: domain.TypeString}
	bytesDim := domain.Column{Name: "bytes", Type: domain.TypeLong}
	metrics := []domain.MetricSpec{countSpec}
	schemas := []domain.Schema{
		{Dims: []domain.Column{page}, Metrics: metrics},
		{Dims: []domain.Column{page, country}, Metrics: metrics},
		{Dims: []domain.Column{country, bytesDim}, Metrics: metrics},
		{Dims: []domain.Column{country, page}, Metrics: metrics},
	}
	dir := t.TempDir()
	var paths []string
	var files [][]domain.Row
	for i, s := range schemas {
		var rows []domain.Row
		for j := range 2000 {
			r := domain.Row{Time: int64(j / 100), Metrics: vals(long(1))}
			for _, d := range s.Dims {
				switch d.Name {
				case "page":
					r.Dims = append(r.Dims, str(fmt.Sprint("p", (j*7+i)%5)))
				case "country":
					r.Dims = append(r.Dims, str(fmt.Sprint("c", (j*3+i)%4)))
				case "bytes":
					r.Dims = append(r.Dims, long(int64(j%3)))
				}
			}
			rows = append(rows, r)
		}
		sortRows(rows, s.Dims)
		paths = append(paths, writeSegment(t, dir, fmt.Sprintf("%d.parquet", i), s, rows))
		files = append(files, rows)
	}
	union, err := UnionSchema(paths)
	require.NoError(t, err)
	require.Equal(t, domain.Schema{Dims: []domain.Column{page, country, bytesDim}, Metrics: metrics}, union)

	// Expected: each file's rows in the union's layout.
	var mapped [][]domain.Row
	for i, rows := range files {
		var out []domain.Row
		for _, r := range rows {
			m := domain.Row{Time: r.Time, Dims: vals(null(), null(), null()), Metrics: r.Metrics}
			for d, c := range schemas[i].Dims {
				for u, uc := range union.Dims {
					if uc.Name == c.Name {
						m.Dims[u] = r.Dims[d]
					}
				}
			}
			out = append(out, m)
		}
		mapped = append(mapped, out)
	}
	for _, maxOpen := range []int{2, 4} {
		for _, rollup := range []bool{false, true} {
			tmp := t.TempDir()
			got := mergeAll(t, paths, union, rollup, maxOpen, tmp)
			require.Equal(t, naiveMerge(t, mapped, union, rollup), got, "maxOpen=%d rollup=%v", maxOpen, rollup)
			require.Zero(t, entries(t, tmp))
		}
	}
}

func TestUnionSchemaConflicts(t *testing.T) {
	dir := t.TempDir()
	a := writeSegment(t, dir, "a.parquet", domain.Schema{Dims: []domain.Column{{Name: "x", Type: domain.TypeString}}, Metrics: []domain.MetricSpec{countSpec}}, nil)
	b := writeSegment(t, dir, "b.parquet", domain.Schema{Dims: []domain.Column{{Name: "y", Type: domain.TypeString}, {Name: "x", Type: domain.TypeLong}}, Metrics: []domain.MetricSpec{countSpec}}, nil)
	c := writeSegment(t, dir, "c.parquet", domain.Schema{Dims: []domain.Column{{Name: "x", Type: domain.TypeString}}, Metrics: []domain.MetricSpec{bytesSpec}}, nil)

	_, err := UnionSchema([]string{a, b})
	require.ErrorContains(t, err, `"x"`)
	require.ErrorContains(t, err, a)
	require.ErrorContains(t, err, b)

	_, err = UnionSchema([]string{a, c})
	require.ErrorContains(t, err, "metrics")
	require.ErrorContains(t, err, c)

	s, err := UnionSchema(nil)
	require.NoError(t, err)
	require.Equal(t, domain.Schema{}, s)
}

func TestMergeRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	schema := domain.Schema{Dims: []domain.Column{{Name: "x", Type: domain.TypeString}}, Metrics: []domain.MetricSpec{countSpec}}
	unsorted := writeSegment(t, dir, "unsorted.parquet", schema, []domain.Row{
		{Time: 2, Dims: vals(str("a")), Metrics: vals(long(1))},
		{Time: 1, Dims: vals(str("a")), Metrics: vals(long(1))},
	})
	other := writeSegment(t, dir, "other.parquet", domain.Schema{Dims: []domain.Column{{Name: "y", Type: domain.TypeString}}, Metrics: []domain.MetricSpec{countSpec}}, nil)
	emit := func(domain.Row) error { return nil }
	ctx := context.Background()

	err := Merge(ctx, []string{unsorted}, schema, false, 2, dir, emit)
	require.ErrorContains(t, err, "not sorted")
	require.ErrorContains(t, err, unsorted)

	err = Merge(ctx, []string{other}, schema, false, 2, dir, emit)
	require.ErrorContains(t, err, `"y"`)
	require.ErrorContains(t, err, other)

	require.Error(t, Merge(ctx, []string{other}, schema, false, 1, dir, emit), "maxOpen 1")
	require.NoError(t, Merge(ctx, nil, schema, true, 2, dir, emit), "no files")
}

// Empty files and a file alone merge like any other.
func TestMergeEmptyAndSingle(t *testing.T) {
	dir := t.TempDir()
	rows := makeRows(100, 0, 9)
	paths := []string{
		writeSegment(t, dir, "e1.parquet", benchSchema(), nil),
		writeSegment(t, dir, "full.parquet", benchSchema(), rows),
		writeSegment(t, dir, "e2.parquet", benchSchema(), nil),
	}
	require.Equal(t, rows, mergeAll(t, paths, benchSchema(), false, 2, t.TempDir()))
	require.Equal(t, rows, mergeAll(t, paths[1:2], benchSchema(), false, 2, t.TempDir()))
}
