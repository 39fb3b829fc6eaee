package activities

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
	"golang.org/x/sys/unix"

	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/internal/kafka"
	"handoff/internal/parse"
	"handoff/internal/protocol"
	"handoff/internal/rollup"
)

// BenchmarkConsumeChunkFormats adds 100,000 sample events to a consume
// chunk (parse and the rows buffer, rollup off, garbage collection
// included) written as JSON and as registry-framed Avro (eventgen's
// AvroEvent, the same events): what a consume's CPU per event is, by
// format, without fetching.
func BenchmarkConsumeChunkFormats(b *testing.B) {
	reg := srfake.New()
	defer reg.Close()
	id, _, err := reg.RegisterSchema("bench-value", sr.Schema{Schema: eventgen.AvroSchema})
	if err != nil {
		b.Fatal(err)
	}
	off := false
	mk := func(in domain.InputFormat) domain.Spec {
		spec := domain.Spec{ID: "bench", DataSchema: domain.DataSchema{DataSource: "bench",
			TimestampSpec:   domain.TimestampSpec{Column: "ts", Format: "iso"},
			DimensionsSpec:  domain.DimensionsSpec{Dimensions: []domain.DimensionSpec{{Name: "page"}, {Name: "user"}, {Name: "country"}, {Name: "action"}}},
			MetricsSpec:     []domain.MetricSpec{{Type: "count", Name: "events"}, {Type: "longSum", Name: "delta", FieldName: "delta"}},
			GranularitySpec: domain.GranularitySpec{SegmentGranularity: domain.GranularityHour, Rollup: &off}},
			IOConfig: domain.IOConfig{Topic: "bench", InputFormat: in}}
		spec.ApplyDefaults()
		return spec
	}
	const n = 100_000
	gen := eventgen.New("bench", 1)
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	jrecs, arecs := make([]kafka.Record, n), make([]kafka.Record, n)
	for i := range jrecs {
		gen.Now = func() time.Time { return t0.Add(time.Duration(i) * 36 * time.Millisecond) }
		jrecs[i] = kafka.Record{Offset: int64(i), Value: gen.Event(int64(i))}
		a, err := gen.AvroEvent(int64(i), id)
		if err != nil {
			b.Fatal(err)
		}
		arecs[i] = kafka.Record{Offset: int64(i), Value: a}
	}
	for _, f := range []struct {
		name string
		spec domain.Spec
		recs []kafka.Record
	}{
		{"json", mk(domain.InputFormat{Type: domain.InputJSON}), jrecs},
		{"avro", mk(domain.InputFormat{Type: domain.InputAvroStream, RecordFormats: domain.RecordFormats{AvroBytesDecoder: &domain.BytesDecoder{Type: domain.DecoderSchemaRegistry, URL: reg.URL()}}}), arecs},
	} {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			var ru0, ru1 unix.Rusage
			_ = unix.Getrusage(unix.RUSAGE_SELF, &ru0)
			for b.Loop() {
				parser, err := parse.New(f.spec.DataSchema, f.spec.IOConfig)
				if err != nil {
					b.Fatal(err)
				}
				c := &chunk{in: protocol.ConsumeInput{Spec: f.spec}, parser: parser, to: domain.Offsets{domain.P(0): 0}, run: &running{},
					buf: rollup.New(f.spec.DataSchema.MetricsSpec, false)}
				now := t0.Add(time.Hour)
				for _, r := range f.recs {
					if err := c.add(domain.P(0), r, now); err != nil {
						b.Fatal(err)
					}
				}
				if c.unparseable+c.thrownAway > 0 {
					b.Fatalf("%d unparseable %d thrown", c.unparseable, c.thrownAway)
				}
			}
			_ = unix.Getrusage(unix.RUSAGE_SELF, &ru1)
			cpu := ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
			b.ReportMetric(float64(cpu)/float64(b.N*n), "cpu-ns/event") // the process's, garbage collection included
		})
	}
}
