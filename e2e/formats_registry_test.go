package e2e

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"

	"handoff/activities"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/internal/lake"
	"handoff/internal/lake/laketest"
	"handoff/internal/segment"
)

// requireEventColumns checks the first segment has the spec's columns
// with their types, and that the table has them too.
func (s *stack) requireEventColumns(spec domain.Spec, want []domain.Column) {
	s.t.Helper()
	segs, err := s.store.Segments(context.Background(), spec.DataSchema.DataSource)
	require.NoError(s.t, err)
	require.NotEmpty(s.t, segs)
	u, err := url.Parse(segs[0].URI)
	require.NoError(s.t, err)
	schema, err := segment.ReadSchema(u.Path)
	require.NoError(s.t, err)
	require.Equal(s.t, want, schema.Dims)
	tbl, err := laketest.Load(context.Background(), s.store.Pool(), lake.Config{}, spec.DataSchema.DataSource)
	require.NoError(s.t, err)
	for _, c := range want {
		_, ok := tbl.Schema().FindFieldByName(c.Name)
		require.True(s.t, ok, "table column %s", c.Name)
	}
}

// runFormat produces msgs, runs the supervisor to the end of the topic and
// checks every event (ids gen.RunID-0..n-1) is published exactly once in
// the segments, the Iceberg table and DuckDB, with nothing unparseable.
func (s *stack) runFormat(spec domain.Spec, runID string, n int64, msgs [][]byte) {
	s.t.Helper()
	s.produceRaw(msgs...)
	run := s.startSupervisor(spec)
	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)
	s.requireExactlyOnce(spec, runID, n)
	s.requireNoUnparseable(spec)
	s.requireEventColumns(spec, []domain.Column{
		{Name: "id", Type: domain.TypeString}, {Name: "page", Type: domain.TypeString}, {Name: "user", Type: domain.TypeString},
		{Name: "country", Type: domain.TypeString}, {Name: "action", Type: domain.TypeString}, {Name: "delta", Type: domain.TypeLong},
	})
}

// formatSpec is the stack's spec with a long delta dimension and a
// longSum of it, read from the given input format.
func formatSpec(s *stack, in domain.InputFormat) domain.Spec {
	spec := s.spec(2)
	spec.DataSchema.DimensionsSpec.Dimensions = append(spec.DataSchema.DimensionsSpec.Dimensions, domain.DimensionSpec{Name: "delta", Type: domain.TypeLong})
	spec.DataSchema.MetricsSpec = []domain.MetricSpec{{Type: domain.MetricLongSum, Name: "delta_sum", FieldName: "delta"}}
	spec.IOConfig.InputFormat = in
	spec.ApplyDefaults()
	require.NoError(s.t, spec.Validate())
	return spec
}

// Avro in the Confluent wire format, schema from the registry: every event
// exactly once in segments, table and DuckDB.
func TestAvroFromTheRegistryIsIngestedExactlyOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	reg := startRegistry(t)
	id := reg.register(s.name+"-value", sr.Schema{Schema: eventgen.AvroSchema})
	spec := formatSpec(s, domain.InputFormat{Type: domain.InputAvroStream, RecordFormats: domain.RecordFormats{AvroBytesDecoder: reg.decoder()}})
	gen := eventgen.New(s.name, 34)
	const n = 3000
	s.runFormat(spec, gen.RunID, n, avroEvents(t, gen, id, 0, n))
}

// eventProto is the sample event as a Protobuf message, its time a
// google.protobuf.Timestamp; Meta comes first so that Edit is message 1.
const eventProto = `syntax = "proto3";
package handoff.sample;
import "google/protobuf/timestamp.proto";
message Meta { string source = 1; }
message Edit {
  string id = 1;
  google.protobuf.Timestamp ts = 2;
  string page = 3;
  string user = 4;
  string country = 5;
  string action = 6;
  int64 delta = 7;
}`

