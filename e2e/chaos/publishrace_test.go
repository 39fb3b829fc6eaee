package chaos

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/pgstore"
	"handoff/internal/testenv"
)

// raceStore is a migrated, empty metadata database of the test's own.
func raceStore(t *testing.T) (*pgstore.Store, *pgxpool.Pool) {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), testenv.Postgres(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	s := pgstore.New(pool)
	require.NoError(t, s.Migrate(context.Background()))
	return s, pool
}

// publication is sequence seq of group 0 of supervisor sup over one
// partition, [start, end), with one segment of end-start rows.
func publication(seq int, start, end int64) pgstore.Publication {
	name := domain.SequenceName("sup", 0, seq)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return pgstore.Publication{
		SequenceName: name, SupervisorID: "sup", DataSource: "ds", Topic: "topic", Group: 0, SequenceID: seq,
		Start: domain.Offsets{domain.P(0): start}, End: domain.Offsets{domain.P(0): end}, Rows: end - start,
		Segments: []pgstore.Segment{{
			ID: "ds_" + name, DataSource: "ds", IntervalStart: t0, IntervalEnd: t0.Add(time.Minute),
			Version: name, SequenceName: name, Rows: end - start, Bytes: 100, URI: "file:///deep/" + name, Checksum: "sha256:00",
		}},
	}
}

// committed reads what Postgres holds: rows in segments, segment rows per
// sequence, and the sequence records.
func committed(t *testing.T, pool *pgxpool.Pool) (rows int64, segmentsPerSeq map[string]int, records int) {
	t.Helper()
	ctx := context.Background()
	segmentsPerSeq = map[string]int{}
	r, err := pool.Query(ctx, `SELECT sequence_name, rows FROM segments WHERE datasource = 'ds'`)
	require.NoError(t, err)
	for r.Next() {
		var name string
		var n int64
		require.NoError(t, r.Scan(&name, &n))
		segmentsPerSeq[name]++
		rows += n
	}
	require.NoError(t, r.Err())
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM published_sequences WHERE datasource = 'ds'`).Scan(&records))
	return rows, segmentsPerSeq, records
}

// TestRacingPublishesOfOneSequence publishes each sequence twice at the
// same moment, as a retried activity whose first attempt is still running
// would: exactly one commits, the other reports the idempotent success,
// and every sequence's rows are there once.
func TestRacingPublishesOfOneSequence(t *testing.T) {
	t.Parallel()
	s, pool := raceStore(t)
	e := &env{t: t, report: newReport(t)}
	rounds := pick(20, 200)
	const rowsPerSeq = 100

	for seq := range rounds {
		pub := publication(seq, int64(seq)*rowsPerSeq, int64(seq+1)*rowsPerSeq)
		var wg sync.WaitGroup
		start := make(chan struct{})
		already := make([]bool, 2)
		errs := make([]error, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				already[i], errs[i] = s.Publish(context.Background(), pub)
			}()
		}
		close(start)
		wg.Wait()
		require.NoError(t, errors.Join(errs...), "sequence %d", seq)
		require.ElementsMatch(t, []bool{false, true}, already,
			"sequence %d: exactly one publish commits, the other is the idempotent success", seq)
	}

	e.report.faultN("racing-publish", rounds)
	rows, perSeq, records := committed(t, pool)
	res := result{Produced: int64(rounds) * rowsPerSeq, Published: rows, Sequences: records, Segments: len(perSeq)}
	for name, n := range perSeq {
		if n > 1 {
			res.Duplicated += int64(n-1) * rowsPerSeq
			t.Errorf("sequence %s has %d segment rows", name, n)
		}
	}
	res.Lost = max(0, res.Produced-rows+res.Duplicated)
	res.Passed = !t.Failed()
	e.report.emit(res)
	require.Equal(t, rounds, records, "one record per sequence")
	require.Equal(t, int64(rounds)*rowsPerSeq, rows, "each sequence's rows once")
	offsets, err := s.Offsets(context.Background(), "ds", "topic")
	require.NoError(t, err)
	require.Equal(t, domain.Offsets{domain.P(0): int64(rounds) * rowsPerSeq}, offsets)
}

// TestStalePublishAfterResetIsRefused publishes, from a group generation
// that a reset made stale, a sequence whose start is no longer the stored
// offset (the reset moved it back, or forward): it is refused with an
// offset mismatch, and nothing of it is written.
func TestStalePublishAfterResetIsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		resetTo int64
	}{{"reset-back", 0}, {"reset-forward", 500}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, pool := raceStore(t)
			e := &env{t: t, report: newReport(t)}
			ctx := context.Background()
			_, err := s.Publish(ctx, publication(0, 0, 100))
			require.NoError(t, err)

			// Generation 1 read sequence 1 [100, 200) and is about to publish
			// it when the operator resets the partition.
			stale := publication(1, 100, 200)
			require.NoError(t, s.ResetOffsets(ctx, "ds", "topic", domain.Offsets{domain.P(0): tc.resetTo}))
			rowsBefore, _, recordsBefore := committed(t, pool)

			_, err = s.Publish(ctx, stale)
			e.report.fault("stale-generation-publish")
			var mismatch *pgstore.MismatchError
			require.ErrorAs(t, err, &mismatch, "a publish from before the reset must be refused")
			require.Equal(t, tc.resetTo, mismatch.Stored)
			require.Equal(t, int64(100), mismatch.Start)

			rows, perSeq, records := committed(t, pool)
			e.report.emit(result{Produced: 100, Published: rows, Sequences: records, Segments: len(perSeq), Passed: true,
				Duplicated: max(0, rows-rowsBefore)})
			require.Equal(t, rowsBefore, rows, "no segment of the refused publish")
			require.Equal(t, recordsBefore, records, "no record of the refused publish")
			require.NotContains(t, perSeq, stale.SequenceName)
			offsets, err := s.Offsets(ctx, "ds", "topic")
			require.NoError(t, err)
			require.Equal(t, domain.Offsets{domain.P(0): tc.resetTo}, offsets, "the reset offsets stay")
			_, ok, err := s.PublishedSequence(ctx, stale.SequenceName)
			require.NoError(t, err)
			require.False(t, ok, fmt.Sprintf("%s must not be recorded", stale.SequenceName))
		})
	}
}
