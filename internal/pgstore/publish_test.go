package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/pgstore"
	"handoff/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func newStore(t testing.TB) *pgstore.Store {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), testenv.Postgres(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	s := pgstore.New(pool)
	require.NoError(t, s.Migrate(context.Background()))
	return s
}

func publication(seq int, start, end domain.Offsets) pgstore.Publication {
	name := domain.SequenceName("sup", 0, seq)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return pgstore.Publication{
		SequenceName: name, SupervisorID: "sup", DataSource: "ds", Topic: "topic", Group: 0, SequenceID: seq,
		Start: start, End: end, Rows: 10,
		Segments: []pgstore.Segment{{
			ID: "ds_" + name, DataSource: "ds", IntervalStart: t0, IntervalEnd: t0.Add(time.Hour),
			Version: name, SequenceName: name, Rows: 10, Bytes: 100, URI: "file:///x/" + name, Checksum: "sha256:00",
		}},
	}
}

func TestPublishMovesOffsetsFromStartToEnd(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()

	already, err := s.Publish(ctx, publication(0, domain.Offsets{domain.P(0): 0, domain.P(1): 5}, domain.Offsets{domain.P(0): 10, domain.P(1): 7}))
	require.NoError(t, err)
	require.False(t, already)
	already, err = s.Publish(ctx, publication(1, domain.Offsets{domain.P(0): 10, domain.P(1): 7}, domain.Offsets{domain.P(0): 12, domain.P(1): 9}))
	require.NoError(t, err)
	require.False(t, already)

	offsets, err := s.Offsets(ctx, "ds", "topic")
	require.NoError(t, err)
	require.Equal(t, domain.Offsets{domain.P(0): 12, domain.P(1): 9}, offsets)
	segs, err := s.Segments(ctx, "ds")
	require.NoError(t, err)
	require.Len(t, segs, 2)
	next, err := s.NextSequenceIDs(ctx, "sup")
	require.NoError(t, err)
	require.Equal(t, map[int]int{0: 2}, next)
}

func TestPublishRefusesStartThatIsNotTheStoredOffset(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	_, err := s.Publish(ctx, publication(0, domain.Offsets{domain.P(0): 0}, domain.Offsets{domain.P(0): 10}))
	require.NoError(t, err)

	_, err = s.Publish(ctx, publication(1, domain.Offsets{domain.P(0): 8}, domain.Offsets{domain.P(0): 20}))
	var mismatch *pgstore.MismatchError
	require.ErrorAs(t, err, &mismatch)
	require.Equal(t, int64(10), mismatch.Stored)
	require.Equal(t, int64(8), mismatch.Start)

	// Nothing of the refused publish is visible.
	offsets, err := s.Offsets(ctx, "ds", "topic")
	require.NoError(t, err)
	require.Equal(t, domain.Offsets{domain.P(0): 10}, offsets)
	segs, err := s.Segments(ctx, "ds")
	require.NoError(t, err)
	require.Len(t, segs, 1)
	_, found, err := s.PublishedSequence(ctx, domain.SequenceName("sup", 0, 1))
	require.NoError(t, err)
	require.False(t, found)
}

func TestRepeatedPublishIsIdempotent(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	p := publication(0, domain.Offsets{domain.P(0): 0}, domain.Offsets{domain.P(0): 10})
	_, err := s.Publish(ctx, p)
	require.NoError(t, err)

	already, err := s.Publish(ctx, p)
	require.NoError(t, err)
	require.True(t, already)
	segs, err := s.Segments(ctx, "ds")
	require.NoError(t, err)
	require.Len(t, segs, 1, "a replayed publish must not add segments")
}

func TestSequenceNameReusedWithOtherOffsetsConflicts(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	_, err := s.Publish(ctx, publication(0, domain.Offsets{domain.P(0): 0}, domain.Offsets{domain.P(0): 10}))
	require.NoError(t, err)

	_, err = s.Publish(ctx, publication(0, domain.Offsets{domain.P(0): 0}, domain.Offsets{domain.P(0): 11}))
	require.True(t, errors.Is(err, pgstore.ErrSequenceConflict), "got %v", err)
}

func TestConcurrentPublishesOfTheSameStartCommitOnce(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	errs := make(chan error, 2)
	for i := range 2 {
		go func() {
			_, err := s.Publish(ctx, publication(i, domain.Offsets{domain.P(0): 0}, domain.Offsets{domain.P(0): 10 + int64(i)}))
			errs <- err
		}()
	}
	var ok, mismatched int
	for range 2 {
		var mismatch *pgstore.MismatchError
		switch err := <-errs; {
		case err == nil:
			ok++
		case errors.As(err, &mismatch):
			mismatched++
		default:
			t.Fatalf("unexpected error: %v", err)
		}
	}
	require.Equal(t, 1, ok)
	require.Equal(t, 1, mismatched)
}
