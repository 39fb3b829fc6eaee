package lake_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/lake"
)

// A sequence that moved the offsets without a row (it read only
// transaction markers, say) commits a snapshot with no data file whose
// summary carries the moved offsets; the rows stay as they were, and a
// publish with rows after it goes on from it.
func TestPublishWithoutRowsCommitsAnOffsetsOnlySnapshot(t *testing.T) {
	t.Parallel()
	e, ctx := newEnv(t, lake.Config{}), context.Background()
	s0 := seq{id: 0, rows: 30, start: domain.Offsets{domain.P(0): 0}, end: domain.Offsets{domain.P(0): 30}}
	_, err := e.store.Publish(ctx, e.write("wiki", s0))
	require.NoError(t, err)

	empty := e.write("wiki", seq{id: 1, rows: 0, start: domain.Offsets{domain.P(0): 30}, end: domain.Offsets{domain.P(0): 33}})
	empty.Segments, empty.Rows = nil, 0
	empty.Table = func(ctx context.Context, tx pgx.Tx, after domain.Offsets) error {
		_, err := e.lake.CommitInTx(ctx, tx, lake.Append{DataSource: "wiki", Summary: map[string]string{
			lake.SummarySequence: empty.SequenceName, lake.SummaryOffsets: offsetsJSON(after)}})
		return err
	}
	_, err = e.store.Publish(ctx, empty)
	require.NoError(t, err)

	e.requireRows("wiki", s0)
	scan, err := readTable(e, "wiki")
	require.NoError(t, err)
	require.Equal(t, domain.Offsets{domain.P(0): 33}, scan.Offsets, "the current snapshot carries the stored offsets")
	require.Equal(t, empty.SequenceName, scan.Summary[lake.SummarySequence])
	require.Equal(t, "30", scan.Summary["total-records"])
	require.Equal(t, "0", scan.Summary["added-data-files"])

	tbl, err := laketestLoad(e, "wiki")
	require.NoError(t, err)
	snaps := tbl.Metadata().Snapshots()
	require.Len(t, snaps, 2)
	require.NotNil(t, snaps[1].ParentSnapshotID)
	require.Equal(t, snaps[0].SnapshotID, *snaps[1].ParentSnapshotID)
	require.Greater(t, snaps[1].SequenceNumber, snaps[0].SequenceNumber)

	s2 := seq{id: 2, rows: 5, hour: 1, start: domain.Offsets{domain.P(0): 33}, end: domain.Offsets{domain.P(0): 38}}
	_, err = e.store.Publish(ctx, e.write("wiki", s2))
	require.NoError(t, err)
	e.requireRows("wiki", s0, s2)
	scan, err = readTable(e, "wiki")
	require.NoError(t, err)
	require.Equal(t, domain.Offsets{domain.P(0): 38}, scan.Offsets)
}
