package e2e

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"handoff/activities"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/internal/lake"
	"handoff/internal/lake/laketest"
	"handoff/internal/segment"
	"handoff/workflows"
)

// avroV2Events are events from..from+n-1 of gen written with
// eventgen.AvroSchemaV2 (id), their lang "fr".
func avroV2Events(t *testing.T, gen *eventgen.Generator, id int, from, n int64) [][]byte {
	t.Helper()
	var out [][]byte
	for i := from; i < from+n; i++ {
		b, err := gen.AvroEventV2(i, id)
		require.NoError(t, err)
		out = append(out, b)
	}
	return out
}

// Writers move from v1 to v2 (a field added with a default) after a
// handoff: with discovery the new field becomes a column of the segments
// and of the Iceberg table, null in the rows before v2 and set after, and
// every event is published exactly once.
func TestAvroSchemaEvolutionAcrossAHandoff(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	reg := startRegistry(t)
	subject := s.name + "-value"
	id1 := reg.register(subject, sr.Schema{Schema: eventgen.AvroSchema})
	id2 := reg.register(subject, sr.Schema{Schema: eventgen.AvroSchemaV2})
	require.NotEqual(t, id1, id2)
	spec := s.spec(2)
	spec.DataSchema.DimensionsSpec = domain.DimensionsSpec{} // discovery
	spec.IOConfig.InputFormat = domain.InputFormat{Type: domain.InputAvroStream, RecordFormats: domain.RecordFormats{AvroBytesDecoder: reg.decoder()}}
	require.NoError(t, spec.Validate())
	gen := eventgen.New(s.name, 38)
	const n = 1000
	s.produceRaw(avroEvents(t, gen, id1, 0, n)...)
	run := s.startSupervisor(spec)
	s.waitCaughtUp(spec)
	s.checkpointUntilPublished(spec, 0)
	s.produceRaw(avroV2Events(t, gen, id2, n, n)...)
	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)
	s.requireExactlyOnce(spec, gen.RunID, 2*n)
	s.requireNoUnparseable(spec)

	rows, err := laketest.ReadRows(context.Background(), s.store.Pool(), lake.Config{}, spec.DataSchema.DataSource)
	require.NoError(t, err)
	require.Len(t, rows, 2*n)
	for _, r := range rows {
		i, err := strconv.Atoi(strings.TrimPrefix(r["id"].(string), gen.RunID+"-"))
		require.NoError(t, err)
		if i < n {
			require.Nil(t, r["lang"], "event %d, written with v1", i)
		} else {
			require.Equal(t, "fr", r["lang"], "event %d, written with v2", i)
		}
	}
}

// The registry stops mid-run while events of a schema the worker has not
// fetched yet arrive: the groups wait, the supervisor shows why while it
// lasts, and when the registry is back every event is published exactly
// once with nothing counted unparseable.
func TestRegistryOutageLosesNothing(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	reg := startRegistry(t)
	subject := s.name + "-value"
	id1 := reg.register(subject, sr.Schema{Schema: eventgen.AvroSchema})
	id2 := reg.register(subject, sr.Schema{Schema: eventgen.AvroSchemaV2})
	spec := formatSpec(s, domain.InputFormat{Type: domain.InputAvroStream, RecordFormats: domain.RecordFormats{AvroBytesDecoder: reg.decoder()}})
	gen := eventgen.New(s.name, 39)
	const n = 1000
	s.produceRaw(avroEvents(t, gen, id1, 0, n)...)
	run := s.startSupervisor(spec)
	s.waitCaughtUp(spec)

	reg.stop()
	s.produceRaw(avroV2Events(t, gen, id2, n, n)...)
	require.Eventually(t, func() bool {
		st := s.status(spec)
		return st.DetailedState == workflows.DetailSchemaRegistryUnavailable && slices.ContainsFunc(st.RecentErrors, func(e workflows.ErrorRecord) bool {
			return strings.Contains(e.Message, domain.ErrSchemaRegistryUnavailable) && strings.Contains(e.Message, "waits for the schema registry")
		})
	}, time.Minute, 200*time.Millisecond, "the outage is not shown: %+v", s.status(spec))
	st := s.status(spec)
	t.Logf("during the outage: %s (%s), last error %q", st.State, st.DetailedState, st.RecentErrors[len(st.RecentErrors)-1].Message)
	require.Zero(t, st.Read.Unparseable)

	reg.start()
	s.waitCaughtUp(spec)
	require.Eventually(t, func() bool {
		return s.status(spec).DetailedState != workflows.DetailSchemaRegistryUnavailable
	}, 2*time.Minute, 500*time.Millisecond, "the outage is still shown after the registry came back")
	s.stopAndWait(spec, run)
	s.requireExactlyOnce(spec, gen.RunID, 2*n)
	s.requireNoUnparseable(spec)
	require.Zero(t, s.status(spec).Read.Unparseable)
}

