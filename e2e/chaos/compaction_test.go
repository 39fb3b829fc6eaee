package chaos

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/e2e/harness"
	"handoff/internal/domain"
	"handoff/internal/lake"
	"handoff/internal/lifecycle"
	"handoff/internal/protocol"
	"handoff/internal/storage"
	"handoff/workflows"
)

// compactionTargetRows is the scenario's target: small enough that an
// interval's rows make several compacted segments.
const compactionTargetRows = 1500

// compactionMinutes is how many one-minute intervals the events fall in.
const compactionMinutes = 3

// TestWorkerSIGKILLedDuringCompaction compacts the intervals a live
// producer keeps appending to while the worker is SIGKILLed again and
// again: after a compaction wrote its segments and before its commit,
// right after its commit and before the activity answered, and while the
// server sees a compaction running (mostly its merge). A new worker takes
// over each time. In the end the used segments and the Iceberg table hold
// every event exactly once, each interval at most ⌈rows / target⌉
// segments, and once the unused segments are killed and the orphans swept,
// deep storage holds only files something references.
func TestWorkerSIGKILLedDuringCompaction(t *testing.T) {
	t.Parallel()
	kills := pick(3, 9)
	e := newEnv(t, envOptions{partitions: 4})
	spec := e.spec(2)
	ds := spec.DataSchema.DataSource
	p := e.producer(104)
	// Event times spread over minutes already past, so that every
	// interval is old enough to compact while appends still reach it.
	base := time.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute)
	var stamped atomic.Int64
	p.gen.Now = func() time.Time {
		i := stamped.Add(1)
		return base.Add(time.Duration(i%compactionMinutes)*time.Minute + time.Duration(i%1000)*time.Millisecond)
	}

	require.NoError(t, p.produce(2000, 0))
	run := e.startSupervisor(spec)
	e.startCompaction(domain.CompactionConfig{
		DataSource: ds, TargetRowsPerSegment: compactionTargetRows,
		SkipOffsetFromLatest: domain.Duration(time.Millisecond), Period: domain.Duration(time.Second),
		MaxConcurrentCompactions: 2,
	})
	// Events keep coming until the last kill, so every interval that is
	// being compacted is also being appended to.
	stopProducing := p.until(250)
	for i := range kills {
		switch i % 3 {
		case 0:
			w := e.startWorker(fmt.Sprint(i), true, killBeforeCompactionCommit.env)
			e.waitSelfKill(spec, w, killBeforeCompactionCommit, 90*time.Second)
		case 1:
			w := e.startWorker(fmt.Sprint(i), true, killAfterCompactionCommit.env)
			e.waitSelfKill(spec, w, killAfterCompactionCommit, 90*time.Second)
		case 2:
			w := e.startWorker(fmt.Sprint(i), true)
			e.waitActivity(spec, w, protocol.ActivityCompactInterval, 30*time.Second)
			e.sigkill(spec, w)
		}
	}
	e.startWorker("last", true)
	e.awaitTakeovers(spec)
	require.NoError(t, stopProducing())
	e.waitCaughtUp(spec, 3*time.Minute)
	e.stopAndWait(spec, run, 2*time.Minute)

	st := e.waitCompactionSettled(ds, 2*time.Minute)
	t.Logf("compaction: %d done, %d conflicts, %d failed; segments %d → %d, rows %d → %d",
		st.Done, st.Conflicts, st.Failed, st.SegmentsIn, st.SegmentsOut, st.RowsIn, st.RowsOut)
	require.GreaterOrEqual(t, e.report.faultCount(), kills)
	require.Positive(t, st.Done, "no compaction committed")
	e.verify(spec, p.gen.RunID, p.produced())
	e.requireCompactedIntervals(ds)
	e.requireOnlyReferencedFiles(ds)
}

// startCompaction records cfg and starts the datasource's compaction
// workflow, as `starter compaction set` does.
func (e *env) startCompaction(cfg domain.CompactionConfig) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Workers migrate at start; this may come before the first one.
	require.NoError(e.t, e.store.Migrate(ctx))
	require.NoError(e.t, harness.StartCompaction(ctx, e.store, e.temporal, workflows.TaskQueue, cfg))
}

// waitCompactionSettled waits until a round that began after ingestion
// stopped found nothing to compact and nothing runs, then stops the
// workflow and returns its last status.
func (e *env) waitCompactionSettled(ds string, timeout time.Duration) workflows.CompactionStatus {
	e.t.Helper()
	since := time.Now()
	var st workflows.CompactionStatus
	require.Eventually(e.t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var err error
		if st, err = harness.CompactionStatus(ctx, e.temporal, ds); err != nil {
			return false
		}
		return st.LastRound.After(since) && st.Pending == 0 && len(st.Running) == 0
	}, timeout, 200*time.Millisecond, "compaction did not settle: %+v", st)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(e.t, harness.StopCompaction(ctx, e.temporal, ds))
	return st
}

// requireCompactedIntervals checks that each interval holds at most
// ⌈rows / target⌉ used segments.
func (e *env) requireCompactedIntervals(ds string) {
	e.t.Helper()
	segs, err := e.store.Segments(context.Background(), ds)
	require.NoError(e.t, err)
	rows, count := map[time.Time]int64{}, map[time.Time]int64{}
	for _, s := range segs {
		rows[s.IntervalStart] += s.Rows
		count[s.IntervalStart]++
	}
	for iv, n := range count {
		limit := (rows[iv] + compactionTargetRows - 1) / compactionTargetRows
		e.t.Logf("interval %s: %d rows in %d segments", iv.Format(time.RFC3339), rows[iv], n)
		require.LessOrEqual(e.t, n, limit, "interval %s: %d rows in %d segments, want at most %d", iv, rows[iv], n, limit)
	}
}

// requireOnlyReferencedFiles kills the unused segments and sweeps the
// orphans with no grace (nothing runs any more), then checks that every
// segment file left in deep storage is a used segment's or one a kept
// Iceberg snapshot lists: the files of killed compactions are gone.
func (e *env) requireOnlyReferencedFiles(ds string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	deep, err := storage.NewLocal(e.deepDir)
	require.NoError(e.t, err)
	k := lifecycle.Killer{Store: e.store, Deep: deep, Tables: lake.New(e.pool, deep, lake.Config{})}
	killed, err := k.Kill(ctx, ds, 0, false)
	require.NoError(e.t, err)
	swept, err := k.Sweep(ctx, ds, 0, false)
	require.NoError(e.t, err)
	e.t.Logf("kill: %d files deleted, %d kept; sweep: %d orphans deleted", len(killed.Killed), len(killed.Kept), len(swept.Deleted))

	referenced := map[string]bool{}
	for _, f := range killed.Kept {
		referenced[f.URI] = true
	}
	segs, err := e.store.Segments(ctx, ds)
	require.NoError(e.t, err)
	for _, s := range segs {
		referenced[s.URI] = true
	}
	var unreferenced []string
	for _, rel := range e.files(e.deepDir) {
		if strings.Contains(rel, "/metadata/") { // the table's own, swept by its maintenance
			continue
		}
		if !referenced[deep.URI(filepath.ToSlash(rel))] {
			unreferenced = append(unreferenced, rel)
		}
	}
	require.Empty(e.t, first(unreferenced), "%d files in deep storage that nothing references (first ones shown)", len(unreferenced))
}
