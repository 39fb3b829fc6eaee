package parse_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"handoff/internal/domain"
	"handoff/internal/parse"
	"handoff/internal/rollup"
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

// backlogEvent is one backlog event, as JSON and as the Avro record's
// fields.
type backlogEvent struct {
	json []byte
	avro map[string]any
}

// backlogEvents makes n events as bench/'s backlog does.
func backlogEvents(n int) []backlogEvent {
	r := rand.New(rand.NewPCG(20261203, 7))
	skewed := func(n int, k float64) int { return min(int(float64(n)*math.Pow(r.Float64(), k)), n-1) }
	pick := func(vs ...string) string { return vs[skewed(len(vs), 3)] }
	events := make([]backlogEvent, n)
	t0 := now.Add(-time.Hour)
	for i := range events {
		e := map[string]any{
			"id": fmt.Sprintf("e%d", i), "ts": t0.Add(time.Duration(i) * 3600 * time.Microsecond).Truncate(time.Millisecond),
			"page": fmt.Sprintf("P%d", skewed(1000, 8)), "browser": pick("chrome", "safari", "edge", "firefox", "samsung", "opera", "uc", "other"),
			"country": pick("US", "GB", "DE", "IN", "FR", "JP", "CA", "AU", "BR", "IT", "ES", "RU"), "device": pick("desktop", "mobile", "app"),
			"action": pick("edit", "create", "revert", "move", "delete"), "delta": int64(r.IntN(2001) - 1000), "bytes": int64(r.IntN(100_000)),
		}
		j := fmt.Appendf(nil, `{"id":%q,"ts":%q,"page":%q,"browser":%q,"country":%q,"device":%q,"action":%q,"delta":%d,"bytes":%d}`,
			e["id"], e["ts"].(time.Time).UTC().Format("2006-01-02T15:04:05.000Z"), e["page"], e["browser"], e["country"], e["device"], e["action"], e["delta"], e["bytes"])
		events[i] = backlogEvent{json: j, avro: e}
	}
	return events
}

// backlogSchema is bench/'s backlog spec's data schema.
func backlogSchema(rollupOn bool) domain.DataSchema {
	ds := schema("iso", "", "page", "browser", "country", "device", "action")
	ds.GranularitySpec.Rollup = &rollupOn
	if rollupOn {
		ds.GranularitySpec.QueryGranularity = domain.GranularityMinute
	}
	ds.MetricsSpec = []domain.MetricSpec{{Type: domain.MetricCount, Name: "events"},
		{Type: domain.MetricLongSum, Name: "delta", FieldName: "delta"}, {Type: domain.MetricLongSum, Name: "bytes", FieldName: "bytes"}}
	return ds
}

func benchParseBacklog(b *testing.B, view bool) {
	reg := srfake.New()
	defer reg.Close()
	id, _, err := reg.RegisterSchema("edits-value", sr.Schema{Schema: backlogAvroSchema})
	if err != nil {
		b.Fatal(err)
	}
	s := avro.MustParse(backlogAvroSchema)
	var jsonMsgs, avroMsgs [][]byte
	for _, e := range backlogEvents(4096) {
		a, err := sr.Encode(e.avro, &sr.ConfluentHeader{}, id, nil, func(v any) ([]byte, error) { return avro.Marshal(s, v) })
		if err != nil {
			b.Fatal(err)
		}
		jsonMsgs, avroMsgs = append(jsonMsgs, e.json), append(avroMsgs, a)
	}
	interleaveView(b, backlogSchema(false), []benchFormat{{"json", jsonMsgs, jsonIO()}, {"avro", avroMsgs, registryIO(domain.InputAvroStream, reg)}}, view)
}

// BenchmarkParseBacklogColumns is the worker's parse stage for the JSON
// backlog with what follows it in a consume: 100,000 events (as a chunk
// holds) through ParseRecordView into a rollup buffer's columns
// (AddView: dictionary codes, metric cells), rollup off and on, the
// chunk's columns then handed back. Reported per event, in thread CPU
// time.
func BenchmarkParseBacklogColumns(b *testing.B) {
	events := backlogEvents(100_000)
	for _, rollupOn := range []bool{false, true} {
		b.Run(map[bool]string{false: "rollup-off", true: "rollup-on"}[rollupOn], func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			ds := backlogSchema(rollupOn)
			p := mustNew(b, ds, jsonIO())
			dims := p.Schema().Dims
			buf := rollup.New(ds.MetricsSpec, rollupOn)
			var addErr error
			emit := func(r *domain.Row) {
				if addErr == nil {
					addErr = buf.AddView(r)
				}
			}
			var spent time.Duration
			var rec parse.Record // reused, as a consume's chunk reuses its own
			b.ResetTimer()
			for b.Loop() {
				start := threadTime()
				for i := range events {
					rec.Value = events[i].json
					if err := p.ParseRecordView(&rec, now, emit); err != nil || addErr != nil {
						b.Fatal(err, addErr)
					}
				}
				spent += threadTime() - start
				c, _, ok := buf.Columns(dims)
				if !ok {
					b.Fatal("no columns")
				}
				rollup.RecycleColumns(c)
			}
			b.ReportMetric(float64(spent)/float64(b.N*len(events)), "cpu-ns/event")
		})
	}
}
