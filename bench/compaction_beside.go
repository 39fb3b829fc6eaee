package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/client"

	"handoff/e2e/harness"
	"handoff/internal/domain"
	"handoff/internal/pgstore"
	"handoff/workflows"
)

// besideCompactions is how many datasources runBeside compacts while it
// drains the backlog.
const besideCompactions = 2

// runBeside drains the backlog on one worker into datasources of one
// database: alone, then while the same worker compacts datasources that
// hold the backlog in small segments, then alone again (the alone rate is
// the mean of the two, so that neither side always runs first).
func runBeside(ctx context.Context, s *stack, o options, tc client.Client, ends domain.Offsets) (besideRun, error) {
	var res besideRun
	const name = "compact-beside"
	pool, w, done, err := startPhase(ctx, s, o, name, "")
	if err != nil {
		return res, err
	}
	defer done()
	// Compaction is faster than ingestion: two datasources' worth keeps
	// the worker's compaction slot busy for most of the drain.
	var smalls []domain.Spec
	var befores []map[string]int64
	for i := range besideCompactions {
		small := compactionSpec(fmt.Sprintf("%s-small-%d", name, i), o, false)
		logf("%s: ingesting the backlog in sequences of %d rows, to compact", small.ID, compactionSegmentRows)
		if _, err := ingest(ctx, tc, pool, small, ends, w); err != nil {
			return res, err
		}
		before, err := metricSums(ctx, pool, small)
		if err != nil {
			return res, err
		}
		smalls, befores = append(smalls, small), append(befores, before)
	}
	drain := func(suffix string) (float64, time.Time, time.Time, error) {
		spec := backlogSpec(name+"-"+suffix, backlogTopic, o.taskCount, false, false)
		start := time.Now()
		d, err := ingest(ctx, tc, pool, spec, ends, w)
		if err != nil {
			return 0, start, start, err
		}
		if err := verifyEvents(ctx, pool, spec, "events", ends.Sum()); err != nil {
			return 0, start, start, err
		}
		rate := float64(ends.Sum()) / d.Seconds()
		logf("%s: %.0f events/s", spec.ID, rate)
		return rate, start, start.Add(d), nil
	}
	alone1, _, _, err := drain("alone")
	if err != nil {
		return res, err
	}
	for _, small := range smalls {
		cfg := domain.CompactionConfig{DataSource: small.DataSchema.DataSource, SkipOffsetFromLatest: domain.Duration(time.Millisecond),
			Period: domain.Duration(time.Second)}.WithDefaults()
		if err := harness.StartCompaction(ctx, pgstore.New(pool), tc, workflows.TaskQueue, cfg); err != nil {
			return res, err
		}
	}
	beside, start, end, err := drain("beside")
	if err != nil {
		return res, err
	}
	var outcomes []workflows.CompactionOutcome
	compactions := 0
	for i, small := range smalls {
		ds := small.DataSchema.DataSource
		st, err := waitCompactionSettled(ctx, tc, ds, w)
		if err != nil {
			return res, err
		}
		if err := stopCompaction(ctx, tc, ds); err != nil {
			return res, err
		}
		after, err := metricSums(ctx, pool, small)
		if err != nil {
			return res, err
		}
		if !equalSums(befores[i], after) {
			return res, fmt.Errorf("%s: metric sums %v after compaction, %v before: exactly-once broken", small.ID, after, befores[i])
		}
		if st.Done > len(st.Recent) {
			return res, fmt.Errorf("%s: %d compactions, more than the status keeps: the overlap would be wrong", ds, st.Done)
		}
		outcomes, compactions = append(outcomes, st.Recent...), compactions+st.Done
	}
	alone2, _, _, err := drain("alone-again")
	if err != nil {
		return res, err
	}
	res.AloneRate = (alone1 + alone2) / 2
	res.BesideRate = beside
	res.Ratio = beside / res.AloneRate
	res.Overlap = overlap(outcomes, start, end)
	logf("%s: %d compactions; beside %.0f events/s against %.0f alone (%.2f), compaction ran %.0f%% of the drain",
		name, compactions, beside, res.AloneRate, res.Ratio, 100*res.Overlap)
	return res, nil
}

func equalSums(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// overlap is the share of [start, end) during which one of the
// compactions ran.
func overlap(runs []workflows.CompactionOutcome, start, end time.Time) float64 {
	if !end.After(start) {
		return 0
	}
	type span struct{ a, b time.Time }
	var spans []span
	for _, r := range runs {
		a, b := maxTime(r.StartedAt, start), minTime(r.EndedAt, end)
		if b.After(a) {
			spans = append(spans, span{a, b})
		}
	}
	slices.SortFunc(spans, func(x, y span) int { return x.a.Compare(y.a) })
	var busy time.Duration
	var cur span
	for i, sp := range spans {
		switch {
		case i == 0:
			cur = sp
		case !sp.a.After(cur.b):
			cur.b = maxTime(cur.b, sp.b)
		default:
			busy += cur.b.Sub(cur.a)
			cur = sp
		}
	}
	if len(spans) > 0 {
		busy += cur.b.Sub(cur.a)
	}
	return busy.Seconds() / end.Sub(start).Seconds()
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
