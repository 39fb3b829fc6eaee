package rollup

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/aggregate"
	"handoff/internal/domain"
)

var (
	metrics = []domain.MetricSpec{
		{Type: domain.MetricCount, Name: "count"},
		{Type: domain.MetricLongSum, Name: "sum", FieldName: "v"},
		{Type: domain.MetricLongMin, Name: "min", FieldName: "v"},
		{Type: domain.MetricLongMax, Name: "max", FieldName: "v"},
		{Type: domain.MetricDoubleSum, Name: "dsum", FieldName: "d"},
		{Type: domain.MetricHyperUnique, Name: "users", FieldName: "user"},
	}
	dims = []domain.Column{{Name: "page", Type: domain.TypeString}, {Name: "lang", Type: domain.TypeString}}
)

// row builds a row through aggregate.Init, as ingestion does.
func row(t testing.TB, time int64, page, lang string, v int64, user string) domain.Row {
	raws := []string{"", strconv.FormatInt(v, 10), strconv.FormatInt(v, 10), strconv.FormatInt(v, 10),
		strconv.FormatFloat(float64(v)+0.5, 'g', -1, 64), user}
	r := domain.Row{Time: time, Dims: []domain.Value{domain.StringValue(page)}}
	if lang != "" {
		r.Dims = append(r.Dims, domain.StringValue(lang))
	}
	for i, m := range metrics {
		val, err := aggregate.Init(m, raws[i], true)
		require.NoError(t, err)
		r.Metrics = append(r.Metrics, val)
	}
	return r
}

type totals struct {
	count, sum, min, max int64
	dsum                 float64
	users                map[string]bool
}

func TestRollup(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	b := New(metrics, true)
	want := map[string]*totals{}
	for range 10_000 {
		time := int64(rng.IntN(4)) * 60_000
		page, lang := fmt.Sprintf("p%d", rng.IntN(5)), []string{"", "en", "fr", "de", "ja"}[rng.IntN(5)]
		v := rng.Int64N(2000) - 1000
		user := fmt.Sprintf("u%d", rng.IntN(50))
		require.NoError(t, b.Add(row(t, time, page, lang, v, user)))
		k := fmt.Sprint(time, page, lang)
		w := want[k]
		if w == nil {
			w = &totals{min: v, max: v, users: map[string]bool{}}
			want[k] = w
		}
		w.count++
		w.sum += v
		w.min, w.max = min(w.min, v), max(w.max, v)
		w.dsum += float64(v) + 0.5
		w.users[user] = true
	}
	require.Len(t, want, 100)
	require.Equal(t, 100, b.Len())

	rows := b.Rows(dims)
	require.Len(t, rows, 100)
	require.True(t, slices.IsSortedFunc(rows, func(x, y domain.Row) int { return domain.CompareRows(x, y, dims) }))
	for _, r := range rows {
		lang := ""
		if l := r.Dim(1); !l.Null {
			lang = l.S
		}
		w := want[fmt.Sprint(r.Time, r.Dims[0].S, lang)]
		require.NotNil(t, w)
		require.Equal(t, w.count, r.Metrics[0].Long())
		require.Equal(t, w.sum, r.Metrics[1].Long())
		require.Equal(t, w.min, r.Metrics[2].Long())
		require.Equal(t, w.max, r.Metrics[3].Long())
		require.Equal(t, w.dsum, r.Metrics[4].Double()) // halves: exact
		n, err := aggregate.Estimate(r.Metrics[5])
		require.NoError(t, err)
		require.Equal(t, uint64(len(w.users)), n)
	}
	require.Zero(t, b.Len())
	require.Zero(t, b.Bytes())
}

