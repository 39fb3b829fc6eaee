package activities

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"handoff/internal/domain"
	"handoff/internal/lake"
	"handoff/internal/pgstore"
	"handoff/internal/protocol"
	"handoff/internal/storage"
	"handoff/internal/testenv"
)

// A sequence whose column the table holds with another type fails its
// publish for good, as a top-level non-retryable TableSchema error
// (Temporal looks at the top only): a retry would meet the same table.
func TestTableSchemaConflictIsNotRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, testenv.Postgres(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	require.NoError(t, pgstore.New(pool).Migrate(ctx))
	deep, err := storage.NewLocal(t.TempDir())
	require.NoError(t, err)
	a := &Activities{Tables: lake.New(pool, deep, lake.Config{})}
	run := &running{log: slog.New(slog.DiscardHandler)}
	in := protocol.PublishInput{Spec: domain.Spec{ID: "sup", DataSchema: domain.DataSchema{DataSource: "ds",
		GranularitySpec: domain.GranularitySpec{SegmentGranularity: domain.GranularityHour}}}}

	asString := domain.Schema{Dims: []domain.Column{{Name: "page", Type: domain.TypeString}}}
	ids, awaited, err := a.tableFieldIDs(ctx, in, asString, run)
	require.NoError(t, err)
	require.False(t, awaited)
	require.Contains(t, ids, "page")

	asLong := domain.Schema{Dims: []domain.Column{{Name: "page", Type: domain.TypeLong}}}
	_, _, err = a.tableFieldIDs(ctx, in, asLong, run)
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "%v", err)
	require.Same(t, appErr, err, "the application error must be the top-level error")
	require.True(t, appErr.NonRetryable())
	require.Equal(t, domain.ErrTableSchema, appErr.Type())
	require.Contains(t, err.Error(), `column "page"`)

	off := false
	in.Spec.IOConfig.IcebergTable = &off
	ids, awaited, err = a.tableFieldIDs(ctx, in, asLong, run)
	require.NoError(t, err, "with the table off the spec's columns are its own")
	require.Nil(t, ids)
	require.False(t, awaited)
}
