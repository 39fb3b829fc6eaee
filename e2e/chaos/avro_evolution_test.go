package chaos

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
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/internal/lake"
	"handoff/internal/lake/laketest"
	"handoff/internal/segment"
)

// avroWriter produces a generator's events registry-framed as a
// Confluent producer writes them (eventgen.AvroEvent): v1
// (eventgen.AvroSchema, id1) or v2 (eventgen.AvroSchemaV2, id2).
type avroWriter struct {
	gen      *eventgen.Generator
	cl       *kgo.Client
	id1, id2 int
}

func (e *env) avroWriter(seed uint64, id1, id2 int) *avroWriter {
	e.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.brokers...), kgo.DefaultProduceTopic(e.name), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	require.NoError(e.t, err)
	e.t.Cleanup(cl.Close)
	return &avroWriter{gen: eventgen.New(e.name, seed), cl: cl, id1: id1, id2: id2}
}

func (w *avroWriter) event(i int64, v2 bool) ([]byte, error) {
	if v2 {
		return w.gen.AvroEventV2(i, w.id2)
	}
	return w.gen.AvroEvent(i, w.id1)
}

// produce sends events from..to-1, 50 at a time, one batch every pause.
func (w *avroWriter) produce(ctx context.Context, from, to int64, v2 bool, pause time.Duration) error {
	for i := from; i < to; {
		var recs []*kgo.Record
		for ; i < to && len(recs) < 50; i++ {
			b, err := w.event(i, v2)
			if err != nil {
				return fmt.Errorf("event %d: %w", i, err)
			}
			recs = append(recs, &kgo.Record{Value: b})
		}
		if err := w.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return err
		}
		time.Sleep(pause)
	}
	return nil
}

// TestAvroEvolutionAcrossSIGKILL: writers move from v1 to v2 of an Avro
// schema (a field added with a default) while sequences are handed off
// every 2 s and the only worker is SIGKILLed after the first v2 records
// were produced: every event is published exactly once, and the new
// column, discovered, is null in the rows of v1 and set in those of v2,
// in the segments and in the Iceberg table.
func TestAvroEvolutionAcrossSIGKILL(t *testing.T) {
	t.Parallel()
	kills := pick(1, 3)
	e := newEnv(t, envOptions{partitions: 3})
	reg := srfake.New()
	t.Cleanup(reg.Close)
	subject := e.name + "-value"
	id1, _, err := reg.RegisterSchema(subject, sr.Schema{Schema: eventgen.AvroSchema})
	require.NoError(t, err)
	id2, _, err := reg.RegisterSchema(subject, sr.Schema{Schema: eventgen.AvroSchemaV2})
	require.NoError(t, err)

	spec := e.spec(2)
	spec.DataSchema.DimensionsSpec = domain.DimensionsSpec{} // discovery: lang becomes a column
	spec.DataSchema.MetricsSpec = []domain.MetricSpec{{Type: domain.MetricLongSum, Name: "delta_sum", FieldName: "delta"}}
	spec.IOConfig.InputFormat = domain.InputFormat{Type: domain.InputAvroStream, RecordFormats: domain.RecordFormats{
		AvroBytesDecoder: &domain.BytesDecoder{Type: domain.DecoderSchemaRegistry, URL: reg.URL()},
	}}
	spec.ApplyDefaults()
	require.NoError(t, spec.Validate())
	w := e.avroWriter(340, id1, id2)
	r := newRand(t)

	const n = 3000 // of each version
	require.NoError(t, w.produce(context.Background(), 0, n, false, 0))
	run := e.startSupervisor(spec)
	wk := e.startWorker("v1", true)
	e.waitPublished(spec, 0, 2*time.Minute) // a handoff of v1 records
	// v2 records come over about 6 s; the worker is killed once it has
	// read some (v2's schema fetched, its records staged, not published),
	// then again at random moments in the long form.
	done := make(chan error, 1)
	go func() { done <- w.produce(context.Background(), n, 2*n, true, 100*time.Millisecond) }()
	e.waitRead(spec, n+200, time.Minute)
	for i := range kills {
		time.Sleep(between(r, 0, 2*time.Second))
		e.sigkill(spec, wk)
		wk = e.startWorker(fmt.Sprint("v2-", i), true)
	}
	require.NoError(t, <-done)
	e.waitCaughtUp(spec, 3*time.Minute)
	e.stopAndWait(spec, run, 2*time.Minute)
	require.GreaterOrEqual(t, e.report.faultCount(), kills)
	e.verify(spec, w.gen.RunID, 2*n)
	e.requireLangByVersion(spec, w.gen.RunID, n)
}

// waitRead waits until the groups together have read n records.
func (e *env) waitRead(spec domain.Spec, n int64, timeout time.Duration) {
	e.t.Helper()
	var pos domain.Offsets
	require.Eventually(e.t, func() bool {
		var err error
		pos, err = e.positions(spec)
		return err == nil && pos.Sum() >= n
	}, timeout, 50*time.Millisecond, "the groups did not read %d records: at %v", n, pos)
}

// requireLangByVersion checks the lang column of every published row,
// in the segments and in the table: null for events before firstV2 (v1),
// "fr" from it on (v2).
func (e *env) requireLangByVersion(spec domain.Spec, runID string, firstV2 int) {
	e.t.Helper()
	want := func(id string) any {
		i, err := strconv.Atoi(strings.TrimPrefix(id, runID+"-"))
		require.NoError(e.t, err, id)
		if i < firstV2 {
			return nil
		}
		return "fr"
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	segs, err := e.store.Segments(ctx, spec.DataSchema.DataSource)
	require.NoError(e.t, err)
	var v1, v2 int
	for _, seg := range segs {
		u, err := url.Parse(seg.URI)
		require.NoError(e.t, err)
		schema, rows, err := segment.ReadFile(u.Path)
		require.NoError(e.t, err)
		col := func(name string) int {
			return slices.IndexFunc(schema.Dims, func(c domain.Column) bool { return c.Name == name })
		}
		idc, langc := col("id"), col("lang")
		for _, row := range rows {
			id := row.Dim(idc).S
			var got any
			if langc >= 0 && !row.Dim(langc).Null {
				got = row.Dim(langc).S
			}
			require.Equal(e.t, want(id), got, "lang of %s in segment %s", id, seg.ID)
			if got == nil {
				v1++
			} else {
				v2++
			}
		}
	}
	require.Equal(e.t, firstV2, v1, "rows of v1 in the segments")
	rows, err := laketest.ReadRows(ctx, e.pool, lake.Config{}, spec.DataSchema.DataSource)
	require.NoError(e.t, err)
	for _, row := range rows {
		if w := want(row["id"].(string)); w == nil {
			require.Nil(e.t, row["lang"], "lang of %s in the table", row["id"])
		} else {
			require.Equal(e.t, w, row["lang"], "lang of %s in the table", row["id"])
		}
	}
	e.t.Logf("lang null in %d rows (v1), \"fr\" in %d (v2) of the segments; %d table rows checked", v1, v2, len(rows))
}