// A payload without a time field is ingested by the record's timestamp
// (Druid's kafka input format); the key and a header are columns, read
// back from the segments.
func TestKafkaRecordFieldsAreColumns(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	spec := s.spec(2)
	spec.DataSchema.TimestampSpec = domain.TimestampSpec{Column: "kafka.timestamp", Format: "millis"}
	spec.DataSchema.DimensionsSpec.Dimensions = []domain.DimensionSpec{{Name: "id"}, {Name: "page"}, {Name: "kafka.key"}, {Name: "kafka.header.env"}}
	spec.IOConfig.InputFormat = domain.InputFormat{Type: domain.InputKafka, RecordFormats: domain.RecordFormats{ValueFormat: &domain.InputFormat{Type: domain.InputJSON}}}
	spec.ApplyDefaults()
	require.NoError(t, spec.Validate())
	const n = 2000
	runID := s.name
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	recs := make([]*kgo.Record, n)
	for i := range n {
		recs[i] = &kgo.Record{Topic: s.name, Key: fmt.Appendf(nil, "k-%d", i), Timestamp: t0.Add(time.Duration(i) * time.Millisecond),
			Headers: []kgo.RecordHeader{{Key: "env", Value: fmt.Appendf(nil, "env-%d", i%3)}},
			Value:   fmt.Appendf(nil, `{"id":"%s-%d","page":"P%d"}`, runID, i, i%7)}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.brokers...), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	require.NoError(t, err)
	require.NoError(t, cl.ProduceSync(context.Background(), recs...).FirstErr())
	cl.Close()

	run := s.startSupervisor(spec)
	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)
	s.requireExactlyOnce(spec, runID, n)

	segs, err := s.store.Segments(context.Background(), spec.DataSchema.DataSource)
	require.NoError(t, err)
	seen := 0
	for _, seg := range segs {
		u, err := url.Parse(seg.URI)
		require.NoError(t, err)
		schema, rows, err := segment.ReadFile(u.Path)
		require.NoError(t, err)
		col := func(name string) int {
			return slices.IndexFunc(schema.Dims, func(c domain.Column) bool { return c.Name == name })
		}
		idc, keyc, envc := col("id"), col("kafka.key"), col("kafka.header.env")
		require.True(t, idc >= 0 && keyc >= 0 && envc >= 0, "%v", schema.Dims)
		for _, r := range rows {
			i, err := strconv.Atoi(strings.TrimPrefix(r.Dim(idc).S, runID+"-"))
			require.NoError(t, err)
			require.Equal(t, fmt.Sprintf("k-%d", i), r.Dim(keyc).S)
			require.Equal(t, fmt.Sprintf("env-%d", i%3), r.Dim(envc).S)
			require.Equal(t, t0.Add(time.Duration(i)*time.Millisecond).UnixMilli(), r.Time, "event %d's time is its record's", i)
			seen++
		}
	}
	require.Equal(t, n, seen)
}
