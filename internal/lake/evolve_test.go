package lake_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/lake"
)

// A dimension that appears mid-stream becomes a column with a new field
// id; files written before it read null there; the name mapping follows.
func TestNewDimensionAddsAColumn(t *testing.T) {
	t.Parallel()
	e, ctx := newEnv(t, lake.Config{}), context.Background()
	s0 := seq{id: 0, rows: 5, start: domain.Offsets{domain.P(0): 0}, end: domain.Offsets{domain.P(0): 5}}
	wider := testSchema
	wider.Dims = append(append([]domain.Column{}, testSchema.Dims...), domain.Column{Name: "country", Type: domain.TypeString})
	s1 := seq{id: 1, rows: 4, start: domain.Offsets{domain.P(0): 5}, end: domain.Offsets{domain.P(0): 9}, schema: wider}
	_, err := e.store.Publish(ctx, e.write("wiki", s0))
	require.NoError(t, err)
	tbl, err := laketestLoad(e, "wiki")
	require.NoError(t, err)
	lastID := tbl.Metadata().LastColumnID()

	_, err = e.store.Publish(ctx, e.write("wiki", s1))
	require.NoError(t, err)
	e.requireRows("wiki", s0, s1)
	tbl, err = laketestLoad(e, "wiki")
	require.NoError(t, err)
	f, ok := tbl.Schema().FindFieldByName("country")
	require.True(t, ok)
	require.Greater(t, f.ID, lastID)
	require.False(t, f.Required)
	require.Contains(t, tbl.Properties()["schema.name-mapping.default"], `"country"`)

	counts, err := countColumn(e, "wiki", "country")
	require.NoError(t, err)
	require.Equal(t, map[string]int{"": 5, "x": 4}, counts, "old rows null (counted as \"\"), new rows x")
}

// A column whose type changes is refused with an error naming it.
func TestTypeChangeIsRefused(t *testing.T) {
	t.Parallel()
	e, ctx := newEnv(t, lake.Config{}), context.Background()
	_, err := e.lake.Ensure(ctx, "wiki", testSchema, domain.GranularityHour)
	require.NoError(t, err)
	changed := testSchema
	changed.Dims = []domain.Column{{Name: "id", Type: domain.TypeString}, {Name: "page", Type: domain.TypeLong}}
	_, err = e.lake.Ensure(ctx, "wiki", changed, domain.GranularityHour)
	var se *lake.SchemaError
	require.True(t, errors.As(err, &se), "%v", err)
	require.Equal(t, "page", se.Column)
	require.Contains(t, err.Error(), `column "page"`)
	require.NoError(t, e.lake.CheckSchema(ctx, "wiki", testSchema))
	require.ErrorAs(t, e.lake.CheckSchema(ctx, "wiki", changed), &se)
	require.NoError(t, e.lake.CheckSchema(ctx, "nosuchtable", changed), "no table: nothing to conflict with")
}

// A datasource that published segments before it had a table gets none
// by itself: that table would lack them.
func TestDatasourceWithSegmentsIsNotCreatedImplicitly(t *testing.T) {
	t.Parallel()
	e, ctx := newEnv(t, lake.Config{}), context.Background()
	p := e.write("old", seq{id: 0, rows: 3, start: domain.Offsets{domain.P(0): 0}, end: domain.Offsets{domain.P(0): 3}})
	p.Table = nil
	_, err := e.store.Publish(ctx, p)
	require.NoError(t, err)
	_, err = e.pool.Exec(ctx, `DELETE FROM iceberg_tables WHERE table_name = 'old'`)
	require.NoError(t, err)
	_, err = e.lake.Ensure(ctx, "old", testSchema, domain.GranularityHour)
	require.ErrorIs(t, err, lake.ErrNotCreated)
}

// A new segment granularity moves the partition spec: new files go in by
// day, files written by hour keep their spec, and both read.
func TestGranularityChangeRepartitions(t *testing.T) {
	t.Parallel()
	e, ctx := newEnv(t, lake.Config{}), context.Background()
	s0 := seq{id: 0, rows: 6, start: domain.Offsets{domain.P(0): 0}, end: domain.Offsets{domain.P(0): 6}}
	s1 := seq{id: 1, rows: 6, hour: 24, gran: domain.GranularityDay, start: domain.Offsets{domain.P(0): 6}, end: domain.Offsets{domain.P(0): 12}}
	for _, s := range []seq{s0, s1} {
		_, err := e.store.Publish(ctx, e.write("wiki", s))
		require.NoError(t, err)
	}
	e.requireRows("wiki", s0, s1)
	tbl, err := laketestLoad(e, "wiki")
	require.NoError(t, err)
	spec := tbl.Spec()
	require.Equal(t, 1, spec.NumFields())
	require.Equal(t, "day", spec.Field(0).Transform.String())
	require.Len(t, tbl.Metadata().PartitionSpecs(), 2)
	fs, err := tbl.FS(ctx)
	require.NoError(t, err)
	manifests, err := tbl.CurrentSnapshot().Manifests(fs)
	require.NoError(t, err)
	specs := map[int32]bool{}
	for _, m := range manifests {
		specs[m.PartitionSpecID()] = true
	}
	require.Len(t, specs, 2, "each file keeps the spec it was written with")
}
