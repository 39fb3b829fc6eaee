package lake_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/lake"
	"handoff/internal/pgstore"
)

// Publications in a row: each is one snapshot whose summary carries the
// offsets stored with it, and the table holds every row once.
func TestPublishesAppendSnapshotsWithTheirOffsets(t *testing.T) {
	t.Parallel()
	e, ctx := newEnv(t, lake.Config{}), context.Background()
	s0 := seq{id: 0, rows: 30, start: domain.Offsets{domain.P(0): 0}, end: domain.Offsets{domain.P(0): 30}}
	s1 := seq{id: 1, rows: 20, hour: 1, start: domain.Offsets{domain.P(0): 30}, end: domain.Offsets{domain.P(0): 50}}
	for _, s := range []seq{s0, s1} {
		already, err := e.store.Publish(ctx, e.write("wiki", s))
		require.NoError(t, err)
		require.False(t, already)
	}
	e.requireRows("wiki", s0, s1)
	scan, err := readTable(e, "wiki")
	require.NoError(t, err)
	require.Equal(t, domain.Offsets{domain.P(0): 50}, scan.Offsets)
	require.Equal(t, domain.SequenceName("sup", 0, 1), scan.Summary[lake.SummarySequence])
	require.Len(t, scan.Files, 2)

	tbl, err := laketestLoad(e, "wiki")
	require.NoError(t, err)
	require.Len(t, tbl.Metadata().Snapshots(), 2)
	spec := tbl.Spec()
	require.Equal(t, "__time_hour", spec.Field(0).Name)
	f, ok := tbl.Schema().FindFieldByName("__time")
	require.True(t, ok)
	require.Equal(t, "timestamptz", f.Type.String())
}

// The answer of a committed publish is lost and it runs again: the replay
// commits nothing, the table keeps one snapshot of the sequence.
func TestReplayedPublishAddsNoSnapshot(t *testing.T) {
	t.Parallel()
	e, ctx := newEnv(t, lake.Config{}), context.Background()
	s0 := seq{id: 0, rows: 10, start: domain.Offsets{domain.P(0): 0}, end: domain.Offsets{domain.P(0): 10}}
	_, err := e.store.Publish(ctx, e.write("wiki", s0))
	require.NoError(t, err)
	already, err := e.store.Publish(ctx, e.write("wiki", s0))
	require.NoError(t, err)
	require.True(t, already)
	e.requireRows("wiki", s0)
	tbl, err := laketestLoad(e, "wiki")
	require.NoError(t, err)
	require.Len(t, tbl.Metadata().Snapshots(), 1)
}

// Two attempts of one sequence race: one commits, the other is the replay,
// and the sequence's rows are in the table once.
func TestRacingPublishesOfOneSequenceCommitOnce(t *testing.T) {
	t.Parallel()
	e, ctx := newEnv(t, lake.Config{}), context.Background()
	s0 := seq{id: 0, rows: 25, start: domain.Offsets{domain.P(0): 0}, end: domain.Offsets{domain.P(0): 25}}
	a, b := e.write("wiki", s0), e.write("wiki", s0)
	var wg sync.WaitGroup
	results := make([]bool, 2)
	for i, p := range []pgstore.Publication{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			already, err := e.store.Publish(ctx, p)
			require.NoError(t, err)
			results[i] = already
		}()
	}
	wg.Wait()
	require.ElementsMatch(t, []bool{false, true}, results)
	e.requireRows("wiki", s0)
}

// Groups of one datasource publish at once: every sequence is one
// snapshot, none lost to another's compare-and-swap.
func TestConcurrentGroupsOfOneDatasource(t *testing.T) {
	t.Parallel()
	e, ctx := newEnv(t, lake.Config{}), context.Background()
	var seqs []seq
	for g := range 4 {
		for i := range 3 {
			seqs = append(seqs, seq{id: i, group: g, rows: 7, hour: i,
				start: domain.Offsets{domain.P(int32(g)): int64(i * 7)}, end: domain.Offsets{domain.P(int32(g)): int64(i*7 + 7)}})
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, s := range seqs[g*3 : g*3+3] {
				_, err := e.store.Publish(ctx, e.write("wiki", s))
				require.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	e.requireRows("wiki", seqs...)
	scan, err := readTable(e, "wiki")
	require.NoError(t, err)
	stored, err := e.store.Offsets(ctx, "wiki", "topic")
	require.NoError(t, err)
	require.Equal(t, stored, scan.Offsets)
	tbl, err := laketestLoad(e, "wiki")
	require.NoError(t, err)
	require.Len(t, tbl.Metadata().Snapshots(), 12)
}

// The transaction fails after the table's metadata is written (a kill
// between metadata write and commit looks the same to the table): nothing
// moves, the retry commits the sequence once, and maintenance sweeps the
// files the failed attempt left.
func TestFailedCommitLeavesTableUnchangedAndOrphansAreSwept(t *testing.T) {
	t.Parallel()
	e, ctx := newEnv(t, lake.Config{}), context.Background()
	s0 := seq{id: 0, rows: 10, start: domain.Offsets{domain.P(0): 0}, end: domain.Offsets{domain.P(0): 10}}
	s1 := seq{id: 1, rows: 10, start: domain.Offsets{domain.P(0): 10}, end: domain.Offsets{domain.P(0): 20}}
	_, err := e.store.Publish(ctx, e.write("wiki", s0))
	require.NoError(t, err)
	before, err := e.deep.List(ctx, "wiki/metadata/")
	require.NoError(t, err)

	p := e.write("wiki", s1)
	commit := p.Table
	boom := errors.New("killed after the metadata write")
	p.Table = func(ctx context.Context, tx pgx.Tx, after domain.Offsets) error {
		require.NoError(t, commit(ctx, tx, after))
		return boom
	}
	_, err = e.store.Publish(ctx, p)
	require.ErrorIs(t, err, boom)
	e.requireRows("wiki", s0)
	stored, err := e.store.Offsets(ctx, "wiki", "topic")
	require.NoError(t, err)
	require.Equal(t, domain.Offsets{domain.P(0): 10}, stored)
	orphaned, err := e.deep.List(ctx, "wiki/metadata/")
	require.NoError(t, err)
	require.Greater(t, len(orphaned), len(before), "the failed attempt wrote metadata files")

	_, err = e.store.Publish(ctx, e.write("wiki", s1))
	require.NoError(t, err)
	m, err := e.lake.Maintain(ctx, "wiki")
	require.NoError(t, err)
	require.Equal(t, len(orphaned)-len(before), m.DeletedFiles, "the failed attempt's files, and only those")
	e.requireRows("wiki", s0, s1)
}
