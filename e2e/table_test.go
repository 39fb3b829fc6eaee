package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/activities"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/internal/lake"
	"handoff/internal/lake/laketest"
	"handoff/workflows"
)

// A dimension added mid-stream by a spec update becomes a column of the
// datasource's table: the rows published before it read null there, the
// ones after it have values, and every event is in the table once. A
// change of a column's type is refused by the update, naming the column.
func TestTableEvolvesWithTheSpec(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	spec := s.spec(1)
	spec.DataSchema.DimensionsSpec.Dimensions = []domain.DimensionSpec{{Name: "id"}, {Name: "page"}, {Name: "user"}}
	spec.DataSchema.MetricsSpec = []domain.MetricSpec{{Type: domain.MetricCount, Name: "count"}, {Type: domain.MetricLongSum, Name: "delta", FieldName: "delta"}}
	gen := eventgen.New(s.name, 29)
	s.produce(gen, 2000)
	run := s.startSupervisor(spec)
	s.waitCaughtUp(spec)
	s.checkpointUntilPublished(spec, 0)
	require.Eventually(t, func() bool {
		stored, err := s.store.Offsets(context.Background(), spec.DataSchema.DataSource, spec.IOConfig.Topic)
		require.NoError(t, err)
		var n int64
		for _, o := range stored {
			n += o
		}
		return n == 2000
	}, time.Minute, 200*time.Millisecond, "the first 2,000 events were not published")

	wider := spec
	wider.DataSchema.DimensionsSpec.Dimensions = append(append([]domain.DimensionSpec{}, spec.DataSchema.DimensionsSpec.Dimensions...), domain.DimensionSpec{Name: "country"})
	var res workflows.UpdateSpecResult
	require.NoError(t, s.update(spec, workflows.UpdateSpec, workflows.UpdateSpecRequest{Spec: wider}, &res))
	require.True(t, res.Changed)
	require.Eventually(t, func() bool {
		st := s.status(spec)
		return !st.PendingSpec && len(st.Spec.DataSchema.DimensionsSpec.Dimensions) == 4
	}, time.Minute, 200*time.Millisecond, "the new dimension did not apply")
	s.produce(gen, 1000)
	s.waitCaughtUp(wider)

	retyped := wider
	retyped.DataSchema.DimensionsSpec.Dimensions = []domain.DimensionSpec{{Name: "id"}, {Name: "page", Type: domain.TypeLong}, {Name: "user"}, {Name: "country"}}
	err := s.update(spec, workflows.UpdateSpec, workflows.UpdateSpecRequest{Spec: retyped}, &res)
	require.Error(t, err, "a column's type change must be refused")
	require.Contains(t, err.Error(), `column "page"`)

	s.stopAndWait(wider, run)
	s.requireExactlyOnce(wider, gen.RunID, 3000)

	scan, err := laketest.Read(context.Background(), s.store.Pool(), lake.Config{}, wider.DataSchema.DataSource, "country")
	require.NoError(t, err)
	require.Equal(t, 2000, scan.IDs[""], "rows published before the column existed read null")
	var after int
	for c, n := range scan.IDs {
		if c != "" {
			after += n
		}
	}
	require.Equal(t, 1000, after, "rows published after it have a country")
	f, ok := scan.Schema.FindFieldByName("country")
	require.True(t, ok)
	require.False(t, f.Required)
}
