package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"

	"handoff/e2e/harness"
	"handoff/internal/domain"
	"handoff/internal/pgstore"
	"handoff/workflows"
)

// compactionSegmentRows is maxRowsPerSegment of the datasources the
// compaction phase compacts: small sequences, so each hourly interval of
// the backlog holds dozens of small segments, as a streaming datasource's
// do.
const compactionSegmentRows = 20_000

// compactionRun is one compaction of the backlog's segments.
type compactionRun struct {
	Name string `json:"name"`
	// QueryGranularity is the config's re-rollup granularity ("" for none).
	QueryGranularity string  `json:"queryGranularity,omitempty"`
	Seconds          float64 `json:"seconds"`
	RowsIn           int64   `json:"rowsIn"`
	RowsOut          int64   `json:"rowsOut"`
	RowsPerSecond    float64 `json:"rowsPerSecond"`
	SegmentsIn       int64   `json:"segmentsIn"`
	SegmentsOut      int64   `json:"segmentsOut"`
	BytesIn          int64   `json:"bytesIn"`
	BytesOut         int64   `json:"bytesOut"`
	Compactions      int     `json:"compactions"`
	CPUSecondsPerM   float64 `json:"workerCpuSecondsPerMillionRows"`
	PeakRSSMiB       float64 `json:"peakWorkerRssMiB"`
	MemLimit         string  `json:"gomemlimit"`
}

// besideRun is ingestion with a compaction running on the same worker.
type besideRun struct {
	// Alone and Beside are the backlog's drain rates, events/s.
	AloneRate  float64 `json:"aloneEventsPerSecond"`
	BesideRate float64 `json:"besideEventsPerSecond"`
	Ratio      float64 `json:"ratio"`
	// Overlap is the share of the beside drain during which the
	// compaction ran.
	Overlap float64 `json:"overlap"`
}

// compactionIdle is what the compaction workflow costs in history when it
// finds nothing to do.
type compactionIdle struct {
	Period         string  `json:"period"`
	Rounds         int     `json:"rounds"`
	HistoryEvents  int64   `json:"historyEvents"`
	EventsPerRound float64 `json:"historyEventsPerRound"`
	// PerDayDefault is EventsPerRound × the rounds a day holds at the
	// default period.
	PerDayDefault float64 `json:"historyEventsPerDayAtDefaultPeriod"`
}

type compactionResult struct {
	Runs   []compactionRun `json:"runs"`
	Beside *besideRun      `json:"beside,omitempty"`
	Idle   *compactionIdle `json:"idle,omitempty"`
}

// runCompaction measures compaction on the backlog: with rollup off, and
// a re-rollup of minute rows to hours; then the backlog drained alone and
// beside a compaction; then the idle workflow's history.
func runCompaction(ctx context.Context, s *stack, o options, tc client.Client, ends domain.Offsets) (compactionResult, error) {
	var res compactionResult
	for _, c := range []struct {
		name   string
		rollup bool
		grain  domain.Granularity
	}{{"compact-rollup-off", false, ""}, {"compact-rerollup-hour", true, domain.GranularityHour}} {
		logf("%s: ingesting the backlog in sequences of %d rows", c.name, compactionSegmentRows)
		r, idle, err := compactBacklog(ctx, s, o, tc, ends, c.name, c.rollup, c.grain, res.Idle == nil)
		if err != nil {
			return res, fmt.Errorf("%s: %w", c.name, err)
		}
		res.Runs = append(res.Runs, r)
		if idle != nil {
			res.Idle = idle
		}
	}
	b, err := runBeside(ctx, s, o, tc, ends)
	if err != nil {
		return res, fmt.Errorf("ingestion beside compaction: %w", err)
	}
	res.Beside = &b
	return res, nil
}

// compactionSpec is the backlog spec with small sequences.
func compactionSpec(name string, o options, rollup bool) domain.Spec {
	spec := backlogSpec(name, backlogTopic, o.taskCount, rollup, false)
	spec.TuningConfig.MaxRowsPerSegment = compactionSegmentRows
	return spec
}

// ingest drains the backlog into spec's datasource and stops the
// supervisor.
func ingest(ctx context.Context, tc client.Client, pool *pgxpool.Pool, spec domain.Spec, ends domain.Offsets, w *workerProc) (time.Duration, error) {
	if err := spec.Validate(); err != nil {
		return 0, fmt.Errorf("spec: %w", err)
	}
	start := time.Now()
	if _, err := tc.ExecuteWorkflow(ctx, startOptions(spec), workflows.SupervisorWorkflowName, workflows.SupervisorInput{Spec: spec}); err != nil {
		return 0, fmt.Errorf("start supervisor: %w", err)
	}
	if err := waitCommitted(ctx, tc, pool, spec, ends, w); err != nil {
		return 0, err
	}
	d := time.Since(start)
	return d, stopSupervisor(ctx, tc, spec.ID)
}

