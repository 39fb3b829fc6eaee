package lake_test

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/lake"
)

// Each data file carries what engines prune by: its hour partition, and
// per column value counts, null counts and lower/upper bounds (__time in
// microseconds, Iceberg's single-value encoding).
func TestDataFilesCarryPartitionAndColumnStatistics(t *testing.T) {
	t.Parallel()
	e, ctx := newEnv(t, lake.Config{}), context.Background()
	s := seq{id: 0, rows: 10, hour: 5, start: domain.Offsets{domain.P(0): 0}, end: domain.Offsets{domain.P(0): 10}}
	_, err := e.store.Publish(ctx, e.write("wiki", s))
	require.NoError(t, err)

	tbl, err := laketestLoad(e, "wiki")
	require.NoError(t, err)
	fs, err := tbl.FS(ctx)
	require.NoError(t, err)
	manifests, err := tbl.CurrentSnapshot().Manifests(fs)
	require.NoError(t, err)
	require.Len(t, manifests, 1)
	entries, err := manifests[0].FetchEntries(fs, true)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	df := entries[0].DataFile()

	timeField, _ := tbl.Schema().FindFieldByName("__time")
	idField, _ := tbl.Schema().FindFieldByName("id")
	start := t0.Add(5 * time.Hour)
	hours := start.Unix() / 3600
	require.EqualValues(t, 10, df.Count())
	require.EqualValues(t, hours, df.Partition()[1000], "hour partition of %s", start)
	require.EqualValues(t, 10, df.ValueCounts()[timeField.ID])
	require.EqualValues(t, 0, df.NullValueCounts()[idField.ID])
	lower := int64(binary.LittleEndian.Uint64(df.LowerBoundValues()[timeField.ID]))
	upper := int64(binary.LittleEndian.Uint64(df.UpperBoundValues()[timeField.ID]))
	require.Equal(t, start.UnixMicro(), lower)
	require.Equal(t, start.Add(9*time.Second).UnixMicro(), upper)
	require.NotEmpty(t, df.LowerBoundValues()[idField.ID])
}
