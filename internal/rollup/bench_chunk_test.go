package rollup

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"handoff/internal/aggregate"
	"handoff/internal/domain"
)

// BenchmarkChunk is one whole consume chunk as the pipeline sees it: 100k
// rows added, then Rows. ns/row is the cost per event. Strings are shared,
// as the parser interns them.
//
//   - keys=3k: about 3000 keys (4 minutes times about 750 dimension tuples,
//     skewed), 5 string dimensions, some null or missing (short Dims),
//     4 metrics (count, longSum, doubleSum, longMax); hyperUnique adds a
//     sketch metric.
//   - keys=60k: make bench's workload (bench/workload.go): 6 minutes of
//     events, 5 skewed dimensions led by 1000 pages, so about 1.7 events
//     fold into a row; count and two longSums.
//   - rollup=off: the same two workloads kept whole; make bench's times are
//     milliseconds apart, the 3k one ties a lot in the sort.
func BenchmarkChunk(b *testing.B) {
	for _, tc := range chunkCases() {
		b.Run(tc.name, func(b *testing.B) { benchChunk(b, tc.ms, tc.rows(tc.ms, tc.rollup), tc.rollup, false) })
	}
}

// BenchmarkChunkColumns is BenchmarkChunk through AddView: the rows
// dictionary-encoded into columns, combined there, sorted on the codes
// and made rows at the end. Rows short of five dimensions are padded with
// nulls (the columns' first row fixes their number).
func BenchmarkChunkColumns(b *testing.B) {
	for _, tc := range chunkCases() {
		rows := tc.rows(tc.ms, tc.rollup)
		for i := range rows {
			for len(rows[i].Dims) < 5 {
				rows[i].Dims = append(rows[i].Dims, domain.NullValue())
			}
		}
		b.Run(tc.name, func(b *testing.B) { benchChunk(b, tc.ms, rows, tc.rollup, true) })
	}
}

// chunkCase is one workload of the chunk benchmarks.
type chunkCase struct {
	name   string
	rollup bool
	ms     []domain.MetricSpec
	rows   func([]domain.MetricSpec, bool) []domain.Row
}

// chunkCases are the workloads BenchmarkChunk's comment describes.
func chunkCases() []chunkCase {
	ms := []domain.MetricSpec{
		{Type: domain.MetricCount, Name: "count"},
		{Type: domain.MetricLongSum, Name: "bytes", FieldName: "bytes"},
		{Type: domain.MetricDoubleSum, Name: "latency", FieldName: "latency"},
		{Type: domain.MetricLongMax, Name: "peak", FieldName: "peak"},
	}
	hu := append(ms[:4:4], domain.MetricSpec{Type: domain.MetricHyperUnique, Name: "users", FieldName: "user"})
	bench := []domain.MetricSpec{
		{Type: domain.MetricCount, Name: "events"},
		{Type: domain.MetricLongSum, Name: "delta", FieldName: "delta"},
		{Type: domain.MetricLongSum, Name: "bytes", FieldName: "bytes"},
	}
	return []chunkCase{
		{"rollup=on/keys=3k", true, ms, fewKeys},
		{"rollup=on/keys=3k/hyperUnique", true, hu, fewKeys},
		{"rollup=on/keys=60k", true, bench, benchWorkload},
		{"rollup=off/keys=3k", false, ms, fewKeys},
		{"rollup=off/keys=60k", false, bench, benchWorkload},
	}
}

const benchChunkRows = 100_000