// compactBacklog ingests the backlog into small segments with one worker,
// then compacts them with a fresh worker under -compaction-memlimit, so
// that its peak RSS is the compaction's; with idle it then measures the
// workflow at rest.
func compactBacklog(ctx context.Context, s *stack, o options, tc client.Client, ends domain.Offsets, name string, rollup bool, grain domain.Granularity, idle bool) (compactionRun, *compactionIdle, error) {
	res := compactionRun{Name: name, QueryGranularity: string(grain), MemLimit: o.compactMemLimit}
	pool, w, done, err := startPhase(ctx, s, o, name, "")
	if err != nil {
		return res, nil, err
	}
	spec := compactionSpec(name, o, rollup)
	_, err = ingest(ctx, tc, pool, spec, ends, w)
	done()
	if err != nil {
		return res, nil, err
	}
	// The compacting worker is a process of its own on the same database
	// and directories.
	dbURL, err := withDatabase(s.pgServer, "bench_"+name)
	if err != nil {
		return res, nil, err
	}
	if pool, err = pgxpool.New(ctx, dbURL); err != nil {
		return res, nil, err
	}
	defer pool.Close()
	before, err := metricSums(ctx, pool, spec)
	if err != nil {
		return res, nil, err
	}

	co := o
	co.memLimit = o.compactMemLimit
	cw, err := startWorker(ctx, s, co, dbURL, filepath.Join(s.dir, name), "")
	if err != nil {
		return res, nil, err
	}
	defer func() { _ = cw.stop() }()
	cpu0, err := cpuSeconds(cw.pid())
	if err != nil {
		return res, nil, err
	}
	cfg := domain.CompactionConfig{DataSource: spec.DataSchema.DataSource, SkipOffsetFromLatest: domain.Duration(time.Millisecond),
		Period: domain.Duration(o.compactIdlePeriod), QueryGranularity: grain}.WithDefaults()
	logf("%s: compacting (GOMEMLIMIT=%s)", name, o.compactMemLimit)
	start := time.Now()
	st, err := compactUntilSettled(ctx, tc, pool, cfg, cw)
	if err != nil {
		return res, nil, err
	}
	res.Seconds = time.Since(start).Seconds()
	cpu1, err := cpuSeconds(cw.pid())
	if err != nil {
		return res, nil, err
	}
	rss, err := peakRSS(cw.pid())
	if err != nil {
		return res, nil, err
	}
	res.RowsIn, res.RowsOut, res.SegmentsIn, res.SegmentsOut = st.RowsIn, st.RowsOut, st.SegmentsIn, st.SegmentsOut
	res.BytesIn, res.BytesOut, res.Compactions = st.BytesIn, st.BytesOut, st.Done
	res.RowsPerSecond = float64(st.RowsIn) / res.Seconds
	res.CPUSecondsPerM = (cpu1 - cpu0) / float64(max(st.RowsIn, 1)) * 1e6
	res.PeakRSSMiB = float64(rss) / (1 << 20)
	logf("%s: %d compactions, %d segments → %d, rows %d → %d in %.1f s", name, st.Done, st.SegmentsIn, st.SegmentsOut, st.RowsIn, st.RowsOut, res.Seconds)

	after, err := metricSums(ctx, pool, spec)
	if err != nil {
		return res, nil, err
	}
	if !equalSums(before, after) {
		return res, nil, fmt.Errorf("metric sums %v after compaction, %v before: exactly-once broken", after, before)
	}
	if before["events"] != ends.Sum() {
		return res, nil, fmt.Errorf("the segments count %d events, %d were produced", before["events"], ends.Sum())
	}
	if err := checkCompacted(ctx, pool, spec, cfg); err != nil {
		return res, nil, err
	}
	var id *compactionIdle
	if idle {
		if id, err = measureCompactionIdle(ctx, tc, spec.DataSchema.DataSource, o); err != nil {
			return res, nil, err
		}
	}
	return res, id, stopCompaction(ctx, tc, spec.DataSchema.DataSource)
}

// metricSums sums each metric of the backlog spec over the used segments.
func metricSums(ctx context.Context, pool *pgxpool.Pool, spec domain.Spec) (map[string]int64, error) {
	out := map[string]int64{}
	for _, m := range spec.DataSchema.MetricsSpec {
		n, err := sumMetric(ctx, pool, spec, m.Name)
		if err != nil {
			return nil, err
		}
		out[m.Name] = n
	}
	return out, nil
}

