package parse_test

import (
	"testing"

	"handoff/internal/domain"
)

// BenchmarkParseJSON parses a typical event: about 150 bytes, 5 declared
// dimensions (one long), 2 metrics.
func BenchmarkParseJSON(b *testing.B) {
	ds := schema("iso", domain.GranularityMinute, "page", "user", "country", "lang")
	ds.DimensionsSpec.Dimensions = append(ds.DimensionsSpec.Dimensions, domain.DimensionSpec{Name: "status", Type: domain.TypeLong})
	ds.MetricsSpec = []domain.MetricSpec{{Type: domain.MetricCount, Name: "rows"}, {Type: domain.MetricLongSum, Name: "sum_bytes", FieldName: "bytes"}}
	p := mustNew(b, ds, jsonIO())
	msg := []byte(`{"ts":"2024-02-29T12:34:56.789Z","page":"Main_Page","user":"bob","country":"fr","lang":"en","status":200,"bytes":5120,"agent":"curl/8.5.0"}`)
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
}

// BenchmarkParseJSONDiscovery is the same event with schemaless discovery.
func BenchmarkParseJSONDiscovery(b *testing.B) {
	ds := schema("iso", domain.GranularityMinute)
	ds.MetricsSpec = []domain.MetricSpec{{Type: domain.MetricCount, Name: "rows"}, {Type: domain.MetricLongSum, Name: "sum_bytes", FieldName: "bytes"}}
	p := mustNew(b, ds, jsonIO())
	msg := []byte(`{"ts":"2024-02-29T12:34:56.789Z","page":"Main_Page","user":"bob","country":"fr","lang":"en","status":200,"bytes":5120,"agent":"curl/8.5.0"}`)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Parse(msg, now, func(domain.Row) {}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseJSONTopicDimension is BenchmarkParseJSON and
// BenchmarkParseJSONDiscovery with ioConfig.topicDimension, SetTopic called
// before every message as a consumer switching partitions would.
func BenchmarkParseJSONTopicDimension(b *testing.B) {
	msg := []byte(`{"ts":"2024-02-29T12:34:56.789Z","page":"Main_Page","user":"bob","country":"fr","lang":"en","status":200,"bytes":5120,"agent":"curl/8.5.0"}`)
	metrics := []domain.MetricSpec{{Type: domain.MetricCount, Name: "rows"}, {Type: domain.MetricLongSum, Name: "sum_bytes", FieldName: "bytes"}}
	declared := schema("iso", domain.GranularityMinute, "page", "user", "country", "lang")
	declared.DimensionsSpec.Dimensions = append(declared.DimensionsSpec.Dimensions, domain.DimensionSpec{Name: "status", Type: domain.TypeLong})
	declared.MetricsSpec = metrics
	discovery := schema("iso", domain.GranularityMinute)
	discovery.MetricsSpec = metrics
	for _, bc := range []struct {
		name string
		ds   domain.DataSchema
	}{{"declared", declared}, {"discovery", discovery}} {
		b.Run(bc.name, func(b *testing.B) {
			io := jsonIO()
			io.TopicDimension = "topic"
			p := mustNew(b, bc.ds, io)
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				p.SetTopic("events")
				if err := p.Parse(msg, now, func(domain.Row) {}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
