package activities

import (
	"io"
	"testing"
	"time"

	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/internal/kafka"
	"handoff/internal/parse"
	"handoff/internal/protocol"
	"handoff/internal/rollup"
)

// BenchmarkConsumeChunk times what a Consume does per record once fetched:
// parse 100,000 wiki events (5 dims, 2 metrics) into the rollup buffer,
// sort, and write the staging chunk (a run file) as writeChunk does —
// rollup off and on.
func BenchmarkConsumeChunk(b *testing.B) {
	for _, rollupOn := range []bool{false, true} {
		name := map[bool]string{false: "rollup-off", true: "rollup-on"}[rollupOn]
		b.Run(name, func(b *testing.B) { benchConsumeChunk(b, rollupOn) })
	}
}

func benchConsumeChunk(b *testing.B, rollupOn bool) {
	spec := domain.Spec{
		ID: "bench",
		DataSchema: domain.DataSchema{
			DataSource:    "bench",
			TimestampSpec: domain.TimestampSpec{Column: "ts", Format: "iso"},
			DimensionsSpec: domain.DimensionsSpec{Dimensions: []domain.DimensionSpec{
				{Name: "page"}, {Name: "user"}, {Name: "country"}, {Name: "action"}, {Name: "id"},
			}},
			MetricsSpec: []domain.MetricSpec{
				{Type: "count", Name: "events"}, {Type: "longSum", Name: "delta", FieldName: "delta"},
			},
			GranularitySpec: domain.GranularitySpec{SegmentGranularity: domain.GranularityHour, Rollup: &rollupOn},
		},
		IOConfig: domain.IOConfig{Topic: "bench"},
	}
	if rollupOn {
		// Without the unique id, at minute granularity, so rows combine.
		spec.DataSchema.DimensionsSpec.Dimensions = spec.DataSchema.DimensionsSpec.Dimensions[:4]
		spec.DataSchema.GranularitySpec.QueryGranularity = domain.GranularityMinute
	}
	spec.ApplyDefaults()
	if err := spec.Validate(); err != nil {
		b.Fatal(err)
	}
	const n = 100_000
	gen := eventgen.New("bench", 1)
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	recs := make([]kafka.Record, n)
	var bytes int64
	for i := range recs {
		gen.Now = func() time.Time { return t0.Add(time.Duration(i) * 36 * time.Millisecond) }
		recs[i] = kafka.Record{Offset: int64(i), Value: gen.Event(int64(i))}
		bytes += int64(len(recs[i].Value))
	}
	b.SetBytes(bytes)
	b.ReportAllocs()
	rows := 0
	for b.Loop() {
		parser, err := parse.New(spec.DataSchema, spec.IOConfig)
		if err != nil {
			b.Fatal(err)
		}
		c := &chunk{
			in: protocol.ConsumeInput{Spec: spec}, parser: parser, to: domain.Offsets{domain.P(0): 0}, run: &running{},
			buf: rollup.New(spec.DataSchema.MetricsSpec, rollupOn),
		}
		now := t0.Add(time.Hour)
		for _, r := range recs {
			if err := c.add(domain.P(0), r, now); err != nil {
				b.Fatal(err)
			}
		}
		if c.unparseable+c.thrownAway > 0 {
			b.Fatalf("%d unparseable, %d thrown away", c.unparseable, c.thrownAway)
		}
		s := c.stage() // as writeChunk stages it
		info, err := s.write(io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		s.release()
		rows = int(info.Rows)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
	b.ReportMetric(float64(n)/float64(rows), "events/row")
}