// checkCompacted checks that each interval holds at most ⌈rows / target⌉
// used segments.
func checkCompacted(ctx context.Context, pool *pgxpool.Pool, spec domain.Spec, cfg domain.CompactionConfig) error {
	rows, err := pool.Query(ctx, `SELECT interval_start, count(*), sum(rows) FROM segments WHERE datasource = $1 AND used GROUP BY interval_start`,
		spec.DataSchema.DataSource)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var start time.Time
		var n, total int64
		if err := rows.Scan(&start, &n, &total); err != nil {
			return err
		}
		if limit := (total + cfg.TargetRowsPerSegment - 1) / cfg.TargetRowsPerSegment; n > limit {
			return fmt.Errorf("interval %s: %d segments of %d rows after compaction, want at most %d", start.Format(time.RFC3339), n, total, limit)
		}
	}
	return rows.Err()
}

// compactUntilSettled records cfg, starts the compaction workflow and
// waits until a round finds nothing left to compact.
func compactUntilSettled(ctx context.Context, tc client.Client, pool *pgxpool.Pool, cfg domain.CompactionConfig, w *workerProc) (workflows.CompactionStatus, error) {
	if err := harness.StartCompaction(ctx, pgstore.New(pool), tc, workflows.TaskQueue, cfg); err != nil {
		return workflows.CompactionStatus{}, err
	}
	return waitCompactionSettled(ctx, tc, cfg.DataSource, w)
}

// waitCompactionSettled polls the status until a compaction has been done
// and a later round found nothing pending and nothing runs.
func waitCompactionSettled(ctx context.Context, tc client.Client, ds string, w *workerProc) (workflows.CompactionStatus, error) {
	deadline := time.Now().Add(30 * time.Minute)
	var st workflows.CompactionStatus
	for time.Now().Before(deadline) {
		if err := w.alive(); err != nil {
			return st, err
		}
		var err error
		if st, err = harness.CompactionStatus(ctx, tc, ds); err == nil && st.Done > 0 && st.Pending == 0 && len(st.Running) == 0 {
			if st.Failed > 0 {
				return st, fmt.Errorf("compaction of %s: %d failed: %+v", ds, st.Failed, st.RecentErrors)
			}
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return st, fmt.Errorf("compaction of %s not done after 30 minutes: %+v", ds, st)
}

// measureCompactionIdle counts the history the settled workflow writes
// over -compaction-idle at -compaction-idle-period, per round, and scales
// it to the default period's rounds per day.
func measureCompactionIdle(ctx context.Context, tc client.Client, ds string, o options) (*compactionIdle, error) {
	if o.compactIdle <= 0 {
		return nil, nil
	}
	logf("compaction idle: counting history for %v at period %v", o.compactIdle, o.compactIdlePeriod)
	wid := workflows.CompactionWorkflowID(ds)
	length := func() (int64, string, workflows.CompactionStatus, error) {
		d, err := tc.DescribeWorkflowExecution(ctx, wid, "")
		if err != nil {
			return 0, "", workflows.CompactionStatus{}, err
		}
		st, err := harness.CompactionStatus(ctx, tc, ds)
		info := d.GetWorkflowExecutionInfo()
		return info.GetHistoryLength(), info.GetExecution().GetRunId(), st, err
	}
	n0, run0, st0, err := length()
	if err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(o.compactIdle):
	}
	n1, run1, st1, err := length()
	if err != nil {
		return nil, err
	}
	if run1 != run0 {
		return nil, fmt.Errorf("compaction idle: the workflow continued as new during the window; make -compaction-idle shorter")
	}
	if st1.Done != st0.Done {
		return nil, fmt.Errorf("compaction idle: %d compactions ran during the window: not idle", st1.Done-st0.Done)
	}
	r := &compactionIdle{Period: o.compactIdlePeriod.String(), Rounds: st1.Rounds - st0.Rounds, HistoryEvents: n1 - n0}
	if r.Rounds > 0 {
		r.EventsPerRound = float64(r.HistoryEvents) / float64(r.Rounds)
		r.PerDayDefault = r.EventsPerRound * float64(24*time.Hour/domain.DefaultCompactionPeriod)
	}
	return r, nil
}

// stopCompaction stops the datasource's compaction, waiting at most five
// minutes.
func stopCompaction(ctx context.Context, tc client.Client, ds string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	return harness.StopCompaction(ctx, tc, ds)
}
