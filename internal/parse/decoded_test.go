package parse_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"handoff/internal/domain"
	"handoff/internal/parse"
)

const editSchema = `{"type":"record","name":"Edit","namespace":"wiki","fields":[
 {"name":"id","type":"string"},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"page","type":"string"},
 {"name":"delta","type":"long"},
 {"name":"country","type":["null","string"],"default":null},
 {"name":"user","type":{"type":"record","name":"User","fields":[{"name":"name","type":"string"},{"name":"tags","type":{"type":"array","items":"string"}}]}}
]}`

// avroStream registers editSchema and returns an avro_stream IOConfig
// reading from the registry, and a producer-side encoder (franz-go's serde
// functions with hamba/avro).
func avroStream(t *testing.T) (*srfake.Registry, domain.IOConfig, func(map[string]any) []byte) {
	t.Helper()
	reg := srfake.New()
	t.Cleanup(reg.Close)
	id, _, err := reg.RegisterSchema("edits-value", sr.Schema{Schema: editSchema})
	require.NoError(t, err)
	s := avro.MustParse(editSchema)
	enc := func(v map[string]any) []byte {
		b, err := sr.Encode(v, &sr.ConfluentHeader{}, id, nil, func(v any) ([]byte, error) { return avro.Marshal(s, v) })
		require.NoError(t, err)
		return b
	}
	io := domain.IOConfig{Topic: "t", InputFormat: domain.InputFormat{Type: domain.InputAvroStream, RecordFormats: domain.RecordFormats{
		AvroBytesDecoder: &domain.BytesDecoder{Type: domain.DecoderSchemaRegistry, URL: reg.URL()},
	}}}
	return reg, io, enc
}

func edit(id string, at time.Time, delta int64, country any) map[string]any {
	return map[string]any{"id": id, "ts": at, "page": "P", "delta": delta, "country": country,
		"user": map[string]any{"name": "ann", "tags": []any{"a", "b"}}}
}

var leap = time.UnixMilli(leapMillis).UTC()

func TestAvroRowsAreTheJSONRows(t *testing.T) {
	_, io, enc := avroStream(t)
	ds := schema("millis", "", "id", "page", "country")
	ds.DimensionsSpec.Dimensions = append(ds.DimensionsSpec.Dimensions, domain.DimensionSpec{Name: "delta", Type: domain.TypeLong})
	ds.MetricsSpec = []domain.MetricSpec{{Type: domain.MetricLongSum, Name: "d", FieldName: "delta"}}
	p := mustNew(t, ds, io)

	var rows []domain.Row
	require.NoError(t, p.Parse(enc(edit("e-1", leap, -7, "fr")), now, func(r domain.Row) { rows = append(rows, r) }))
	require.Len(t, rows, 1)
	require.Equal(t, int64(leapMillis), rows[0].Time, "a timestamp-millis field is read whatever the format says")
	require.Equal(t, []domain.Value{sv("e-1"), sv("P"), sv("fr"), lv(-7)}, rows[0].Dims)
	require.Equal(t, []domain.Value{lv(-7)}, rows[0].Metrics)

	rows = nil
	require.NoError(t, p.Parse(enc(edit("e-2", leap, 3, nil)), now, func(r domain.Row) { rows = append(rows, r) }))
	require.Equal(t, null, rows[0].Dims[2], "a null union branch is a null dimension")
}

func TestAvroDiscoveryAndFlattenSpec(t *testing.T) {
	_, io, enc := avroStream(t)
	io.InputFormat.FlattenSpec = &domain.FlattenSpec{Fields: []domain.FlattenField{
		{Type: "path", Name: "who", Expr: "$.user.name"}, {Type: "path", Name: "tag0", Expr: "$.user.tags[0]"},
	}}
	ds := schema("iso", "")
	ds.DimensionsSpec.DimensionExclusions = []string{"user"}
	p := mustNew(t, ds, io)
	var rows []domain.Row
	require.NoError(t, p.Parse(enc(edit("e-1", leap, 5, "fr")), now, func(r domain.Row) { rows = append(rows, r) }))
	var names []string
	for _, c := range p.Schema().Dims {
		names = append(names, c.Name)
	}
	require.Equal(t, []string{"id", "page", "delta", "country", "who", "tag0"}, names, "schema order, the timestamp and exclusions left out, then flattened fields")
	require.Equal(t, []domain.Value{sv("e-1"), sv("P"), sv("5"), sv("fr"), sv("ann"), sv("a")}, rows[0].Dims)
}

func TestAvroRejectionAndBadFrames(t *testing.T) {
	reg, io, enc := avroStream(t)
	io.LateMessageRejectionPeriod = domain.Duration(time.Hour)
	p := mustNew(t, schema("millis", "", "id"), io)
	err := p.Parse(enc(edit("old", now.Add(-2*time.Hour), 1, nil)), now, func(domain.Row) { t.Fatal("emitted") })
	var rejected *parse.RejectedError
	require.ErrorAs(t, err, &rejected)
	require.Equal(t, parse.ReasonLate, rejected.Reason)

	require.Contains(t, unparseable(t, p, `{"id":"json"}`).Msg, "wrong magic byte 0x7b")
	require.Contains(t, unparseable(t, p, "\x00\x00\x00").Msg, "truncated frame: 3 bytes")
	require.Contains(t, unparseable(t, p, "\x00\x00\x00\x00\x63\x02").Msg, "schema id 99 is not in the schema registry (404)")

	// An outage is no bad row: it passes through, for the caller to retry.
	// (A schema id not fetched before: fetched ones are cached.)
	const v2 = `{"type":"record","name":"E2","fields":[{"name":"id","type":"string"},{"name":"ts","type":"long"}]}`
	id2, _, err := reg.RegisterSchema("other-value", sr.Schema{Schema: v2})
	require.NoError(t, err)
	msg, err := sr.Encode(map[string]any{"id": "e", "ts": int64(leapMillis)}, &sr.ConfluentHeader{}, id2, nil,
		func(v any) ([]byte, error) { return avro.Marshal(avro.MustParse(v2), v) })
	require.NoError(t, err)
	reg.Intercept(func(w http.ResponseWriter, _ *http.Request) bool {
		w.WriteHeader(http.StatusServiceUnavailable)
		return true
	})
	err = p.Parse(msg, now, func(domain.Row) { t.Fatal("emitted") })
	require.Error(t, err)
	require.True(t, parse.IsUnavailable(err), "%T: %v", err, err)
	var bad *parse.UnparseableError
	require.NotErrorAs(t, err, &bad)
}

