package parse_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/bytedance/sonic"
	"github.com/valyala/fastjson"

	"handoff/internal/domain"
)

// benchEvent is ParseJSON's event: a timestamp, four string dimensions, a
// long dimension, a long metric and a field the spec does not read.
var benchEvent = []byte(`{"ts":"2024-02-29T12:34:56.789Z","page":"Main_Page","user":"bob","country":"fr","lang":"en","status":200,"bytes":5120,"agent":"curl/8.5.0"}`)

// peerEvent is what each peer extracts from benchEvent: the fields the
// bench's spec reads, the timestamp parsed to milliseconds.
type peerEvent struct {
	TS      string `json:"ts"`
	Page    string `json:"page"`
	User    string `json:"user"`
	Country string `json:"country"`
	Lang    string `json:"lang"`
	Status  int64  `json:"status"`
	Bytes   int64  `json:"bytes"`
}

// BenchmarkParseJSONPeers sets the parser beside the fastest Go JSON
// libraries doing the part of its work they can do: scan the event and hand
// back the seven fields the spec reads, the timestamp as milliseconds. The
// peers build no row, so they are a floor under parsing, not a rival
// parser. "validate" only checks that the bytes are JSON: what touching
// each byte once costs.
func BenchmarkParseJSONPeers(b *testing.B) {
	b.Run("handoff", func(b *testing.B) {
		ds := schema("iso", domain.GranularityMinute, "page", "user", "country", "lang")
		ds.DimensionsSpec.Dimensions = append(ds.DimensionsSpec.Dimensions, domain.DimensionSpec{Name: "status", Type: domain.TypeLong})
		ds.MetricsSpec = []domain.MetricSpec{{Type: domain.MetricCount, Name: "rows"}, {Type: domain.MetricLongSum, Name: "sum_bytes", FieldName: "bytes"}}
		p := mustNew(b, ds, jsonIO())
		rows := 0
		emit := func(domain.Row) { rows++ }
		runPeer(b, func(msg []byte) (int64, error) { return 0, p.Parse(msg, now, emit) })
		if rows == 0 {
			b.Fatal("no rows")
		}
	})
	b.Run("fastjson", func(b *testing.B) {
		var p fastjson.Parser
		runPeer(b, func(msg []byte) (int64, error) {
			v, err := p.ParseBytes(msg)
			if err != nil {
				return 0, err
			}
			ms, err := isoMillis(v.GetStringBytes("ts"))
			n := int64(len(v.GetStringBytes("page")) + len(v.GetStringBytes("user")) + len(v.GetStringBytes("country")) + len(v.GetStringBytes("lang")))
			return ms + n + v.GetInt64("status") + v.GetInt64("bytes"), err
		})
	})
	b.Run("sonic", func(b *testing.B) {
		runPeer(b, func(msg []byte) (int64, error) {
			var e peerEvent
			if err := sonic.Unmarshal(msg, &e); err != nil {
				return 0, err
			}
			return e.sum()
		})
	})
	b.Run("encoding-json", func(b *testing.B) {
		runPeer(b, func(msg []byte) (int64, error) {
			var e peerEvent
			if err := json.Unmarshal(msg, &e); err != nil {
				return 0, err
			}
			return e.sum()
		})
	})
	b.Run("validate", func(b *testing.B) {
		runPeer(b, func(msg []byte) (int64, error) { return 0, fastjson.ValidateBytes(msg) })
	})
}

// runPeer times f on benchEvent and fails on its first error.
func runPeer(b *testing.B, f func([]byte) (int64, error)) {
	b.SetBytes(int64(len(benchEvent)))
	b.ReportAllocs()
	var sink int64
	for b.Loop() {
		v, err := f(benchEvent)
		if err != nil {
			b.Fatal(err)
		}
		sink += v
	}
	_ = sink
}

func (e *peerEvent) sum() (int64, error) {
	ms, err := isoMillis([]byte(e.TS))
	return ms + int64(len(e.Page)+len(e.User)+len(e.Country)+len(e.Lang)) + e.Status + e.Bytes, err
}

func isoMillis(ts []byte) (int64, error) {
	t, err := time.Parse(time.RFC3339Nano, string(ts))
	return t.UnixMilli(), err
}
