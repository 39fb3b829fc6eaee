package lake_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/lake"
	"handoff/internal/lake/laketest"
	"handoff/internal/storage"
)

// Describe says where the table is, what it holds (the live files' rows
// and bytes agree with the segments), its columns and partitioning, and
// the last snapshots newest first with their summaries.
func TestDescribeTable(t *testing.T) {
	t.Parallel()
	e, ctx := newEnv(t, lake.Config{Catalog: "cat", Namespace: "ns"}), context.Background()
	var segBytes int64
	for _, s := range []seq{
		{id: 0, group: 0, rows: 10, start: domain.Offsets{domain.P(0): 0}, end: domain.Offsets{domain.P(0): 10}},
		{id: 1, group: 1, rows: 11, hour: 1, start: domain.Offsets{domain.P(1): 0}, end: domain.Offsets{domain.P(1): 11}},
		{id: 2, group: 0, rows: 12, hour: 2, start: domain.Offsets{domain.P(0): 10}, end: domain.Offsets{domain.P(0): 22}},
	} {
		p := e.write("wiki", s)
		segBytes += p.Segments[0].Bytes
		_, err := e.store.Publish(ctx, p)
		require.NoError(t, err)
	}
	d, err := e.lake.Describe(ctx, "wiki", 2)
	require.NoError(t, err)
	require.True(t, d.Exists)
	require.Equal(t, "ns.wiki", d.Identifier)
	require.Equal(t, "cat", d.Catalog)
	require.Equal(t, e.deep.URI(""), d.Warehouse)
	require.Equal(t, e.deep.URI("wiki"), d.Location)
	require.True(t, strings.HasPrefix(d.MetadataLocation, e.deep.URI("wiki/metadata/00003-")), d.MetadataLocation)
	require.Equal(t, 2, d.FormatVersion)
	require.Equal(t, "hour", d.SegmentGranularity)
	require.EqualValues(t, 10+11+12, d.Rows)
	require.EqualValues(t, d.SegmentRows, d.Rows)
	require.EqualValues(t, 3, d.UsedSegments)
	require.Equal(t, 3, d.DataFiles)
	require.Equal(t, segBytes, d.Bytes)
	require.Equal(t, []lake.ColumnInfo{
		{FieldID: 1, Name: "__time", Type: "timestamptz", Required: true, Doc: "row time (UTC); truncated to queryGranularity when rollup is on"},
		{FieldID: 2, Name: "id", Type: "string", Doc: "dimension"},
		{FieldID: 3, Name: "page", Type: "string", Doc: "dimension"},
		{FieldID: 4, Name: "added", Type: "long", Doc: "metric longSum of added"},
	}, d.Columns)
	require.Equal(t, []lake.PartitionInfo{{FieldID: 1000, Name: "__time_hour", Source: "__time", Transform: "hour"}}, d.Partitioning)
	require.Equal(t, 3, d.Snapshots)
	require.Len(t, d.Recent, 2)
	last := d.Recent[0]
	require.Equal(t, d.CurrentSnapshotID, last.SnapshotID)
	require.Equal(t, domain.SequenceName("sup", 0, 2), last.Sequence)
	require.Equal(t, "append", last.Operation)
	require.EqualValues(t, 12, last.AddedRecords)
	require.EqualValues(t, 33, last.TotalRecords)
	require.Equal(t, domain.Offsets{domain.P(0): 22, domain.P(1): 11}, last.Offsets)
	require.Equal(t, domain.SequenceName("sup", 1, 1), d.Recent[1].Sequence)
	require.False(t, d.Recent[1].Time.After(last.Time))

	all, err := e.lake.Describe(ctx, "wiki", -1)
	require.NoError(t, err)
	require.Len(t, all.Recent, 3)
}

