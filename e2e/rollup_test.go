package e2e

import (
	"context"
	"encoding/json"
	"math"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/activities"
	"handoff/internal/aggregate"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/internal/segment"
)

// rollupKey is one (country, action) row of the rolled-up datasource.
type rollupKey struct{ country, action string }

// rollupTotals are a key's metrics as a query would sum them up across
// segments.
type rollupTotals struct {
	count, sum, min, max int64
	dsum                 float64
	users                domain.Value
	exactUsers           map[string]bool
}

// TestRollupAggregatesAcrossChunksAndSequences rolls events up to the hour
// by (country, action) with every aggregator, while checkpoints split the
// stream into several sequences of small chunks: summed over the segments,
// count, sums, minimum, maximum and distinct users must equal what the
// produced events say.
func TestRollupAggregatesAcrossChunksAndSequences(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	spec := s.rollupSpec()
	spec.DataSchema.GranularitySpec.QueryGranularity = domain.GranularityHour
	spec.TuningConfig.MaxRecordsPerChunk = 500
	hour := time.Now().UTC().Truncate(time.Hour).Add(10 * time.Minute)
	gen := eventgen.New(s.name, 15)
	gen.Now = func() time.Time { return hour } // one hour bucket for every event

	const wave = 3000
	s.produce(gen, wave)
	run := s.startSupervisor(spec)
	n := s.checkpointUntilPublished(spec, 0)
	s.produce(gen, wave)
	s.checkpointUntilPublished(spec, n)
	s.produce(gen, wave)
	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)

	want := expectedRollup(t, gen, 3*wave)
	got, segs := s.publishedRollup(spec)
	require.GreaterOrEqual(t, segs, 3, "each sequence writes its own segment of the hour")
	require.Equal(t, len(want), len(got), "rolled-up keys")
	for k, w := range want {
		g, ok := got[k]
		require.True(t, ok, "key %v missing", k)
		require.Equal(t, w.count, g.count, "count of %v", k)
		require.Equal(t, w.sum, g.sum, "longSum of %v", k)
		require.InDelta(t, float64(w.sum), g.dsum, 1e-6, "doubleSum of %v", k)
		require.Equal(t, w.min, g.min, "longMin of %v", k)
		require.Equal(t, w.max, g.max, "longMax of %v", k)
		est, err := aggregate.Estimate(g.users)
		require.NoError(t, err)
		exact := float64(len(w.exactUsers))
		require.InDelta(t, exact, float64(est), math.Max(2, 0.03*exact), "distinct users of %v", k)
	}
}

// rollupSpec is the stack's spec rolled up by (country, action) with
// every aggregator; publishedRollup reads its metrics by position.
func (s *stack) rollupSpec() domain.Spec {
	spec := s.spec(1)
	spec.DataSchema.DimensionsSpec.Dimensions = []domain.DimensionSpec{{Name: "country"}, {Name: "action"}}
	spec.DataSchema.MetricsSpec = []domain.MetricSpec{
		{Type: domain.MetricCount, Name: "n"},
		{Type: domain.MetricLongSum, Name: "sum", FieldName: "delta"},
		{Type: domain.MetricDoubleSum, Name: "dsum", FieldName: "delta"},
		{Type: domain.MetricLongMin, Name: "min", FieldName: "delta"},
		{Type: domain.MetricLongMax, Name: "max", FieldName: "delta"},
		{Type: domain.MetricDoubleMin, Name: "dmin", FieldName: "delta"},
		{Type: domain.MetricDoubleMax, Name: "dmax", FieldName: "delta"},
		{Type: domain.MetricHyperUnique, Name: "users", FieldName: "user"},
	}
	return spec
}

// expectedRollup aggregates the produced events the way the spec says.
func expectedRollup(t *testing.T, gen *eventgen.Generator, n int64) map[rollupKey]*rollupTotals {
	out := map[rollupKey]*rollupTotals{}
	for i := range n {
		var e struct {
			User, Country, Action string
			Delta                 int64
		}
		require.NoError(t, json.Unmarshal(gen.Event(i), &e))
		k := rollupKey{e.Country, e.Action}
		r := out[k]
		if r == nil {
			r = &rollupTotals{min: math.MaxInt64, max: math.MinInt64, exactUsers: map[string]bool{}}
			out[k] = r
		}
		r.count++
		r.sum += e.Delta
		r.min, r.max = min(r.min, e.Delta), max(r.max, e.Delta)
		r.exactUsers[e.User] = true
	}
	return out
}

// publishedRollup sums the published segments' rows per key, as a query
// over the datasource would.
func (s *stack) publishedRollup(spec domain.Spec) (map[rollupKey]*rollupTotals, int) {
	s.t.Helper()
	segs, err := s.store.Segments(context.Background(), spec.DataSchema.DataSource)
	require.NoError(s.t, err)
	out := map[rollupKey]*rollupTotals{}
	usersMetric := spec.DataSchema.MetricsSpec[7]
	for _, seg := range segs {
		u, err := url.Parse(seg.URI)
		require.NoError(s.t, err)
		schema, rows, err := segment.ReadFile(u.Path)
		require.NoError(s.t, err)
		require.Len(s.t, schema.Metrics, 8)
		for _, r := range rows {
			k := rollupKey{r.Dim(0).S, r.Dim(1).S}
			t := out[k]
			if t == nil {
				t = &rollupTotals{min: math.MaxInt64, max: math.MinInt64, users: domain.NullValue()}
				out[k] = t
			}
			m := r.Metrics
			t.count += m[0].Long()
			t.sum += m[1].Long()
			t.dsum += m[2].Double()
			t.min, t.max = min(t.min, m[3].Long()), max(t.max, m[4].Long())
			require.Equal(s.t, float64(m[3].Long()), m[5].Double(), "doubleMin agrees with longMin")
			require.Equal(s.t, float64(m[4].Long()), m[6].Double(), "doubleMax agrees with longMax")
			t.users, err = aggregate.Combine(usersMetric, t.users, m[7])
			require.NoError(s.t, err)
		}
	}
	return out, len(segs)
}
