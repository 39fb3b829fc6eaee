package e2e

import (
	"context"
	"net/url"
	"slices"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/kafka"
	"handoff/internal/segment"
)

// requireExactlyOnce reads every published segment file back and checks that
// the events with ids runID-0 ... runID-(n-1) appear exactly once each and
// nothing else does; and that the stored offsets are the topic's end offsets.
func (s *stack) requireExactlyOnce(spec domain.Spec, runID string, n int64) {
	s.t.Helper()
	ctx := context.Background()
	segs, err := s.store.Segments(ctx, spec.DataSchema.DataSource)
	require.NoError(s.t, err)
	idCol := slices.Index(spec.DataSchema.DimensionsSpec.Dimensions, "id")
	require.GreaterOrEqual(s.t, idCol, 0)
	seen := map[string]int{}
	var total int64
	for _, seg := range segs {
		u, err := url.Parse(seg.URI)
		require.NoError(s.t, err)
		dims, rows, err := segment.ReadFile(u.Path)
		require.NoError(s.t, err)
		require.Equal(s.t, spec.DataSchema.DimensionsSpec.Dimensions, dims)
		require.Equal(s.t, seg.Rows, int64(len(rows)), "segment %s row count", seg.ID)
		for _, r := range rows {
			seen[r.Dims[idCol]]++
			total++
		}
	}
	var missing, dup []string
	for i := range n {
		id := runID + "-" + itoa(i)
		switch c := seen[id]; {
		case c == 0:
			missing = append(missing, id)
		case c > 1:
			dup = append(dup, id)
		}
		delete(seen, id)
	}
	s.t.Logf("published %d rows in %d segments; %d ids missing, %d duplicated", total, len(segs), len(missing), len(dup))
	require.Empty(s.t, first(missing), "%d of %d events lost (first ones shown)", len(missing), n)
	require.Empty(s.t, first(dup), "%d events published more than once", len(dup))
	require.Empty(s.t, seen, "%d rows that were never produced", len(seen))
	require.Equal(s.t, n, total)

	kc, err := kafka.New(s.brokers)
	require.NoError(s.t, err)
	parts, err := kc.Partitions(ctx, spec.IOConfig.Topic)
	require.NoError(s.t, err)
	_, latest, err := kc.Bounds(ctx, spec.IOConfig.Topic, parts)
	require.NoError(s.t, err)
	stored, err := s.store.Offsets(ctx, spec.DataSchema.DataSource, spec.IOConfig.Topic)
	require.NoError(s.t, err)
	require.Equal(s.t, domain.Offsets(latest), stored, "stored offsets must be each partition's end")
}

func first(ids []string) []string { return ids[:min(len(ids), 5)] }