func TestNoRollupKeepsEveryRow(t *testing.T) {
	b := New(metrics, false)
	for i := range 1000 {
		require.NoError(t, b.Add(row(t, int64(i%3), "p", "en", int64(i), "u")))
	}
	require.Equal(t, 1000, b.Len())
	rows := b.Rows(dims)
	require.Len(t, rows, 1000)
	for i, r := range rows {
		require.Equal(t, int64(1), r.Metrics[0].Long())
		wantTime := int64(0) // 334 rows of time 0, then 333 of 1 and of 2
		if i >= 334 {
			wantTime = 1 + int64(i-334)/333
		}
		require.Equal(t, wantTime, r.Time, "sorted by time")
		if i > 0 && r.Time == rows[i-1].Time {
			require.Greater(t, r.Metrics[1].Long(), rows[i-1].Metrics[1].Long(), "ties keep arrival order")
		}
	}
}

func TestTrailingNullsRollUp(t *testing.T) {
	b := New(metrics[:2], true)
	s, null := domain.StringValue, domain.NullValue()
	add := func(dims ...domain.Value) {
		require.NoError(t, b.Add(domain.Row{Time: 7, Dims: dims, Metrics: []domain.Value{domain.LongValue(1), domain.LongValue(10)}}))
	}
	add(s("a"))
	add(s("a"), null)
	add(s("a"), null, null)
	add(s("a"), s("")) // empty is not null
	add()
	add(null)
	require.Equal(t, 3, b.Len())
	rows := b.Rows([]domain.Column{{Name: "x", Type: domain.TypeString}, {Name: "y", Type: domain.TypeString}, {Name: "z", Type: domain.TypeString}})
	require.Equal(t, int64(2), rows[0].Metrics[0].Long()) // (), (null)
	require.Equal(t, int64(3), rows[1].Metrics[0].Long()) // a, a null, a null null
	require.Equal(t, int64(30), rows[1].Metrics[1].Long())
	require.Equal(t, int64(1), rows[2].Metrics[0].Long()) // a ""
}

func TestRowsSortedWithDiscoveredDims(t *testing.T) {
	b := New(metrics[:1], true)
	s, l := domain.StringValue, domain.LongValue
	one := []domain.Value{domain.LongValue(1)}
	in := []domain.Row{
		{Time: 2, Dims: []domain.Value{s("b")}},
		{Time: 1, Dims: []domain.Value{s("b"), l(10)}},
		{Time: 1, Dims: []domain.Value{s("b"), l(-3)}},
		{Time: 1, Dims: []domain.Value{s("b")}}, // null long sorts first
		{Time: 1, Dims: []domain.Value{s("a"), l(5)}},
		{Time: 1, Dims: nil},
	}
	for _, r := range in {
		r.Metrics = slices.Clone(one)
		require.NoError(t, b.Add(r))
	}
	cols := []domain.Column{{Name: "s", Type: domain.TypeString}, {Name: "n", Type: domain.TypeLong}}
	rows := b.Rows(cols)
	got := make([]string, len(rows))
	for i, r := range rows {
		got[i] = fmt.Sprint(r.Time, " ", r.Dim(0).Null, " ", r.Dim(0).S, " ", r.Dim(1).Null, " ", r.Dim(1).Long())
	}
	require.Equal(t, []string{
		"1 true  true 0",
		"1 false a false 5",
		"1 false b true 0",
		"1 false b false -3",
		"1 false b false 10",
		"2 false b true 0",
	}, got)
}

func TestBytes(t *testing.T) {
	b := New(metrics, true)
	require.Zero(t, b.Bytes())
	require.NoError(t, b.Add(row(t, 1, "page", "en", 1, "u1")))
	one := b.Bytes()
	require.Greater(t, one, int64(0))

	require.NoError(t, b.Add(row(t, 1, "a much longer page name than the first", "en", 1, "u1")))
	two := b.Bytes()
	require.Greater(t, two-one, int64(len("a much longer page name than the first")))

	// Rolling up keeps no new row, but a growing sketch is counted.
	for i := range 1000 {
		require.NoError(t, b.Add(row(t, 1, "page", "en", 1, "user-"+strconv.Itoa(i))))
	}
	require.Equal(t, 2, b.Len())
	require.Greater(t, b.Bytes(), two)

	b.Rows(dims)
	require.Zero(t, b.Bytes())
	require.Zero(t, b.Len())

	// Without rollup every row counts.
	b = New(metrics, false)
	var last int64
	for i := range 100 {
		require.NoError(t, b.Add(row(t, int64(i), "page", "en", 1, "u")))
		require.Greater(t, b.Bytes(), last)
		last = b.Bytes()
	}
}

