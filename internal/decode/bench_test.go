package decode

import (
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
)

// discard is a Sink that wants every field and keeps none.
type discard struct{}

func (discard) Column(string) (int, bool)      { return 0, true }
func (discard) Field(int, string, Value) error { return nil }
func (discard) Scalar(Value) error             { return nil }

// BenchmarkAvroDecode decodes internal/parse's benchmark event (62 bytes
// of framed Avro, 8 fields) into a sink that keeps nothing: the
// decoder's own cost per record.
func BenchmarkAvroDecode(b *testing.B) {
	const schema = `{"type":"record","name":"Hit","fields":[
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"page","type":"string"},{"name":"user","type":"string"},{"name":"country","type":"string"},
 {"name":"lang","type":"string"},{"name":"status","type":"long"},{"name":"bytes","type":"long"},{"name":"agent","type":"string"}]}`
	reg, c := newRegistry(&testing.T{})
	defer reg.Close()
	id, _, err := reg.RegisterSchema("hits-value", sr.Schema{Schema: schema})
	if err != nil {
		b.Fatal(err)
	}
	msg, err := sr.Encode(map[string]any{
		"ts": time.UnixMilli(1709210096789), "page": "Main_Page", "user": "bob", "country": "fr", "lang": "en",
		"status": int64(200), "bytes": int64(5120), "agent": "curl/8.5.0",
	}, &sr.ConfluentHeader{}, id, nil, avroEnc(&testing.T{}, schema))
	if err != nil {
		b.Fatal(err)
	}
	d := NewAvroRegistry(c, Options{})
	b.ReportAllocs()
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	for b.Loop() {
		if err := d.Decode(msg, discard{}); err != nil {
			b.Fatal(err)
		}
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op") // steadier than ns/op on a shared machine
}
