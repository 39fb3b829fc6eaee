package e2e

import (
	"context"
	"math"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/activities"
	"handoff/internal/aggregate"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/internal/segment"
)

// TestCompactionRerollsUpToACoarserGranularity ingests events spread over
// the minutes of a past hour, rolled up by minute, in several sequences;
// then compaction re-rolls the hour up to the hour. The interval ends as
// one segment at the hour's granularity with one row per (country,
// action), whose count, sums, minimum and maximum equal a direct
// aggregation of the produced events, and whose distinct-user sketch is
// exactly the merge of the minute rows' sketches.
func TestCompactionRerollsUpToACoarserGranularity(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	spec := s.rollupSpec()
	ds := spec.DataSchema.DataSource
	spec.DataSchema.GranularitySpec.SegmentGranularity = domain.GranularityHour
	spec.DataSchema.GranularitySpec.QueryGranularity = domain.GranularityMinute
	hour := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	gen := eventgen.New(s.name, 15)
	var stamped atomic.Int64
	gen.Now = func() time.Time { return hour.Add(time.Duration(stamped.Add(1)%60) * time.Minute) }

	const wave = 3000
	s.produce(gen, wave)
	run := s.startSupervisor(spec)
	n := s.checkpointUntilPublished(spec, 0)
	s.produce(gen, wave)
	s.checkpointUntilPublished(spec, n)
	s.produce(gen, wave)
	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)

	before, segs := s.publishedRollup(spec)
	require.GreaterOrEqual(t, segs, 3, "each sequence writes its own segment of the hour")
	rowsBefore := s.usedRows(ds)
	published, err := s.store.Segments(context.Background(), ds)
	require.NoError(t, err)
	for _, g := range published {
		require.Equal(t, domain.GranularityMinute, g.QueryGranularity, "a publish records the spec's granularity")
	}

	s.startCompaction(domain.CompactionConfig{
		DataSource: ds, QueryGranularity: domain.GranularityHour,
		SkipOffsetFromLatest: domain.Duration(time.Millisecond), Period: domain.Duration(time.Second),
	}.WithDefaults())
	require.Eventually(t, func() bool {
		used, err := s.store.Segments(context.Background(), ds)
		require.NoError(t, err)
		return len(used) == 1 && used[0].QueryGranularity == domain.GranularityHour
	}, 2*time.Minute, 200*time.Millisecond, "the hour not re-rolled up into one segment")
	st := s.compactionStatus(ds)
	s.stopCompaction(ds)
	require.Zero(t, st.Failed, "recent: %+v", st.Recent)

	want := expectedRollup(t, gen, 3*wave)
	after, segs := s.publishedRollup(spec)
	require.Equal(t, 1, segs)
	rows := s.usedRows(ds)
	require.Len(t, rows, len(want), "one row per (country, action): the minutes rolled up into the hour")
	require.Greater(t, len(rowsBefore), len(rows), "the minute rows were more")
	t.Logf("re-rollup: %d segments of %d minute rows → 1 segment of %d hour rows (%d events)", len(published), len(rowsBefore), len(rows), 3*wave)
	for _, r := range rows {
		require.Equal(t, hour.UnixMilli(), r.Time, "times truncated to the hour")
	}
	for k, w := range want {
		g := after[k]
		require.NotNil(t, g, "key %v missing", k)
		require.Equal(t, w.count, g.count, "count of %v", k)
		require.Equal(t, w.sum, g.sum, "longSum of %v", k)
		require.InDelta(t, float64(w.sum), g.dsum, 1e-6, "doubleSum of %v", k)
		require.Equal(t, w.min, g.min, "longMin of %v", k)
		require.Equal(t, w.max, g.max, "longMax of %v", k)
		est, err := aggregate.Estimate(g.users)
		require.NoError(t, err)
		exact := float64(len(w.exactUsers))
		require.InDelta(t, exact, float64(est), math.Max(2, 0.03*exact), "distinct users of %v", k)
		wantEst, err := aggregate.Estimate(before[k].users)
		require.NoError(t, err)
		require.Equal(t, wantEst, est, "the re-rolled sketch of %v is the merge of the minute sketches", k)
	}
}

// usedRows reads every row of the datasource's used segments.
func (s *stack) usedRows(ds string) []domain.Row {
	s.t.Helper()
	segs, err := s.store.Segments(context.Background(), ds)
	require.NoError(s.t, err)
	var out []domain.Row
	for _, seg := range segs {
		u, err := url.Parse(seg.URI)
		require.NoError(s.t, err)
		_, rows, err := segment.ReadFile(u.Path)
		require.NoError(s.t, err)
		out = append(out, rows...)
	}
	return out
}
