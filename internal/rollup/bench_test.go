package rollup

import (
	"fmt"
	"testing"

	"handoff/internal/aggregate"
	"handoff/internal/domain"
)

// BenchmarkBufferAdd adds rows of 5 string dims and 2 metrics (count,
// longSum); with rollup on they fall on 1000 distinct keys. A fresh buffer
// starts every 1<<16 rows, as a chunk would.
func BenchmarkBufferAdd(b *testing.B) {
	ms := []domain.MetricSpec{
		{Type: domain.MetricCount, Name: "count"},
		{Type: domain.MetricLongSum, Name: "bytes", FieldName: "bytes"},
	}
	for _, tc := range []struct {
		name   string
		rollup bool
		ms     []domain.MetricSpec
	}{
		{"rollup=on", true, ms},
		{"rollup=off", false, ms},
		{"rollup=on/hyperUnique", true, append(ms[:2:2], domain.MetricSpec{Type: domain.MetricHyperUnique, Name: "users", FieldName: "user"})},
	} {
		b.Run(tc.name, func(b *testing.B) { benchAdd(b, tc.ms, tc.rollup) })
	}
}

func benchAdd(b *testing.B, ms []domain.MetricSpec, rollup bool) {
	const chunk = 1 << 16
	dims := make([][]domain.Value, 1000)
	for i := range dims {
		dims[i] = []domain.Value{
			domain.StringValue("2025-01-01-page-" + fmt.Sprint(i%100)),
			domain.StringValue([]string{"en", "fr", "de", "ja"}[i%4]),
			domain.StringValue("country-" + fmt.Sprint(i%7)),
			domain.StringValue("Mozilla/5.0 (X11; Linux x86_64) build " + fmt.Sprint(i%3)),
			domain.StringValue("user-" + fmt.Sprint(i)),
		}
	}
	users := make([]domain.Value, 4096)
	for i := range users {
		users[i], _ = aggregate.Init(ms[len(ms)-1], fmt.Sprint("u", i), true)
	}
	// Each Add gets its own Metrics (the buffer combines into them); they are
	// rebuilt off the clock once used up.
	backing := make([]domain.Value, chunk*len(ms))
	refill := func() {
		for i := range chunk {
			m := backing[i*len(ms) : (i+1)*len(ms)]
			m[0], m[1] = domain.LongValue(1), domain.LongValue(int64(i))
			if len(ms) > 2 {
				m[2] = users[i%len(users)]
			}
		}
	}
	refill()
	buf := New(ms, rollup)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == chunk {
			b.StopTimer()
			refill()
			buf, i = New(ms, rollup), 0
			b.StartTimer()
		}
		r := domain.Row{Time: int64(i%4) * 60_000, Dims: dims[i%250], Metrics: backing[i*len(ms) : (i+1)*len(ms) : (i+1)*len(ms)]}
		if err := buf.Add(r); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(buf.Bytes())/float64(max(buf.Len(), 1)), "heapB/row")
}
