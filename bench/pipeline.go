package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"handoff/e2e/harness"
	"handoff/internal/domain"
	"handoff/internal/segment"
	"handoff/workflows"
)

// variantResult is one pipeline run over the backlog.
type variantResult struct {
	Name string `json:"name"`
	// Run counts the variant's runs (-repeat), from 1.
	Run int `json:"run"`
	// IcebergTable: each publish also committed to the datasource's table.
	IcebergTable    bool    `json:"icebergTable"`
	Seconds         float64 `json:"seconds"`
	EventsPerSecond float64 `json:"eventsPerSecond"`
	CeilingRatio    float64 `json:"ceilingRatio"`
	// PeerRatio is EventsPerSecond over the DuckDB peer's rate for the
	// same variant (0: no peer).
	PeerRatio float64 `json:"peerRatio,omitempty"`
	// Breakdown is the worker\'s CPU per event by stage, from its profile
	// (which covers its whole life: start-up, the drain, the stop).
	Breakdown        []stageCost `json:"breakdown,omitempty"`
	CPUSecondsPerM   float64     `json:"workerCpuSecondsPerMillionEvents"`
	PeakRSSMiB       float64     `json:"peakWorkerRssMiB"`
	HistoryEvents    int64       `json:"historyEvents"`
	WorkflowRuns     int         `json:"workflowRuns"`
	HistoryPerM      float64     `json:"historyEventsPerMillionEvents"`
	Rows             int64       `json:"rows"`
	Segments         int         `json:"segments"`
	MeanSegmentBytes int64       `json:"meanSegmentBytes"`
	Sequences        int         `json:"sequences"`
}

// backlogSpec is the supervisor spec of a variant: the backlog's five
// dimensions and two metrics (plus the row count), hourly segments; the
// Iceberg table stays at its default (on) unless noTable.
func backlogSpec(name, topic string, taskCount int, rollup, noTable bool) domain.Spec {
	dims := []domain.DimensionSpec{{Name: "page"}, {Name: "browser"}, {Name: "country"}, {Name: "device"}, {Name: "action"}}
	spec := domain.Spec{
		ID: name,
		DataSchema: domain.DataSchema{
			DataSource:     name,
			TimestampSpec:  domain.TimestampSpec{Column: "ts", Format: "iso"},
			DimensionsSpec: domain.DimensionsSpec{Dimensions: dims},
			MetricsSpec: []domain.MetricSpec{
				{Type: "count", Name: "events"},
				{Type: "longSum", Name: "delta", FieldName: "delta"},
				{Type: "longSum", Name: "bytes", FieldName: "bytes"},
			},
			GranularitySpec: domain.GranularitySpec{
				SegmentGranularity: domain.GranularityHour, Rollup: &rollup,
			},
		},
		IOConfig:     domain.IOConfig{Topic: topic, TaskCount: taskCount, UseEarliestOffset: true, Period: domain.Duration(5 * time.Second)},
		TuningConfig: domain.TuningConfig{MaxRowsPerSegment: 1_000_000},
	}
	if rollup {
		spec.DataSchema.GranularitySpec.QueryGranularity = domain.GranularityMinute
	}
	if noTable {
		off := false
		spec.IOConfig.IcebergTable = &off
	}
	spec.ApplyDefaults()
	return spec
}