// Protobuf in the Confluent wire format (message index [1]), schema text
// from the registry, encoded with dynamicpb: every event exactly once.
func TestProtobufFromTheRegistryIsIngestedExactlyOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	reg := startRegistry(t)
	id := reg.register(s.name+"-value", sr.Schema{Schema: eventProto, Type: sr.TypeProtobuf})
	spec := formatSpec(s, domain.InputFormat{Type: domain.InputProtobuf, RecordFormats: domain.RecordFormats{ProtoBytesDecoder: reg.decoder()}})
	gen := eventgen.New(s.name, 35)
	const n = 3000
	md := protoDescriptor(t, eventProto, "handoff.sample.Edit")
	msgs := make([][]byte, 0, n)
	for i := range int64(n) {
		msgs = append(msgs, protoEvent(t, md, gen.Event(i), id))
	}
	s.runFormat(spec, gen.RunID, n, msgs)
}

// JSON Schema framed JSON: the 5-byte frame, then the event's JSON.
func TestJSONSchemaFramedIsIngestedExactlyOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	reg := startRegistry(t)
	id := reg.register(s.name+"-value", sr.Schema{Type: sr.TypeJSON, Schema: `{"type":"object","properties":{"id":{"type":"string"},"ts":{"type":"string"},"delta":{"type":"integer"}}}`})
	spec := formatSpec(s, domain.InputFormat{Type: domain.InputJSONSchema, RecordFormats: domain.RecordFormats{JSONBytesDecoder: reg.decoder()}})
	gen := eventgen.New(s.name, 36)
	const n = 3000
	msgs := make([][]byte, 0, n)
	for i := range int64(n) {
		var v map[string]any
		require.NoError(t, json.Unmarshal(gen.Event(i), &v))
		b, err := sr.Encode(v, &sr.ConfluentHeader{}, id, nil, json.Marshal)
		require.NoError(t, err)
		msgs = append(msgs, b)
	}
	s.runFormat(spec, gen.RunID, n, msgs)
}

// Unknown schema id, wrong magic byte, truncated frame and garbage bytes
// among good Avro events: each bad one counted unparseable with its
// reason; the good ones exactly once.
func TestBadFramesAreUnparseableWithTheirReason(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	reg := startRegistry(t)
	id := reg.register(s.name+"-value", sr.Schema{Schema: eventgen.AvroSchema})
	spec := formatSpec(s, domain.InputFormat{Type: domain.InputAvroStream, RecordFormats: domain.RecordFormats{AvroBytesDecoder: reg.decoder()}})
	spec.TuningConfig.MaxSavedParseExceptions = 10
	gen := eventgen.New(s.name, 37)
	const n = 500
	msgs := avroEvents(t, gen, id, 0, n)
	bad := map[string][]byte{
		"schema id 9999 is not in the schema registry (404)": {0, 0, 0, 0x27, 0x0f, 2, 'x'},
		"wrong magic byte 0x7b":                              []byte(`{"id":"json"}`),
		"truncated frame: 3 bytes":                           {0, 0, 0},
		"not Avro of schema id":                              append([]byte{0, 0, 0, 0, byte(id)}, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
	}
	for _, b := range bad {
		msgs = append(msgs, b)
	}
	s.produceRaw(msgs...)
	run := s.startSupervisor(spec)
	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)
	s.requireExactlyOnce(spec, gen.RunID, n)
	rows, err := s.store.Pool().Query(context.Background(), `SELECT error FROM parse_errors WHERE datasource = $1`, spec.DataSchema.DataSource)
	require.NoError(t, err)
	var reasons []string
	for rows.Next() {
		var e string
		require.NoError(t, rows.Scan(&e))
		reasons = append(reasons, e)
	}
	require.NoError(t, rows.Err())
	require.Len(t, reasons, len(bad), "%v", reasons)
	for want := range bad {
		found := false
		for _, r := range reasons {
			found = found || strings.Contains(r, want)
		}
		require.True(t, found, "no saved reason says %q: %v", want, reasons)
	}
	require.EqualValues(t, len(bad), s.status(spec).Read.Unparseable)
}
