package parse_test

import (
	"context"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bufbuild/protocompile"
	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"handoff/internal/domain"
	"handoff/internal/parse"
)

// benchJSON is BenchmarkParseJSON's event; benchAvroSchema and
// benchProto are the same event as an Avro record and a Protobuf message.
const (
	benchJSON       = `{"ts":"2024-02-29T12:34:56.789Z","page":"Main_Page","user":"bob","country":"fr","lang":"en","status":200,"bytes":5120,"agent":"curl/8.5.0"}`
	benchAvroSchema = `{"type":"record","name":"Hit","fields":[
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"page","type":"string"},{"name":"user","type":"string"},{"name":"country","type":"string"},
 {"name":"lang","type":"string"},{"name":"status","type":"long"},{"name":"bytes","type":"long"},{"name":"agent","type":"string"}]}`
	benchProto = `syntax = "proto3";
import "google/protobuf/timestamp.proto";
message Hit {
  google.protobuf.Timestamp ts = 1;
  string page = 2; string user = 3; string country = 4; string lang = 5;
  int64 status = 6; int64 bytes = 7; string agent = 8;
}`
)

// BenchmarkParseFormats parses one event written as JSON (136 bytes),
// registry-framed Avro (62) and registry-framed Protobuf (66), with the
// same spec, declared (5 dimensions, one long) or discovered, and 2
// metrics: decoding plus row building, schemas cached. cpu-ns/op is the
// process's CPU time (user and system, garbage collection included) per
// event. interleaved/* parses the three in turns of 256 events on one
// locked thread and reports each one's thread CPU time per event: on a
// shared machine, where ns/op moves with the load, their ratio holds.
func BenchmarkParseFormats(b *testing.B) {
	reg := srfake.New()
	defer reg.Close()
	formats := []benchFormat{
		{"json", [][]byte{[]byte(benchJSON)}, jsonIO()},
		{"avro", [][]byte{benchAvroEvent(b, reg)}, registryIO(domain.InputAvroStream, reg)},
		{"protobuf", [][]byte{benchProtoEvent(b, reg)}, registryIO(domain.InputProtobuf, reg)},
	}
	for _, mode := range []string{"declared", "discovery"} {
		ds := schema("iso", domain.GranularityMinute)
		if mode == "declared" {
			ds = schema("iso", domain.GranularityMinute, "page", "user", "country", "lang")
			ds.DimensionsSpec.Dimensions = append(ds.DimensionsSpec.Dimensions, domain.DimensionSpec{Name: "status", Type: domain.TypeLong})
		}
		ds.MetricsSpec = []domain.MetricSpec{{Type: domain.MetricCount, Name: "rows"}, {Type: domain.MetricLongSum, Name: "sum_bytes", FieldName: "bytes"}}
		for _, f := range formats {
			b.Run(f.name+"/"+mode, func(b *testing.B) {
				p := f.parser(b, ds)
				b.SetBytes(int64(len(f.msgs[0])))
				b.ReportAllocs()
				emit := func(domain.Row) {}
				cpu := cpuTime()
				for b.Loop() {
					if err := p.Parse(f.msgs[0], now, emit); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
		b.Run("interleaved/"+mode, func(b *testing.B) { interleave(b, ds, formats) })
	}
}

// benchFormat is events in one format, the same events in each.
type benchFormat struct {
	name string
	msgs [][]byte
	io   domain.IOConfig
}

// parser is a parser of the format that has read each of its events
// once, each into a row.
func (f benchFormat) parser(b *testing.B, ds domain.DataSchema) *parse.Parser {
	p := mustNew(b, ds, f.io)
	for _, msg := range f.msgs {
		var rows []domain.Row
		if err := p.Parse(msg, now, func(r domain.Row) { rows = append(rows, r) }); err != nil || len(rows) != 1 {
			b.Fatalf("%s: %v, %d rows", f.name, err, len(rows))
		}
	}
	return p
}

// interleave parses each format's events, b.N in all, 256 at a time in
// turns (formats[0], formats[1], ...), and reports the thread CPU time
// each took per event.
func interleave(b *testing.B, ds domain.DataSchema, formats []benchFormat) {
	interleaveView(b, ds, formats, false)
}

// interleaveView is interleave, through ParseRecordView if view.
func interleaveView(b *testing.B, ds domain.DataSchema, formats []benchFormat, view bool) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	parsers := make([]*parse.Parser, len(formats))
	for i, f := range formats {
		parsers[i] = f.parser(b, ds)
	}
	spent := make([]time.Duration, len(formats))
	emit := func(domain.Row) {}
	emitView := func(*domain.Row) {}
	const turn = 256
	b.ResetTimer()
	for done := 0; done < b.N; done += turn {
		for i, f := range formats {
			start := threadTime()
			for k := range turn {
				msg := f.msgs[(done+k)%len(f.msgs)]
				var err error
				if view {
					rec := parse.Record{Value: msg}
					err = parsers[i].ParseRecordView(&rec, now, emitView)
				} else {
					err = parsers[i].Parse(msg, now, emit)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			spent[i] += threadTime() - start
		}
	}
	n := float64((b.N + turn - 1) / turn * turn)
	for i, f := range formats {
		b.ReportMetric(float64(spent[i])/n, f.name+"-cpu-ns/op")
	}
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "avro/json")
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// threadTime is the calling thread's CPU time, to the nanosecond.
func threadTime() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

func registryIO(format string, reg *srfake.Registry) domain.IOConfig {
	bd := &domain.BytesDecoder{Type: domain.DecoderSchemaRegistry, URL: reg.URL()}
	in := domain.InputFormat{Type: format}
	if format == domain.InputAvroStream {
		in.AvroBytesDecoder = bd
	} else {
		in.ProtoBytesDecoder = bd
	}
	return domain.IOConfig{Topic: "t", InputFormat: in}
}

// benchAvroEvent is benchJSON written by franz-go's serde with hamba/avro.
func benchAvroEvent(b *testing.B, reg *srfake.Registry) []byte {
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
	return msg
}

// benchProtoEvent is benchJSON read by protojson into a dynamicpb
// message of benchProto (compiled by protocompile), marshalled, framed.
func benchProtoEvent(b *testing.B, reg *srfake.Registry) []byte {
	id, _, err := reg.RegisterSchema("hits-proto-value", sr.Schema{Schema: benchProto, Type: sr.TypeProtobuf})
	if err != nil {
		b.Fatal(err)
	}
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: func(p string) (io.ReadCloser, error) {
			if p == "hit.proto" {
				return io.NopCloser(strings.NewReader(benchProto)), nil
			}
			return nil, os.ErrNotExist
		},
	})}
	files, err := c.Compile(context.Background(), "hit.proto")
	if err != nil {
		b.Fatal(err)
	}
	m := dynamicpb.NewMessage(files[0].FindDescriptorByName("Hit").(protoreflect.MessageDescriptor))
	if err := protojson.Unmarshal([]byte(benchJSON), m); err != nil {
		b.Fatal(err)
	}
	body, err := proto.Marshal(m)
	if err != nil {
		b.Fatal(err)
	}
	msg, err := sr.Encode(nil, &sr.ConfluentHeader{}, id, []int{0}, func(any) ([]byte, error) { return body, nil })
	if err != nil {
		b.Fatal(err)
	}
	return msg
}