// The summary a worker's publish writes comes back parsed; a table made
// by Ensure whose publish had no table half has no snapshot yet.
func TestDescribeReadsPublishSummaries(t *testing.T) {
	t.Parallel()
	e, ctx := newEnv(t, lake.Config{}), context.Background()
	p := e.write("wiki", seq{id: 0, group: 1, rows: 4, start: domain.Offsets{domain.P(1): 0}, end: domain.Offsets{domain.P(1): 4}})
	p.Table = nil
	_, err := e.store.Publish(ctx, p)
	require.NoError(t, err)
	d, err := e.lake.Describe(ctx, "wiki", 10)
	require.NoError(t, err)
	require.True(t, d.Exists)
	require.Zero(t, d.CurrentSnapshotID)
	require.Empty(t, d.Recent)
	require.EqualValues(t, 4, d.SegmentRows)
	require.Zero(t, d.Rows)

	p = e.write("wiki", seq{id: 1, group: 1, rows: 3, hour: 1, start: domain.Offsets{domain.P(1): 4}, end: domain.Offsets{domain.P(1): 7}})
	footer, err := lake.ReadFooter(laketest.LocalPath(p.Segments[0].URI))
	require.NoError(t, err)
	p.Table = func(ctx context.Context, tx pgx.Tx, after domain.Offsets) error {
		_, err := e.lake.CommitInTx(ctx, tx, lake.Append{DataSource: "wiki", Files: []lake.File{{URI: p.Segments[0].URI, Footer: footer}},
			Summary: map[string]string{
				lake.SummarySupervisor: "sup", lake.SummarySequence: p.SequenceName, lake.SummaryTaskGroup: "1", lake.SummaryTopic: "topic",
				lake.SummaryStartOffsets: `{"1":4}`, lake.SummaryEndOffsets: `{"1":7}`, lake.SummaryOffsets: offsetsJSON(after),
			}})
		return err
	}
	_, err = e.store.Publish(ctx, p)
	require.NoError(t, err)
	d, err = e.lake.Describe(ctx, "wiki", 10)
	require.NoError(t, err)
	require.Len(t, d.Recent, 1)
	one := 1
	got := d.Recent[0]
	got.Time = time.Time{}
	require.Equal(t, lake.SnapshotInfo{
		SnapshotID: d.CurrentSnapshotID, SequenceNumber: 1, Operation: "append", Supervisor: "sup", Sequence: p.SequenceName,
		TaskGroup: &one, Topic: "topic", StartOffsets: domain.Offsets{domain.P(1): 4}, EndOffsets: domain.Offsets{domain.P(1): 7}, Offsets: domain.Offsets{domain.P(1): 7},
		AddedRecords: 3, TotalRecords: 3,
	}, got)
	require.EqualValues(t, 3, d.Rows, "the first segment never reached the table")
	require.EqualValues(t, 7, d.SegmentRows)
}

// No table: Describe says so and counts the segments published without
// one; a table whose metadata is not in the deep storage given is an
// error saying so.
func TestDescribeWithoutTable(t *testing.T) {
	t.Parallel()
	e, ctx := newEnv(t, lake.Config{}), context.Background()
	d, err := e.lake.Describe(ctx, "nothing", 10)
	require.NoError(t, err)
	require.False(t, d.Exists)
	require.Zero(t, d.UsedSegments)
	require.Equal(t, "handoff.nothing", d.Identifier)

	e.publishOld("old", oldSeq{seq: seq{id: 0, rows: 7, start: domain.Offsets{domain.P(0): 0}, end: domain.Offsets{domain.P(0): 7}}, millis: true})
	d, err = e.lake.Describe(ctx, "old", 10)
	require.NoError(t, err)
	require.False(t, d.Exists)
	require.EqualValues(t, 1, d.UsedSegments)
	require.EqualValues(t, 7, d.SegmentRows)

	_, err = e.lake.CreateFromSegments(ctx, "old", "")
	require.NoError(t, err)
	d, err = e.lake.Describe(ctx, "old", 10)
	require.NoError(t, err)
	require.EqualValues(t, 7, d.Rows)
	require.Len(t, d.Recent, 1)
	require.Equal(t, 1, d.Recent[0].FromSegments)
	require.Equal(t, domain.Offsets{domain.P(0): 7}, d.Recent[0].Offsets)
	require.Equal(t, "topic", d.Recent[0].Topic)

	other, err := storage.NewLocal(t.TempDir())
	require.NoError(t, err)
	_, err = lake.New(e.pool, other, lake.Config{}).Describe(ctx, "old", 10)
	require.ErrorContains(t, err, "outside deep storage "+strings.TrimSuffix(other.URI(""), "/")+": give the deep storage the worker publishes to")
}
