package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"

	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/workflows"
)

// handoffResult is the checkpoint-to-commit latency under a live producer.
type handoffResult struct {
	// IcebergTable: each publish also committed to the datasource's table.
	IcebergTable  bool    `json:"icebergTable"`
	Checkpoints   int     `json:"checkpoints"`
	Samples       int     `json:"samples"` // one per group per checkpoint
	Rate          float64 `json:"eventsPerSecond"`
	P50Millis     float64 `json:"p50Millis"`
	P95Millis     float64 `json:"p95Millis"`
	MaxMillis     float64 `json:"maxMillis"`
	Produced      int64   `json:"produced"`
	RowsPublished int64   `json:"rowsPublished"`
}

const liveTopic = "bench-live"

// tableWord says whether publishes go to the Iceberg table.
func tableWord(on bool) string {
	if on {
		return "Iceberg table on"
	}
	return "Iceberg table off"
}

// runHandoff produces at a steady rate into a topic of its own, lets a
// supervisor (rollup off, no automatic handoff, the Iceberg table on or
// off) catch up, then sends checkpoints one after another and times each
// group's sequence from the checkpoint's sending to its commit in
// Postgres, polled every 10 ms.
func runHandoff(ctx context.Context, s *stack, o options, tc client.Client, table bool) (handoffResult, error) {
	res := handoffResult{IcebergTable: table, Checkpoints: o.checkpoints, Rate: o.liveRate}
	spec := liveSpec(o.taskCount, table)
	if err := s.createTopic(ctx, spec.IOConfig.Topic, o.partitions); err != nil {
		return res, err
	}
	phase := "handoff"
	if !table {
		phase = "handoff-no-table"
	}
	pool, w, done, err := startPhase(ctx, s, o, phase, "")
	if err != nil {
		return res, err
	}
	defer done()

	pctx, stopProducing := context.WithCancel(ctx)
	defer stopProducing()
	gen := eventgen.New("bench", 1)
	produced := make(chan error, 1)
	go func() {
		n, err := gen.Produce(pctx, s.brokers, spec.IOConfig.Topic, o.liveRate, 0, false)
		res.Produced = n
		produced <- err
	}()

	if _, err := tc.ExecuteWorkflow(ctx, startOptions(spec), workflows.SupervisorWorkflowName, workflows.SupervisorInput{Spec: spec}); err != nil {
		return res, fmt.Errorf("start supervisor: %w", err)
	}
	if err := waitReading(ctx, tc, spec); err != nil {
		return res, err
	}
	samples, err := timeCheckpoints(ctx, tc, pool, spec.ID, o.checkpoints, w)
	if err != nil {
		return res, err
	}
	stopProducing()
	if err := <-produced; err != nil {
		return res, fmt.Errorf("live producer: %w", err)
	}
	if err := stopSupervisor(ctx, tc, spec.ID); err != nil {
		return res, err
	}
	// Every offset up to the committed ones is published exactly once:
	// rollup is off, so one row per event.
	committed, err := committedOffsets(ctx, pool, spec)
	if err != nil {
		return res, err
	}
	if err := pool.QueryRow(ctx, `SELECT coalesce(sum(rows), 0) FROM segments WHERE datasource = $1 AND used`,
		spec.DataSchema.DataSource).Scan(&res.RowsPublished); err != nil {
		return res, err
	}
	if res.RowsPublished != committed.Sum() {
		return res, fmt.Errorf("handoff phase: offsets cover %d events, %d rows published: exactly-once broken", committed.Sum(), res.RowsPublished)
	}
	res.setSamples(samples)
	return res, nil
}

