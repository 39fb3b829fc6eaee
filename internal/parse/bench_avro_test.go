package parse_test

import (
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"handoff/internal/domain"
)

// benchAvroSchema is BenchmarkParseJSON's event as an Avro record.
const benchAvroSchema = `{"type":"record","name":"Hit","fields":[
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"page","type":"string"},{"name":"user","type":"string"},{"name":"country","type":"string"},
 {"name":"lang","type":"string"},{"name":"status","type":"long"},{"name":"bytes","type":"long"},{"name":"agent","type":"string"}]}`

// BenchmarkParseAvro parses BenchmarkParseJSON's event written as
// registry-framed Avro (62 bytes against 136), with the same spec: the
// decode (hamba/avro into Go values) plus the parser's row building.
func BenchmarkParseAvro(b *testing.B) {
	for _, bc := range []struct {
		name     string
		discover bool
	}{{"declared", false}, {"discovery", true}} {
		b.Run(bc.name, func(b *testing.B) {
			reg := srfake.New()
			defer reg.Close()
			id, _, err := reg.RegisterSchema("hits-value", sr.Schema{Schema: benchAvroSchema})
			if err != nil {
				b.Fatal(err)
			}
			s := avro.MustParse(benchAvroSchema)
			msg, err := sr.Encode(map[string]any{
				"ts": time.UnixMilli(leapMillis), "page": "Main_Page", "user": "bob", "country": "fr", "lang": "en",
				"status": int64(200), "bytes": int64(5120), "agent": "curl/8.5.0",
			}, &sr.ConfluentHeader{}, id, nil, func(v any) ([]byte, error) { return avro.Marshal(s, v) })
			if err != nil {
				b.Fatal(err)
			}
			ds := schema("iso", domain.GranularityMinute)
			if !bc.discover {
				ds = schema("iso", domain.GranularityMinute, "page", "user", "country", "lang")
				ds.DimensionsSpec.Dimensions = append(ds.DimensionsSpec.Dimensions, domain.DimensionSpec{Name: "status", Type: domain.TypeLong})
			}
			ds.MetricsSpec = []domain.MetricSpec{{Type: domain.MetricCount, Name: "rows"}, {Type: domain.MetricLongSum, Name: "sum_bytes", FieldName: "bytes"}}
			io := domain.IOConfig{Topic: "t", InputFormat: domain.InputFormat{Type: domain.InputAvroStream, RecordFormats: domain.RecordFormats{
				AvroBytesDecoder: &domain.BytesDecoder{Type: domain.DecoderSchemaRegistry, URL: reg.URL()},
			}}}
			p := mustNew(b, ds, io)
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			n := 0
			emit := func(domain.Row) { n++ }
			for b.Loop() {
				if err := p.Parse(msg, now, emit); err != nil {
					b.Fatal(err)
				}
			}
			if n == 0 {
				b.Fatal("no rows")
			}
		})
	}
}
