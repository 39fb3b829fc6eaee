package pgstore_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/pgstore"
)

func compacted(name string, rows int64) pgstore.Segment {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return pgstore.Segment{ID: "ds_" + name + "_0", DataSource: "ds", IntervalStart: t0, IntervalEnd: t0.Add(time.Hour),
		Version: name, SequenceName: name, Rows: rows, Bytes: 100, URI: "file:///x/" + name, Checksum: "sha256:00"}
}

func usedIDs(t *testing.T, s *pgstore.Store) []string {
	t.Helper()
	segs, err := s.Segments(context.Background(), "ds")
	require.NoError(t, err)
	var ids []string
	for _, g := range segs {
		ids = append(ids, g.ID)
	}
	return ids
}

// A compaction replaces exactly the segments it read: one published
// meanwhile stays used, a retry of a committed replacement changes
// nothing, and a replacement whose segments another one took commits
// nothing.
func TestReplaceSwapsExactlyTheSetItRead(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	p0 := publication(0, domain.Offsets{domain.P(0): 0}, domain.Offsets{domain.P(0): 10})
	p1 := publication(1, domain.Offsets{domain.P(0): 10}, domain.Offsets{domain.P(0): 20})
	for _, p := range []pgstore.Publication{p0, p1} {
		_, err := s.Publish(ctx, p)
		require.NoError(t, err)
	}
	read := []string{p0.Segments[0].ID, p1.Segments[0].ID}
	// Appended after the compaction read its set.
	p2 := publication(2, domain.Offsets{domain.P(0): 20}, domain.Offsets{domain.P(0): 30})
	_, err := s.Publish(ctx, p2)
	require.NoError(t, err)

	c1 := pgstore.Replacement{DataSource: "ds", Name: "compaction_1", Replaced: read, New: []pgstore.Segment{compacted("compaction_1", 20)}}
	done, err := s.Replace(ctx, c1)
	require.NoError(t, err)
	require.False(t, done)
	require.ElementsMatch(t, []string{"ds_compaction_1_0", p2.Segments[0].ID}, usedIDs(t, s), "the append stays used")

	done, err = s.Replace(ctx, c1)
	require.NoError(t, err)
	require.True(t, done, "the retry of a committed replacement")
	require.Len(t, usedIDs(t, s), 2)

	c2 := pgstore.Replacement{DataSource: "ds", Name: "compaction_2", Replaced: []string{read[1], p2.Segments[0].ID}, New: []pgstore.Segment{compacted("compaction_2", 20)}}
	_, err = s.Replace(ctx, c2)
	require.ErrorIs(t, err, pgstore.ErrReplacedChanged)
	require.ElementsMatch(t, []string{"ds_compaction_1_0", p2.Segments[0].ID}, usedIDs(t, s), "a conflict commits nothing")
	done, err = s.Replaced(ctx, "ds", "compaction_2")
	require.NoError(t, err)
	require.False(t, done)
}

func TestCompactionConfigIsVersioned(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	_, ok, err := s.CompactionConfig(ctx, "ds")
	require.NoError(t, err)
	require.False(t, ok)
	a, _ := json.Marshal(map[string]any{"dataSource": "ds", "targetRowsPerSegment": 10})
	b, _ := json.Marshal(map[string]any{"targetRowsPerSegment": 20, "dataSource": "ds"})
	for i, step := range []struct {
		cfg      []byte
		recorded bool
		version  int
	}{{a, true, 1}, {a, false, 1}, {b, true, 2}} {
		rec, v, err := s.SetCompactionConfig(ctx, "ds", step.cfg)
		require.NoError(t, err)
		require.Equal(t, step.recorded, rec, "step %d", i)
		require.Equal(t, step.version, v, "step %d", i)
	}
	got, ok, err := s.CompactionConfig(ctx, "ds")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 2, got.Version)
	require.JSONEq(t, string(b), string(got.Config))
}
