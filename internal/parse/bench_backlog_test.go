package parse_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"handoff/internal/domain"
)

// backlogAvroSchema is bench/'s backlog event as Avro (its off-avro
// variant's schema).
const backlogAvroSchema = `{"type":"record","name":"Edit","fields":[
 {"name":"id","type":"string"},{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"page","type":"string"},{"name":"browser","type":"string"},{"name":"country","type":"string"},
 {"name":"device","type":"string"},{"name":"action","type":"string"},{"name":"delta","type":"long"},{"name":"bytes","type":"long"}]}`

// BenchmarkParseBacklog parses 4,096 events shaped as bench/'s backlog
// (a unique id, times a few ms apart, five string dimensions of mixed
// cardinality, two long metrics; about 155 bytes of JSON, 50 of framed
// Avro) with its spec (rollup off), JSON and Avro in turns on one thread
// as BenchmarkParseFormats/interleaved does: the worker's parse stage
// without the rest of the worker.
func BenchmarkParseBacklog(b *testing.B) { benchParseBacklog(b, false) }

// BenchmarkParseBacklogView is BenchmarkParseBacklog through
// ParseRecordView: rows as views, nothing kept (the columnar chunk's
// path, without its column builder).
func BenchmarkParseBacklogView(b *testing.B) { benchParseBacklog(b, true) }

func benchParseBacklog(b *testing.B, view bool) {
	reg := srfake.New()
	defer reg.Close()
	id, _, err := reg.RegisterSchema("edits-value", sr.Schema{Schema: backlogAvroSchema})
	if err != nil {
		b.Fatal(err)
	}
	s := avro.MustParse(backlogAvroSchema)
	r := rand.New(rand.NewPCG(20261203, 7))
	skewed := func(n int, k float64) int { return min(int(float64(n)*math.Pow(r.Float64(), k)), n-1) }
	pick := func(vs ...string) string { return vs[skewed(len(vs), 3)] }
	var jsonMsgs, avroMsgs [][]byte
	t0 := now.Add(-time.Hour)
	for i := range 4096 {
		e := map[string]any{
			"id": fmt.Sprintf("e%d", i), "ts": t0.Add(time.Duration(i) * 3600 * time.Microsecond).Truncate(time.Millisecond),
			"page": fmt.Sprintf("P%d", skewed(1000, 8)), "browser": pick("chrome", "safari", "edge", "firefox", "samsung", "opera", "uc", "other"),
			"country": pick("US", "GB", "DE", "IN", "FR", "JP", "CA", "AU", "BR", "IT", "ES", "RU"), "device": pick("desktop", "mobile", "app"),
			"action": pick("edit", "create", "revert", "move", "delete"), "delta": int64(r.IntN(2001) - 1000), "bytes": int64(r.IntN(100_000)),
		}
		j := fmt.Appendf(nil, `{"id":%q,"ts":%q,"page":%q,"browser":%q,"country":%q,"device":%q,"action":%q,"delta":%d,"bytes":%d}`,
			e["id"], e["ts"].(time.Time).UTC().Format("2006-01-02T15:04:05.000Z"), e["page"], e["browser"], e["country"], e["device"], e["action"], e["delta"], e["bytes"])
		a, err := sr.Encode(e, &sr.ConfluentHeader{}, id, nil, func(v any) ([]byte, error) { return avro.Marshal(s, v) })
		if err != nil {
			b.Fatal(err)
		}
		jsonMsgs, avroMsgs = append(jsonMsgs, j), append(avroMsgs, a)
	}
	ds := schema("iso", "", "page", "browser", "country", "device", "action")
	off := false
	ds.GranularitySpec.Rollup = &off
	ds.MetricsSpec = []domain.MetricSpec{{Type: domain.MetricCount, Name: "events"},
		{Type: domain.MetricLongSum, Name: "delta", FieldName: "delta"}, {Type: domain.MetricLongSum, Name: "bytes", FieldName: "bytes"}}
	interleaveView(b, ds, []benchFormat{{"json", jsonMsgs, jsonIO()}, {"avro", avroMsgs, registryIO(domain.InputAvroStream, reg)}}, view)
}