// runVariant drains the backlog with a fresh worker and database and
// measures it. The backlog's last sequences are closed by a checkpoint
// once the groups have read to the ends, as an operator (or
// intermediateHandoffPeriod) would.
func runVariant(ctx context.Context, s *stack, o options, tc client.Client, v variant, run int, topic string, ends domain.Offsets, ceilingRate float64) (variantResult, error) {
	res := variantResult{Name: v.name, Run: run, IcebergTable: v.table}
	// Each run has its own supervisor, datasource and database.
	name := v.name
	if run > 1 {
		name = fmt.Sprintf("%s-%d", v.name, run)
	}
	// The worker always writes a CPU profile (the breakdown reads it);
	// -cpuprofile keeps it where it says.
	profile := filepath.Join(s.dir, name+".pprof")
	if o.cpuProfile != "" {
		profile, _ = filepath.Abs(o.cpuProfile + "-" + name + ".pprof")
	}
	pool, w, done, err := startPhase(ctx, s, o, name, profile)
	if err != nil {
		return res, err
	}
	stopped := false
	defer func() {
		if !stopped {
			done()
		}
	}()

	spec := backlogSpec(name, topic, o.taskCount, v.rollup, !v.table)
	if v.input != nil {
		spec.IOConfig.InputFormat = *v.input
		spec.ApplyDefaults()
	}
	if err := spec.Validate(); err != nil {
		return res, fmt.Errorf("spec: %w", err)
	}
	cpu0, err := cpuSeconds(w.pid())
	if err != nil {
		return res, err
	}
	start := time.Now()
	if _, err := tc.ExecuteWorkflow(ctx, startOptions(spec), workflows.SupervisorWorkflowName, workflows.SupervisorInput{Spec: spec}); err != nil {
		return res, fmt.Errorf("start supervisor: %w", err)
	}
	if err := waitCommitted(ctx, tc, pool, spec, ends, w); err != nil {
		return res, err
	}
	elapsed := time.Since(start)
	cpu1, err := cpuSeconds(w.pid())
	if err != nil {
		return res, err
	}
	rss, err := peakRSS(w.pid())
	if err != nil {
		return res, err
	}
	logf("%s: all offsets committed after %v", name, elapsed.Round(time.Millisecond))

	if err := stopSupervisor(ctx, tc, spec.ID); err != nil {
		return res, err
	}
	total := float64(o.events) // the transactional backlog's ends count its markers and aborted events too
	res.Seconds = elapsed.Seconds()
	res.EventsPerSecond = total / elapsed.Seconds()
	res.CeilingRatio = res.EventsPerSecond / ceilingRate
	res.CPUSecondsPerM = (cpu1 - cpu0) / total * 1e6
	res.PeakRSSMiB = float64(rss) / (1 << 20)
	if res.HistoryEvents, res.WorkflowRuns, err = countHistory(ctx, tc, spec.ID); err != nil {
		return res, err
	}
	res.HistoryPerM = float64(res.HistoryEvents) / total * 1e6
	if err := describeSegments(ctx, pool, spec, &res); err != nil {
		return res, err
	}
	if err := verifyEvents(ctx, pool, spec, "events", o.events); err != nil {
		return res, err
	}
	stopped = true
	done() // the worker writes its profile as it stops
	if res.Breakdown, err = breakdown(profile, o.events); err != nil {
		return res, fmt.Errorf("cost breakdown: %w", err)
	}
	return res, nil
}

// waitCommitted polls Postgres until every partition's committed offset
// is its end, and checkpoints the supervisor once the groups have read
// everything.
func waitCommitted(ctx context.Context, tc client.Client, pool *pgxpool.Pool, spec domain.Spec, ends domain.Offsets, w *workerProc) error {
	deadline := time.Now().Add(15 * time.Minute)
	checkpointed := false
	var lastCheck time.Time
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.done:
			return fmt.Errorf("worker exited during the run: %v; see %s", w.err, w.logPath)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("backlog not committed within 15 minutes")
		}
		committed, err := committedOffsets(ctx, pool, spec)
		if err != nil {
			return err
		}
		if reached(committed, ends) {
			return nil
		}
		if checkpointed || time.Since(lastCheck) < 250*time.Millisecond {
			continue
		}
		lastCheck = time.Now()
		// The groups' own positions: the supervisor hears them only once a
		// period.
		pos, err := harness.GroupPositions(ctx, tc, spec)
		if err != nil {
			continue // not started yet
		}
		if reached(pos, ends) {
			if _, err := checkpoint(ctx, tc, spec.ID); err != nil {
				return err
			}
			checkpointed = true
		}
	}
}

func reached(at, ends domain.Offsets) bool {
	for p, e := range ends {
		if at[p] < e {
			return false
		}
	}
	return true
}