// timeCheckpoints sends n checkpoints one after another and times each
// group's sequence from the checkpoint's sending to its commit in
// Postgres, polled every 10 ms.
func timeCheckpoints(ctx context.Context, tc client.Client, pool *pgxpool.Pool, id string, n int, w *workerProc) ([]time.Duration, error) {
	var samples []time.Duration
	for i := range n {
		sent := time.Now()
		cp, err := checkpoint(ctx, tc, id)
		if err != nil {
			return nil, err
		}
		for _, g := range cp.Groups {
			if g.Outcome != workflows.CheckpointRecorded {
				return nil, fmt.Errorf("checkpoint %d: group %d answered %q", i+1, g.Group, g.Outcome)
			}
		}
		for _, g := range cp.Groups {
			at, err := waitSequence(ctx, pool, id, g.Group, g.SequenceID, w)
			if err != nil {
				return nil, err
			}
			samples = append(samples, at.Sub(sent))
		}
		time.Sleep(time.Duration(300+(i*137)%400) * time.Millisecond) // not in step with the chunk period
	}
	return samples, nil
}

// setSamples sets the sample count and percentiles.
func (h *handoffResult) setSamples(samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	samples = slices.Sorted(slices.Values(samples))
	h.Samples = len(samples)
	h.P50Millis = millis(percentile(samples, 0.50))
	h.P95Millis = millis(percentile(samples, 0.95))
	h.MaxMillis = millis(samples[len(samples)-1])
}

// liveSpec is the handoff phase's spec: bench-handoff, or
// bench-handoff-no-table with ioConfig.icebergTable false, each on a topic
// of its own.
func liveSpec(taskCount int, table bool) domain.Spec {
	rollup := false
	id, topic := "bench-handoff", liveTopic
	if !table {
		id, topic = "bench-handoff-no-table", liveTopic+"-no-table"
	}
	spec := domain.Spec{
		ID: id,
		DataSchema: domain.DataSchema{
			DataSource:    "bench_handoff",
			TimestampSpec: domain.TimestampSpec{Column: "ts", Format: "iso"},
			DimensionsSpec: domain.DimensionsSpec{Dimensions: []domain.DimensionSpec{
				{Name: "id"}, {Name: "page"}, {Name: "user"}, {Name: "country"}, {Name: "action"},
			}},
			MetricsSpec:     []domain.MetricSpec{{Type: "longSum", Name: "delta", FieldName: "delta"}},
			GranularitySpec: domain.GranularitySpec{SegmentGranularity: domain.GranularityHour, Rollup: &rollup},
		},
		IOConfig: domain.IOConfig{Topic: topic, TaskCount: taskCount, UseEarliestOffset: true, Period: domain.Duration(5 * time.Second)},
	}
	if !table {
		spec.IOConfig.IcebergTable = &table
	}
	spec.ApplyDefaults()
	return spec
}

// waitReading waits until every group runs and the first events were
// read, by the supervisor's account or the groups' own (a supervisor of
// the long-running design hears of positions only when its watch returns).
func waitReading(ctx context.Context, tc client.Client, spec domain.Spec) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		st, err := supervisorStatus(ctx, tc, spec.ID)
		if err == nil && len(st.Groups) == spec.IOConfig.TaskCount && (st.Current.Sum() > 0 || groupsRead(ctx, tc, spec) > 0) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return errors.New("handoff phase: the groups did not start reading within 2 minutes")
}

// waitSequence polls until the sequence is committed and returns when it
// was seen.
func waitSequence(ctx context.Context, pool *pgxpool.Pool, supervisor string, group, seq int, w *workerProc) (time.Time, error) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var one int
		err := pool.QueryRow(ctx, `SELECT 1 FROM published_sequences WHERE supervisor_id = $1 AND task_group = $2 AND sequence_id = $3`,
			supervisor, group, seq).Scan(&one)
		if err == nil {
			return time.Now(), nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return time.Time{}, err
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-w.done:
			return time.Time{}, fmt.Errorf("worker exited: %v; see %s", w.err, w.logPath)
		case <-time.After(10 * time.Millisecond):
		}
	}
	return time.Time{}, fmt.Errorf("group %d sequence %d not committed within a minute of its checkpoint", group, seq)
}

func percentile(sorted []time.Duration, q float64) time.Duration {
	i := int(float64(len(sorted)-1) * q)
	return sorted[i]
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
