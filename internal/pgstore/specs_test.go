package pgstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRecordSpecAppendsOnlyChanges(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()

	recorded, version, err := s.RecordSpec(ctx, "sup", json.RawMessage(`{"a": 1, "b": [1, 2]}`))
	require.NoError(t, err)
	require.True(t, recorded)
	require.Equal(t, 1, version)

	// Equal as jsonb: other key order and spacing.
	recorded, version, err = s.RecordSpec(ctx, "sup", json.RawMessage(`{"b":[1,2],"a":1}`))
	require.NoError(t, err)
	require.False(t, recorded)
	require.Equal(t, 1, version)

	recorded, version, err = s.RecordSpec(ctx, "sup", json.RawMessage(`{"a": 2, "b": [1, 2]}`))
	require.NoError(t, err)
	require.True(t, recorded)
	require.Equal(t, 2, version)

	// Going back to the first spec is a change too: only the latest counts.
	recorded, version, err = s.RecordSpec(ctx, "sup", json.RawMessage(`{"a": 1, "b": [1, 2]}`))
	require.NoError(t, err)
	require.True(t, recorded)
	require.Equal(t, 3, version)

	// Supervisors have their own histories.
	recorded, version, err = s.RecordSpec(ctx, "other", json.RawMessage(`{"a": 1, "b": [1, 2]}`))
	require.NoError(t, err)
	require.True(t, recorded)
	require.Equal(t, 1, version)
}

func TestSpecHistoryIsOldestFirst(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()

	empty, err := s.SpecHistory(ctx, "sup")
	require.NoError(t, err)
	require.Empty(t, empty)

	for _, spec := range []string{`{"v": 1}`, `{"v": 2}`, `{"v": 2}`, `{"v": 3}`} {
		_, _, err := s.RecordSpec(ctx, "sup", json.RawMessage(spec))
		require.NoError(t, err)
	}
	hist, err := s.SpecHistory(ctx, "sup")
	require.NoError(t, err)
	require.Len(t, hist, 3)
	for i, rec := range hist {
		require.Equal(t, i+1, rec.Version)
		require.JSONEq(t, fmt.Sprintf(`{"v": %d}`, i+1), string(rec.Spec))
		require.False(t, rec.CreatedAt.IsZero())
	}
	require.False(t, hist[2].CreatedAt.Before(hist[0].CreatedAt))
}

func TestConcurrentRecordSpecNumbersWithoutGapsOrDuplicates(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(2)
		// Each spec twice: one of the pair records, the other sees it.
		for range 2 {
			go func() {
				defer wg.Done()
				_, _, err := s.RecordSpec(ctx, "sup", json.RawMessage(fmt.Sprintf(`{"i": %d}`, i)))
				errs <- err
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	hist, err := s.SpecHistory(ctx, "sup")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(hist), n, "every distinct spec is recorded at least once")
	for i, rec := range hist {
		require.Equal(t, i+1, rec.Version)
		if i > 0 {
			require.NotEqual(t, string(hist[i-1].Spec), string(rec.Spec), "consecutive versions differ")
		}
	}
}
