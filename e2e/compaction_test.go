package e2e

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"

	"handoff/activities"
	"handoff/e2e/harness"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/workflows"
)

// compactionMinutes is how many past minutes the compaction test's events
// fall into: every publish appends to one of them, so compactions and
// appends meet in the same intervals.
const compactionMinutes = 3

// TestCompactionWhileIngestingIsExactlyOnce compacts a datasource's
// intervals while a producer keeps appending to those same intervals and
// checkpoints publish into them; the first attempt of the first
// compaction fails after writing its segments and before committing (a
// worker killed there). At the end the used segments and the Iceberg
// table hold every produced event exactly once, and each interval is one
// segment (its rows are under the target).
func TestCompactionWhileIngestingIsExactlyOnce(t *testing.T) {
	t.Parallel()
	var failed atomic.Int32
	s := newStack(t, 4, activities.Faults{BeforeCompactionCommit: func(string) error {
		if failed.CompareAndSwap(0, 1) {
			return errors.New("injected: worker lost before the compaction commit")
		}
		return nil
	}})
	spec := s.spec(2)
	ds := spec.DataSchema.DataSource
	gen := eventgen.New(s.name, 16)
	base := time.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute)
	var stamped atomic.Int64
	gen.Now = func() time.Time {
		i := stamped.Add(1)
		return base.Add(time.Duration(i%compactionMinutes)*time.Minute + time.Duration(i%1000)*time.Millisecond)
	}
	const wave = 1500

	s.produce(gen, wave)
	run := s.startSupervisor(spec)
	n := s.checkpointUntilPublished(spec, 0)
	s.produce(gen, wave)
	n = s.checkpointUntilPublished(spec, n)

	cfg := domain.CompactionConfig{
		DataSource: ds, TargetRowsPerSegment: 1_000_000,
		SkipOffsetFromLatest: domain.Duration(time.Millisecond), Period: domain.Duration(time.Second),
		MaxConcurrentCompactions: 2,
	}.WithDefaults()
	s.startCompaction(cfg)

	// Appends go on while compaction runs: every wave is published into
	// the intervals being compacted.
	const waves = 8
	for range waves {
		s.produce(gen, wave)
		n = s.checkpointUntilPublished(spec, n)
		time.Sleep(300 * time.Millisecond)
	}
	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)
	total := int64(2+waves) * wave

	// Compaction catches up with the last publishes: one segment per
	// interval.
	var st workflows.CompactionStatus
	require.Eventually(t, func() bool {
		st = s.compactionStatus(ds)
		segs, err := s.store.Segments(context.Background(), ds)
		require.NoError(t, err)
		per := map[time.Time]int{}
		for _, g := range segs {
			per[g.IntervalStart]++
		}
		for _, c := range per {
			if c > 1 {
				return false
			}
		}
		return len(per) == compactionMinutes && len(st.Running) == 0
	}, 2*time.Minute, 200*time.Millisecond, "intervals not compacted to one segment each")
	s.requireCompactionListed(ds, domain.CompactionStateIdle)
	s.stopCompaction(ds)
	s.recordCompactionHistories(ds)

	t.Logf("compaction: %d done, %d conflicts, %d failed; segments %d → %d, rows %d → %d",
		st.Done, st.Conflicts, st.Failed, st.SegmentsIn, st.SegmentsOut, st.RowsIn, st.RowsOut)
	require.Equal(t, int32(1), failed.Load(), "the injected failure must have happened")
	require.GreaterOrEqual(t, st.Done, 2*compactionMinutes, "each interval compacted more than once: appends kept coming")
	require.Zero(t, st.Failed, "recent: %+v", st.Recent)
	require.Equal(t, st.RowsIn, st.RowsOut, "rollup of unique ids combines nothing")
	s.requireExactlyOnce(spec, gen.RunID, total)
	s.requireNoSegmentReplacedTwice(ds)
}

// startCompaction records cfg and starts the datasource's compaction
// workflow on the stack's task queue, as starter compaction set does.
func (s *stack) startCompaction(cfg domain.CompactionConfig) {
	s.t.Helper()
	require.NoError(s.t, harness.StartCompaction(context.Background(), s.store, s.temporal, s.taskQueue, cfg))
}

func (s *stack) compactionStatus(ds string) workflows.CompactionStatus {
	s.t.Helper()
	st, err := harness.CompactionStatus(context.Background(), s.temporal, ds)
	require.NoError(s.t, err)
	return st
}

// requireCompactionListed waits until the Temporal UI's list, filtered by
// the search attributes, shows the datasource's compaction in state.
func (s *stack) requireCompactionListed(ds, state string) {
	s.t.Helper()
	query := fmt.Sprintf("%s = %q AND %s = %q AND WorkflowId = %q AND ExecutionStatus = 'Running'", domain.SearchAttributeDataSource, ds,
		domain.SearchAttributeCompactionState, state, workflows.CompactionWorkflowID(ds))
	require.Eventually(s.t, func() bool {
		res, err := s.temporal.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		require.NoError(s.t, err)
		return len(res.GetExecutions()) == 1
	}, 30*time.Second, 200*time.Millisecond, "no workflow matches %s", query)
}

// stopCompaction stops the workflow and waits for it to complete.
func (s *stack) stopCompaction(ds string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(s.t, harness.StopCompaction(ctx, s.temporal, ds))
}

// requireNoSegmentReplacedTwice: every unused segment was replaced by
// exactly one compaction, and every compaction that replaced segments left
// its new ones in the segments table.
func (s *stack) requireNoSegmentReplacedTwice(ds string) {
	s.t.Helper()
	var orphans int
	require.NoError(s.t, s.store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM segments o
		WHERE o.datasource = $1 AND NOT o.used AND (o.compacted_by IS NULL
			OR NOT EXISTS (SELECT 1 FROM segments n WHERE n.datasource = $1 AND n.sequence_name = o.compacted_by))`, ds).Scan(&orphans))
	require.Zero(s.t, orphans, "unused segments without the compaction that replaced them")
}
