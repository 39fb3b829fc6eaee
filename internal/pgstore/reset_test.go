package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

func TestResetOffsetsSetsOnlyTheGivenPartitions(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	_, err := s.Publish(ctx, publication(0, domain.Offsets{domain.P(0): 0, domain.P(1): 0, domain.P(2): 0}, domain.Offsets{domain.P(0): 10, domain.P(1): 20, domain.P(2): 30}))
	require.NoError(t, err)

	// Backwards, forwards, and a partition that had no offset yet.
	require.NoError(t, s.ResetOffsets(ctx, "ds", "topic", domain.Offsets{domain.P(0): 3, domain.P(2): 40, domain.P(5): 7}))

	offsets, err := s.Offsets(ctx, "ds", "topic")
	require.NoError(t, err)
	require.Equal(t, domain.Offsets{domain.P(0): 3, domain.P(1): 20, domain.P(2): 40, domain.P(5): 7}, offsets)

	// A publish from the reset offsets is accepted.
	_, err = s.Publish(ctx, publication(1, domain.Offsets{domain.P(0): 3, domain.P(1): 20}, domain.Offsets{domain.P(0): 5, domain.P(1): 21}))
	require.NoError(t, err)

	// Other datasources and topics are untouched.
	other, err := s.Offsets(ctx, "ds", "other-topic")
	require.NoError(t, err)
	require.Empty(t, other)
}

func TestResetOffsetsRefusesNegativeOffsetsAndStoresNothing(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	require.NoError(t, s.ResetOffsets(ctx, "ds", "topic", domain.Offsets{domain.P(0): 1, domain.P(1): 1}))

	require.Error(t, s.ResetOffsets(ctx, "ds", "topic", domain.Offsets{domain.P(0): 5, domain.P(1): -1}))
	offsets, err := s.Offsets(ctx, "ds", "topic")
	require.NoError(t, err)
	require.Equal(t, domain.Offsets{domain.P(0): 1, domain.P(1): 1}, offsets, "one transaction: all or nothing")
}

// The reset waits for the datasource's publish lock: while another
// transaction holds it (as a publish would), neither a reset nor a publish
// goes through; both do once it is released.
func TestResetOffsetsAndPublishShareTheDatasourceLock(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()

	tx, err := s.Pool().Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck // released below; rollback after commit is a no-op
	_, err = tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('handoff.datasource:' || $1, 0))`, "ds")
	require.NoError(t, err)

	reset := make(chan error, 1)
	go func() { reset <- s.ResetOffsets(ctx, "ds", "topic", domain.Offsets{domain.P(0): 10}) }()
	published := make(chan error, 1)
	go func() {
		_, err := s.Publish(ctx, publication(0, domain.Offsets{domain.P(0): 10}, domain.Offsets{domain.P(0): 12}))
		published <- err
	}()
	select {
	case err := <-reset:
		t.Fatalf("reset went through while the datasource was locked: %v", err)
	case err := <-published:
		t.Fatalf("publish went through while the datasource was locked: %v", err)
	case <-time.After(300 * time.Millisecond):
	}

	require.NoError(t, tx.Commit(ctx))
	require.NoError(t, <-reset)
	// The publish ran before or after the reset; either way it started
	// at 10, which the reset set or the empty table accepted.
	require.NoError(t, <-published)
	offsets, err := s.Offsets(ctx, "ds", "topic")
	require.NoError(t, err)
	require.Contains(t, []int64{10, 12}, offsets[domain.P(0)])
}

func TestResetOffsetsWithNothingIsANoop(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	require.NoError(t, s.ResetOffsets(ctx, "ds", "topic", domain.Offsets{}))
	offsets, err := s.Offsets(ctx, "ds", "topic")
	require.NoError(t, err)
	require.Empty(t, offsets)
}