func TestKafkaFormatReadsTheRecordsOwnFields(t *testing.T) {
	io := domain.IOConfig{Topic: "t", InputFormat: domain.InputFormat{Type: domain.InputKafka, RecordFormats: domain.RecordFormats{
		ValueFormat: &domain.InputFormat{Type: domain.InputJSON}, PartitionColumnName: "kafka.partition", OffsetColumnName: "kafka.offset",
	}}}
	ds := schema("millis", "", "page", "kafka.key", "kafka.header.env", "kafka.topic")
	ds.TimestampSpec.Column = "kafka.timestamp"
	ds.DimensionsSpec.Dimensions = append(ds.DimensionsSpec.Dimensions,
		domain.DimensionSpec{Name: "kafka.partition", Type: domain.TypeLong}, domain.DimensionSpec{Name: "kafka.offset", Type: domain.TypeLong})
	p := mustNew(t, ds, io)
	r := &parse.Record{Topic: "edits", Partition: 3, Offset: 42, Time: leap, Key: []byte("k-1"),
		Headers: map[string]string{"env": "prod", "other": "x"}, Value: []byte(`{"page":"P"}`)}
	var rows []domain.Row
	require.NoError(t, p.ParseRecord(r, now, func(row domain.Row) { rows = append(rows, row) }))
	require.Len(t, rows, 1)
	require.Equal(t, int64(leapMillis), rows[0].Time, "a payload without a time field, ingested by the record's timestamp")
	require.Equal(t, []domain.Value{sv("P"), sv("k-1"), sv("prod"), sv("edits"), lv(3), lv(42)}, rows[0].Dims)

	// The payload wins over a record field of the same name; a record
	// without a key has a null key.
	r.Value, r.Key = []byte(`{"page":"P","kafka.topic":"mine"}`), nil
	rows = nil
	require.NoError(t, p.ParseRecord(r, now, func(row domain.Row) { rows = append(rows, row) }))
	require.Equal(t, []domain.Value{sv("P"), null, sv("prod"), sv("mine"), lv(3), lv(42)}, rows[0].Dims)
}

func TestKafkaFormatDiscoversTheRecordsFields(t *testing.T) {
	io := domain.IOConfig{Topic: "t", InputFormat: domain.InputFormat{Type: domain.InputKafka, RecordFormats: domain.RecordFormats{
		ValueFormat: &domain.InputFormat{Type: domain.InputJSON}, KeyFormat: &domain.InputFormat{Type: domain.InputJSON},
	}}}
	ds := schema("millis", "")
	ds.TimestampSpec.Column = "kafka.timestamp"
	p := mustNew(t, ds, io)
	r := &parse.Record{Topic: "edits", Time: leap, Key: []byte(`{"user":"ann","x":1}`),
		Headers: map[string]string{"b": "2", "a": "1"}, Value: []byte(`{"page":"P"}`)}
	var rows []domain.Row
	require.NoError(t, p.ParseRecord(r, now, func(row domain.Row) { rows = append(rows, row) }))
	var names []string
	for _, c := range p.Schema().Dims {
		names = append(names, c.Name)
	}
	require.Equal(t, []string{"page", "kafka.topic", "kafka.key", "kafka.header.a", "kafka.header.b"}, names)
	require.Equal(t, []domain.Value{sv("P"), sv("edits"), sv("ann"), sv("1"), sv("2")}, rows[0].Dims, "a JSON key's first field")

	r.Key = []byte(`{"user":`)
	err := p.ParseRecord(r, now, func(domain.Row) { t.Fatal("emitted") })
	require.ErrorContains(t, err, "kafka key: not valid JSON")
}

// Invalid UTF-8 in an Avro string becomes U+FFFD, as in the same
// record's JSON.
func TestAvroInvalidUTF8AsInJSON(t *testing.T) {
	_, io, enc := avroStream(t)
	ds := schema("millis", "")
	p := mustNew(t, ds, io)
	e := edit("e\xff1", leap, 5, "f\xfer")
	var rows []domain.Row
	require.NoError(t, p.Parse(enc(e), now, func(r domain.Row) { rows = append(rows, r) }))
	require.Equal(t, []domain.Value{sv("e\uFFFD1"), sv("P"), sv("5"), sv("f\uFFFDr"), sv(`{"name":"ann","tags":["a","b"]}`)}, rows[0].Dims)

	j := mustNew(t, ds, jsonIO())
	var jrows []domain.Row
	require.NoError(t, j.Parse([]byte(`{"id":"e`+"\xff"+`1","ts":`+itoa(leapMillis)+`,"page":"P","delta":5,"country":"f`+"\xfe"+`r","user":{"name":"ann","tags":["a","b"]}}`), now,
		func(r domain.Row) { jrows = append(jrows, r) }))
	require.Equal(t, jrows, rows)
}
