package e2e

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/activities"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/internal/lake"
	"handoff/internal/lake/laketest"
	"handoff/internal/lifecycle"
	"handoff/internal/storage"
)

// TestRetentionDropsOldIntervalsAndKillDeletesExactlyTheUnreferencedFiles
// ingests events into two minutes three days ago and two minutes ten
// minutes ago, then runs the datasource's lifecycle workflow with
// compaction and a rule that drops what ended more than a day ago: the old
// intervals leave the used segments and the Iceberg table, the recent ones
// are compacted, every recent event is still there exactly once, and once
// the table's old snapshots expire, the kill and the orphan sweep (of a
// file a failed publish left) leave in deep storage exactly the files of
// the used segments.
func TestRetentionDropsOldIntervalsAndKillDeletesExactlyTheUnreferencedFiles(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	// Snapshots expire at the first maintenance, so the kill can go on.
	short := lake.Config{MaxSnapshotAge: time.Millisecond, MinSnapshots: 1}
	s.acts.Tables = lake.New(s.store.Pool(), s.deep, short)
	spec := s.spec(1)
	ds := spec.DataSchema.DataSource
	gen := eventgen.New(s.name, 17)
	recent := time.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute)
	old := recent.AddDate(0, 0, -3)
	minuteOf := func(i int64) time.Time { // event i's minute: 0, 1 old; 2, 3 recent
		if k := i % 4; k < 2 {
			return old.Add(time.Duration(k) * time.Minute)
		}
		return recent.Add(time.Duration(i%4-2) * time.Minute)
	}
	var stamped atomic.Int64
	gen.Now = func() time.Time { return minuteOf(stamped.Add(1) - 1).Add(time.Second) }
	const wave = 1000

	s.produce(gen, wave)
	run := s.startSupervisor(spec)
	n := s.checkpointUntilPublished(spec, 0)
	s.produce(gen, wave)
	s.checkpointUntilPublished(spec, n)
	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)

	rules, err := json.Marshal(domain.RetentionRules{DataSource: ds, KillGracePeriod: domain.Duration(time.Millisecond),
		Rules: []domain.RetentionRule{{Type: domain.RuleDropBeforeByPeriod, Period: domain.Duration(24 * time.Hour)}}})
	require.NoError(t, err)
	_, _, err = s.store.SetRetentionRules(context.Background(), ds, rules)
	require.NoError(t, err)
	s.startCompaction(domain.CompactionConfig{DataSource: ds, SkipOffsetFromLatest: domain.Duration(time.Millisecond),
		Period: domain.Duration(time.Second)}.WithDefaults())

	// The old intervals go, the recent ones are one segment each.
	require.Eventually(t, func() bool {
		segs, err := s.store.Segments(context.Background(), ds)
		require.NoError(t, err)
		per := map[time.Time]int{}
		for _, g := range segs {
			per[g.IntervalStart.UTC()]++
		}
		return len(per) == 2 && per[recent] == 1 && per[recent.Add(time.Minute)] == 1
	}, time.Minute, 200*time.Millisecond, "old intervals not dropped or recent ones not compacted")

	// Expire the snapshots that still list the replaced and dropped files;
	// the next rounds kill them.
	_, err = s.acts.Tables.Maintain(context.Background(), ds)
	require.NoError(t, err)
	var st = s.compactionStatus(ds)
	require.Eventually(t, func() bool {
		st = s.compactionStatus(ds)
		var left int
		require.NoError(t, s.store.Pool().QueryRow(context.Background(),
			`SELECT count(*) FROM segments WHERE datasource = $1 AND NOT used AND killed_at IS NULL`, ds).Scan(&left))
		return left == 0
	}, time.Minute, 200*time.Millisecond, "unused segments not killed")
	s.stopCompaction(ds)
	s.recordCompactionHistories(ds)
	t.Logf("lifecycle: %d dropped, %d killed (%d bytes), %d compactions, %d conflicts", st.Dropped, st.Killed, st.KilledBytes, st.Done, st.Conflicts)
	require.GreaterOrEqual(t, st.Dropped, int64(2), "each old interval had a segment or more")

	// A publish that failed its offset check leaves its segment file
	// behind, listed by nothing; the workflow's sweep leaves files younger
	// than lifecycle.MinSweepGrace alone, a sweep with a short grace (as
	// starter kill --sweep-grace runs it) deletes it, and nothing else.
	orphan := ds + "/" + recent.Format("20060102T150405Z") + "_" + recent.Add(time.Minute).Format("20060102T150405Z") + "/" + ds + "_g0_s99.parquet"
	require.NoError(t, s.deep.Put(context.Background(), orphan, func(w io.Writer) error {
		_, err := w.Write([]byte("PAR1 a segment whose publish failed its offset check"))
		return err
	}))
	// A worker killed in the middle of a write leaves its temporary file.
	halfWritten := s.deep.Path(orphan) + ".tmp-4242"
	require.NoError(t, os.WriteFile(halfWritten, []byte("PAR1 half a segm"), 0o600))
	// A worker killed between a publish's commit and its removal of the
	// sequence's staging directory leaves the chunks; the chunks of a
	// sequence not published (open) must stay.
	var published string
	require.NoError(t, s.store.Pool().QueryRow(context.Background(),
		`SELECT sequence_name FROM published_sequences WHERE datasource = $1 LIMIT 1`, ds).Scan(&published))
	leftChunk := spec.ID + "/" + published + "/p0-0.run"
	openChunk := spec.ID + "/" + spec.ID + "_g0_s999/p0-0.run"
	for _, key := range []string{leftChunk, openChunk} {
		require.NoError(t, s.staging.Put(context.Background(), key, func(w io.Writer) error {
			_, err := w.Write([]byte("a chunk"))
			return err
		}))
	}
	time.Sleep(20 * time.Millisecond)
	k := lifecycle.Killer{Store: s.store, Deep: s.deep, Tables: s.acts.Tables, Staging: s.staging}
	dry, err := k.Sweep(context.Background(), ds, 10*time.Millisecond, true)
	require.NoError(t, err)
	require.Len(t, dry.Deleted, 3, "the dry run lists the orphan, the unfinished write and the published sequence's chunk, and only them: %+v", dry.Deleted)
	require.Equal(t, s.deep.URI(orphan), dry.Deleted[0].URI)
	require.False(t, dry.Deleted[0].Unfinished)
	require.True(t, dry.Deleted[1].Unfinished)
	require.Equal(t, s.staging.URI(leftChunk), dry.Deleted[2].URI)
	require.True(t, dry.Deleted[2].Staging)
	_, err = s.deep.Open(context.Background(), orphan)
	require.NoError(t, err, "a dry run deletes nothing")
	swept, err := k.Sweep(context.Background(), ds, 10*time.Millisecond, false)
	require.NoError(t, err)
	require.Len(t, swept.Deleted, 3)
	require.NoFileExists(t, halfWritten)
	_, err = s.staging.Open(context.Background(), leftChunk)
	require.ErrorIs(t, err, storage.ErrNotFound, "the published sequence's leftover chunk is swept")
	_, err = s.staging.Open(context.Background(), openChunk)
	require.NoError(t, err, "an unpublished sequence's chunk stays")

	// Deep storage holds exactly the used segments' files (and the table's
	// metadata).
	segs, err := s.store.Segments(context.Background(), ds)
	require.NoError(t, err)
	want := map[string]bool{}
	for _, g := range segs {
		want[g.URI] = true
	}
	keys, err := s.deep.List(context.Background(), ds+"/")
	require.NoError(t, err)
	got := map[string]bool{}
	for _, k := range keys {
		if !strings.HasPrefix(k, ds+"/metadata/") {
			got[s.deep.URI(k)] = true
		}
	}
	require.Equal(t, want, got, "deep storage must hold exactly the used segments' files")

	// Every recent event once, no old one, in the segments and the table.
	total := 2 * int64(wave)
	expected := map[string]int{}
	for i := range total {
		if !minuteOf(i).Before(recent) {
			expected[gen.RunID+"-"+itoa(i)] = 1
		}
	}
	require.Equal(t, expected, s.publishedIDCounts(spec), "the used segments")
	scan, err := laketest.Read(context.Background(), s.store.Pool(), short, ds, "id")
	require.NoError(t, err)
	require.Equal(t, expected, scan.IDs, "the Iceberg table")
	require.Empty(t, scan.SharedFiles)
	stored, err := s.store.Offsets(context.Background(), ds, spec.IOConfig.Topic)
	require.NoError(t, err)
	require.Equal(t, stored, scan.Offsets, "the snapshot after compaction and retention still says where the offsets are")
}