// fewKeys is the keys=3k workload.
func fewKeys(ms []domain.MetricSpec, _ bool) []domain.Row {
	rng := rand.New(rand.NewPCG(1, 2))
	s, null := domain.StringValue, domain.NullValue()
	pages := make([]domain.Value, 150)
	for i := range pages {
		pages[i] = s(fmt.Sprintf("/site/section-%d/article-%d", i%12, i))
	}
	langs := []domain.Value{null, s("en"), s("fr"), s("de"), s("ja")}
	countries := make([]domain.Value, 30)
	for i := range countries {
		countries[i] = s(fmt.Sprintf("country-%02d", i))
	}
	agents := make([]domain.Value, 8)
	for i := range agents {
		agents[i] = s(fmt.Sprintf("Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/%d.0", 120+i))
	}
	tuples := make([][]domain.Value, 750)
	for i := range tuples {
		d := []domain.Value{pages[rng.IntN(len(pages))], langs[rng.IntN(len(langs))],
			countries[rng.IntN(len(countries))], agents[rng.IntN(len(agents))], s("")}
		switch rng.IntN(10) {
		case 0:
			d = d[:3] // short: the rest are null
		case 1:
			d[4] = null
		case 2:
			d[4] = s("beta")
		}
		tuples[i] = d
	}
	users := make([]domain.Value, 4096)
	for i := range users {
		users[i], _ = aggregate.Init(domain.MetricSpec{Type: domain.MetricHyperUnique}, fmt.Sprint("u", i), true)
	}
	rows := make([]domain.Row, benchChunkRows)
	zipf := rand.NewZipf(rng, 1.1, 4, uint64(len(tuples)-1))
	for i := range rows {
		m := make([]domain.Value, len(ms))
		m[0], m[1] = domain.LongValue(1), domain.LongValue(int64(i%1500))
		m[2], m[3] = domain.DoubleValue(float64(i%97)*0.25), domain.LongValue(int64(i%313))
		if len(m) > 4 {
			m[4] = users[i%len(users)]
		}
		rows[i] = domain.Row{Time: 1_700_000_000_000 + int64(rng.IntN(4))*60_000,
			Dims: slices.Clone(tuples[zipf.Uint64()]), Metrics: m}
	}
	return rows
}

// benchWorkload is the keys=60k workload: make bench's events, truncated to
// the minute with rollup on.
func benchWorkload(ms []domain.MetricSpec, rollup bool) []domain.Row {
	rng := rand.New(rand.NewPCG(20261203, 7))
	skewed := func(vals []domain.Value, k float64) domain.Value {
		return vals[min(int(float64(len(vals))*math.Pow(rng.Float64(), k)), len(vals)-1)]
	}
	strs := func(n int, f func(int) string) []domain.Value {
		v := make([]domain.Value, n)
		for i := range v {
			v[i] = domain.StringValue(f(i))
		}
		return v
	}
	of := func(s ...string) []domain.Value { return strs(len(s), func(i int) string { return s[i] }) }
	pages := strs(1000, func(i int) string { return fmt.Sprint("P", i) })
	browsers := of("chrome", "safari", "edge", "firefox", "samsung", "opera", "uc", "other")
	countries := strs(30, func(i int) string { return fmt.Sprintf("C%02d", i) })
	devices := of("desktop", "mobile", "app")
	actions := of("edit", "create", "revert", "move", "delete")
	const start, span = 1_700_000_000_000, 6 * 60_000
	rows := make([]domain.Row, benchChunkRows)
	for i := range rows {
		t := int64(start + span*i/len(rows))
		if rollup {
			t -= t % 60_000
		}
		action := skewed(actions, 3)
		dims := []domain.Value{skewed(pages, 8), skewed(browsers, 4), skewed(countries, 4), skewed(devices, 2), action}
		rows[i] = domain.Row{Time: t, Dims: dims, Metrics: []domain.Value{
			domain.LongValue(1), domain.LongValue(int64(rng.IntN(2001) - 1000)), domain.LongValue(int64(rng.IntN(100_000)))}}
	}
	return rows
}

func benchChunk(b *testing.B, ms []domain.MetricSpec, rows []domain.Row, rollup, view bool) {
	orig := make([][]domain.Value, len(rows))
	for i, r := range rows {
		orig[i] = slices.Clone(r.Metrics)
	}
	cols := make([]domain.Column, 5)
	for i := range cols {
		cols[i] = domain.Column{Name: fmt.Sprint("d", i), Type: domain.TypeString}
	}
	buf := New(ms, rollup)
	b.ReportAllocs()
	var held int
	for b.Loop() {
		b.StopTimer()
		for i, r := range rows {
			copy(r.Metrics, orig[i]) // the buffer combined into them
		}
		b.StartTimer()
		for i, r := range rows {
			var err error
			if view {
				err = buf.AddView(&rows[i])
			} else {
				err = buf.Add(r)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		held = buf.Len()
		Recycle(buf.Rows(cols))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)), "ns/row")
	b.ReportMetric(float64(held), "keys")
}