func TestBufferReusedAfterRows(t *testing.T) {
	b := New(metrics, true)
	require.NoError(t, b.Add(row(t, 1, "p", "en", 1, "a")))
	require.NoError(t, b.Add(row(t, 1, "p", "en", 2, "b")))
	first := b.Rows(dims)
	require.NoError(t, b.Add(row(t, 1, "p", "en", 5, "c")))
	require.NoError(t, b.Add(row(t, 1, "p", "en", 5, "c")))
	second := b.Rows(dims)
	require.Len(t, first, 1)
	require.Len(t, second, 1)
	require.Equal(t, int64(3), first[0].Metrics[1].Long())
	require.Equal(t, int64(10), second[0].Metrics[1].Long())
	n, err := aggregate.Estimate(first[0].Metrics[5])
	require.NoError(t, err)
	require.Equal(t, uint64(2), n)
	n, err = aggregate.Estimate(second[0].Metrics[5])
	require.NoError(t, err)
	require.Equal(t, uint64(1), n)
}

func TestNullMetricsRollUp(t *testing.T) {
	b := New(metrics, true)
	null := func() domain.Row {
		r := domain.Row{Time: 1, Dims: []domain.Value{domain.StringValue("p")}}
		for _, m := range metrics {
			v, err := aggregate.Init(m, "", false)
			require.NoError(t, err)
			r.Metrics = append(r.Metrics, v)
		}
		return r
	}
	require.NoError(t, b.Add(null()))
	require.NoError(t, b.Add(null()))
	rows := b.Rows(dims)
	require.Equal(t, int64(2), rows[0].Metrics[0].Long())
	for _, v := range rows[0].Metrics[1:] {
		require.True(t, v.Null)
	}

	require.NoError(t, b.Add(null()))
	require.NoError(t, b.Add(row(t, 1, "p", "", -4, "x")))
	require.NoError(t, b.Add(null()))
	rows = b.Rows(dims)
	require.Equal(t, int64(3), rows[0].Metrics[0].Long())
	require.Equal(t, int64(-4), rows[0].Metrics[1].Long())
	require.Equal(t, int64(-4), rows[0].Metrics[2].Long())
	n, err := aggregate.Estimate(rows[0].Metrics[5])
	require.NoError(t, err)
	require.Equal(t, uint64(1), n)
}

func TestAddErrors(t *testing.T) {
	b := New(metrics, true)
	require.EqualError(t, b.Add(domain.Row{Time: 1}), "row has 0 metrics, want 6")

	require.NoError(t, b.Add(row(t, 1, "p", "en", 1, "a")))
	bad := row(t, 1, "p", "en", 1, "a")
	bad.Metrics[5] = domain.StringValue("not a sketch")
	require.ErrorContains(t, b.Add(bad), `metric "users": decode sketch`)
}

func TestAddExistingKeyAllocatesNothing(t *testing.T) {
	b := New(metrics[:4], true)
	dims := []domain.Value{domain.StringValue("page"), domain.StringValue("en"), domain.StringValue("x")}
	ms := []domain.Value{domain.LongValue(1), domain.LongValue(2), domain.LongValue(2), domain.LongValue(2)}
	require.NoError(t, b.Add(domain.Row{Time: 1, Dims: dims, Metrics: slices.Clone(ms)}))
	r := domain.Row{Time: 1, Dims: dims, Metrics: ms}
	allocs := testing.AllocsPerRun(100, func() {
		if err := b.Add(r); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs)
}