func committedOffsets(ctx context.Context, pool *pgxpool.Pool, spec domain.Spec) (domain.Offsets, error) {
	rows, err := pool.Query(ctx, `SELECT partition, next_offset FROM datasource_offsets WHERE datasource = $1 AND topic = $2`,
		spec.DataSchema.DataSource, spec.IOConfig.Topic)
	if err != nil {
		return nil, fmt.Errorf("read committed offsets: %w", err)
	}
	defer rows.Close()
	out := domain.Offsets{}
	for rows.Next() {
		var p int32
		var o int64
		if err := rows.Scan(&p, &o); err != nil {
			return nil, err
		}
		out[domain.P(p)] = o
	}
	return out, rows.Err()
}

func describeSegments(ctx context.Context, pool *pgxpool.Pool, spec domain.Spec, res *variantResult) error {
	var n int
	var rows, bytes int64
	err := pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(rows), 0), coalesce(sum(bytes), 0) FROM segments WHERE datasource = $1 AND used`,
		spec.DataSchema.DataSource).Scan(&n, &rows, &bytes)
	if err != nil {
		return fmt.Errorf("read segments: %w", err)
	}
	res.Segments, res.Rows = n, rows
	if n > 0 {
		res.MeanSegmentBytes = bytes / int64(n)
	}
	return pool.QueryRow(ctx, `SELECT count(*) FROM published_sequences WHERE supervisor_id = $1`, spec.ID).Scan(&res.Sequences)
}

// verifyEvents reads every segment back and checks that the count metric
// sums to the events produced: one lost or duplicated event fails the run.
func verifyEvents(ctx context.Context, pool *pgxpool.Pool, spec domain.Spec, metric string, want int64) error {
	got, err := sumMetric(ctx, pool, spec, metric)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("%s: segments hold %d events, %d were produced: exactly-once broken", spec.ID, got, want)
	}
	return nil
}

// sumMetric reads every used segment back and sums a long metric.
func sumMetric(ctx context.Context, pool *pgxpool.Pool, spec domain.Spec, metric string) (int64, error) {
	rows, err := pool.Query(ctx, `SELECT uri FROM segments WHERE datasource = $1 AND used`, spec.DataSchema.DataSource)
	if err != nil {
		return 0, fmt.Errorf("list segments: %w", err)
	}
	var uris []string
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return 0, err
		}
		uris = append(uris, u)
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	var got int64
	for _, u := range uris {
		n, err := countEvents(u, metric)
		if err != nil {
			return 0, err
		}
		got += n
	}
	return got, nil
}

// countEvents sums a long metric (the count, by default) of one segment
// file.
func countEvents(uri, metric string) (int64, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return 0, fmt.Errorf("segment %s: bench reads file:// segments only", uri)
	}
	r, err := segment.Open(u.Path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	idx := -1
	for i, m := range r.Schema().Metrics {
		if m.Name == metric {
			idx = i
		}
	}
	if idx < 0 {
		return 0, fmt.Errorf("segment %s: no %s metric", uri, metric)
	}
	var n int64
	for {
		row, ok, err := r.Next()
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("segment %s: %w", uri, err)
		}
		if !ok {
			return n, nil
		}
		n += row.Metrics[idx].Long()
	}
}

func startOptions(spec domain.Spec) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                                       workflows.SupervisorWorkflowID(spec.ID),
		TaskQueue:                                workflows.TaskQueue,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			temporal.NewSearchAttributeKeyKeyword(domain.SearchAttributeSupervisor).ValueSet(spec.ID),
			temporal.NewSearchAttributeKeyKeyword(domain.SearchAttributeDataSource).ValueSet(spec.DataSchema.DataSource),
			temporal.NewSearchAttributeKeyKeyword(domain.SearchAttributeTopic).ValueSet(spec.IOConfig.Topic),
			temporal.NewSearchAttributeKeyKeyword(domain.SearchAttributeState).ValueSet(workflows.StatePending),
		),
	}
}
