package lake_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // iceberg-go's S3 IO, to read the table as another engine would
	"github.com/jackc/pgx/v5"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/lake"
	"handoff/internal/lake/laketest"
	"handoff/internal/storage"
)

var withCountry = domain.Schema{
	Dims:    append(append([]domain.Column{}, testSchema.Dims...), domain.Column{Name: "country", Type: domain.TypeString}),
	Metrics: testSchema.Metrics,
}

// A datasource that published segments before it had a table (two in
// MILLIS, one in MICROS with a column more, none with field ids) gets one
// from them: one snapshot holding every row once, as iceberg-go reads it
// through its own SQL catalog (times right in both units, the added
// column null in the files without it), with the stored offsets in its
// summary; publishes then commit to it.
func TestCreateFromSegmentsRegistersOldSegmentsOnce(t *testing.T) {
	t.Parallel()
	e, ctx := newEnv(t, lake.Config{}), context.Background()
	a := oldSeq{seq: seq{id: 0, group: 0, rows: 30, hour: 0, start: domain.Offsets{domain.P(0): 0}, end: domain.Offsets{domain.P(0): 30}}, millis: true}
	b := oldSeq{seq: seq{id: 0, group: 1, rows: 20, hour: 1, start: domain.Offsets{domain.P(1): 0}, end: domain.Offsets{domain.P(1): 20}}, millis: true}
	c := oldSeq{seq: seq{id: 1, group: 0, rows: 10, hour: 2, start: domain.Offsets{domain.P(0): 30}, end: domain.Offsets{domain.P(0): 40}, schema: withCountry}}
	for _, s := range []oldSeq{a, b, c} {
		e.publishOld("old", s)
	}
	_, err := e.lake.Ensure(ctx, "old", testSchema, domain.GranularityHour)
	require.ErrorIs(t, err, lake.ErrNotCreated)

	res, err := e.lake.CreateFromSegments(ctx, "old", domain.GranularityHour)
	require.NoError(t, err)
	require.Equal(t, 3, res.Segments)
	require.EqualValues(t, 60, res.Rows)
	require.Equal(t, 2, res.MillisFiles)
	require.Equal(t, domain.GranularityHour, res.Granularity)
	require.Equal(t, map[string]domain.Offsets{"topic": {domain.P(0): 40, domain.P(1): 20}}, res.Offsets)
	require.NotZero(t, res.SnapshotID)

	e.requireRows("old", a.seq, b.seq, c.seq)
	scan, err := readTable(e, "old")
	require.NoError(t, err)
	stored, err := e.store.Offsets(ctx, "old", "topic")
	require.NoError(t, err)
	require.Equal(t, stored, scan.Offsets)
	require.Equal(t, "3", scan.Summary[lake.SummaryFromSegments])
	require.Equal(t, "topic", scan.Summary[lake.SummaryTopic])
	var names []string
	for _, f := range scan.Schema.Fields() {
		names = append(names, f.Name+":"+f.Type.String())
	}
	require.Equal(t, []string{"__time:timestamptz", "id:string", "page:string", "country:string", "added:long"}, names)

	rows, err := laketest.ReadRows(ctx, e.pool, e.cfg, "old")
	require.NoError(t, err)
	require.Len(t, rows, 60)
	for _, r := range rows {
		id := r["id"].(string)
		var s oldSeq
		for _, o := range []oldSeq{a, b, c} {
			if name := domain.SequenceName("sup", o.group, o.id); len(id) > len(name) && id[:len(name)+1] == name+"-" {
				s = o
			}
		}
		i, err := strconv.Atoi(id[len(domain.SequenceName("sup", s.group, s.id))+1:])
		require.NoError(t, err)
		require.Equal(t, rowTime(s.hour, i), r["__time"], "time of %s", id)
		require.EqualValues(t, i, r["added"], "added of %s", id)
		if s.schema.Dims == nil {
			require.Nil(t, r["country"], "country of %s (its file has no such column)", id)
		} else {
			require.Equal(t, "x", r["country"], "country of %s", id)
		}
	}

	tbl, err := laketestLoad(e, "old")
	require.NoError(t, err)
	require.Len(t, tbl.Metadata().Snapshots(), 1)
	fs, err := tbl.FS(ctx)
	require.NoError(t, err)
	manifests, err := tbl.CurrentSnapshot().Manifests(fs)
	require.NoError(t, err)
	timeField, _ := tbl.Schema().FindFieldByName("__time")
	seen := 0
	for _, m := range manifests {
		entries, err := m.FetchEntries(fs, true)
		require.NoError(t, err)
		for _, en := range entries {
			df := en.DataFile()
			seen++
			hour := map[int64]int{30: 0, 20: 1, 10: 2}[df.Count()]
			require.EqualValues(t, t0.Add(time.Duration(hour)*time.Hour).Unix()/3600, df.Partition()[1000], "hour partition of %s", df.FilePath())
			lower, ok := df.LowerBoundValues()[timeField.ID]
			if hour == 2 { // MICROS: its bounds are Iceberg's
				require.True(t, ok)
				require.Equal(t, rowTime(2, 0).UnixMicro(), int64(binary.LittleEndian.Uint64(lower)))
			} else {
				require.False(t, ok, "a MILLIS file must carry no __time bounds: its statistics are milliseconds")
			}
		}
	}
	require.Equal(t, 3, seen)

	// Publishes go on into the table.
	d := seq{id: 2, group: 0, rows: 5, hour: 3, start: domain.Offsets{domain.P(0): 40}, end: domain.Offsets{domain.P(0): 45}, schema: withCountry}
	_, err = e.store.Publish(ctx, e.write("old", d))
	require.NoError(t, err)
	e.requireRows("old", a.seq, b.seq, c.seq, d)
	scan, err = readTable(e, "old")
	require.NoError(t, err)
	require.Equal(t, domain.Offsets{domain.P(0): 45, domain.P(1): 20}, scan.Offsets)

	_, err = e.lake.CreateFromSegments(ctx, "old", domain.GranularityHour)
	require.ErrorIs(t, err, lake.ErrTableExists)
}

// A table exists already (made by a publish), or nothing was published:
// CreateFromSegments refuses and changes nothing.
func TestCreateFromSegmentsRefuses(t *testing.T) {
	t.Parallel()
	e, ctx := newEnv(t, lake.Config{}), context.Background()
	s0 := seq{id: 0, rows: 5, start: domain.Offsets{domain.P(0): 0}, end: domain.Offsets{domain.P(0): 5}}
	_, err := e.store.Publish(ctx, e.write("wiki", s0))
	require.NoError(t, err)
	_, err = e.lake.CreateFromSegments(ctx, "wiki", domain.GranularityHour)
	require.ErrorIs(t, err, lake.ErrTableExists)
	e.requireRows("wiki", s0)

	_, err = e.lake.CreateFromSegments(ctx, "empty", "")
	require.ErrorIs(t, err, lake.ErrNoSegments)
	_, err = laketestLoad(e, "empty")
	require.Error(t, err, "no table was made")
}

// Segments a day long cannot sit in hour partitions: the table is
// partitioned by day, and the next publish at hour granularity moves the
// spec to hours (older files keep theirs).
func TestCreateFromSegmentsCoarsensPartitioning(t *testing.T) {
	t.Parallel()
	e, ctx := newEnv(t, lake.Config{}), context.Background()
	a := oldSeq{seq: seq{id: 0, rows: 10, start: domain.Offsets{domain.P(0): 0}, end: domain.Offsets{domain.P(0): 10}}, span: 24 * time.Hour}
	e.publishOld("daily", a)
	res, err := e.lake.CreateFromSegments(ctx, "daily", domain.GranularityHour)
	require.NoError(t, err)
	require.Equal(t, domain.GranularityDay, res.Granularity)
	tbl, err := laketestLoad(e, "daily")
	require.NoError(t, err)
	spec := tbl.Spec()
	require.Equal(t, "__time_day", spec.Field(0).Name)

	b := seq{id: 1, rows: 5, hour: 30, start: domain.Offsets{domain.P(0): 10}, end: domain.Offsets{domain.P(0): 15}}
	_, err = e.store.Publish(ctx, e.write("daily", b))
	require.NoError(t, err)
	tbl, err = laketestLoad(e, "daily")
	require.NoError(t, err)
	spec = tbl.Spec()
	require.Equal(t, "__time_hour", spec.Field(0).Name)
	e.requireRows("daily", a.seq, b)
}

// The table is created between a publish's Ensure (ErrNotCreated: it
// goes without a table) and its commit: with NoTableInTx as its table
// half the publish fails and commits nothing, and its retry commits to the
// table, so no segment is left out of it.
func TestPublishPreparedWithoutTableRetriesOnceCreated(t *testing.T) {
	t.Parallel()
	e, ctx := newEnv(t, lake.Config{}), context.Background()
	a := oldSeq{seq: seq{id: 0, rows: 10, start: domain.Offsets{domain.P(0): 0}, end: domain.Offsets{domain.P(0): 10}}}
	e.publishOld("ds", a)
	_, err := e.lake.Ensure(ctx, "ds", testSchema, domain.GranularityHour)
	require.ErrorIs(t, err, lake.ErrNotCreated)

	b := seq{id: 1, rows: 5, hour: 1, start: domain.Offsets{domain.P(0): 10}, end: domain.Offsets{domain.P(0): 15}}
	_, err = e.lake.CreateFromSegments(ctx, "ds", domain.GranularityHour)
	require.NoError(t, err)
	p := e.write("ds", b) // its Ensure now finds the table; prepared before, it would have gone without
	p.Table = func(ctx context.Context, tx pgx.Tx, _ domain.Offsets) error { return e.lake.NoTableInTx(ctx, tx, "ds") }
	_, err = e.store.Publish(ctx, p)
	require.ErrorIs(t, err, lake.ErrCreatedMeanwhile)
	stored, err := e.store.Offsets(ctx, "ds", "topic")
	require.NoError(t, err)
	require.Equal(t, domain.Offsets{domain.P(0): 10}, stored, "the failed publish moved nothing")

	_, err = e.store.Publish(ctx, e.write("ds", b))
	require.NoError(t, err)
	e.requireRows("ds", a.seq, b)
}

// On S3 deep storage each segment is downloaded to read its footer; the
// table's files and metadata are in the bucket, and iceberg-go's own S3
// IO reads every row once.
func TestCreateFromSegmentsOnS3(t *testing.T) {
	t.Parallel()
	e, ctx := newEnv(t, lake.Config{}), context.Background()
	backend := s3mem.New()
	require.NoError(t, backend.CreateBucket("handoff"))
	srv := httptest.NewServer(gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog())).Server())
	t.Cleanup(srv.Close)
	deep, err := storage.Open(ctx, "s3://handoff/segments", storage.WithS3(storage.S3Config{
		Endpoint: srv.URL, Region: "us-east-1", AccessKeyID: "test", SecretAccessKey: "test-secret"}))
	require.NoError(t, err)
	a := oldSeq{seq: seq{id: 0, rows: 30, start: domain.Offsets{domain.P(0): 0}, end: domain.Offsets{domain.P(0): 30}}, millis: true}
	b := oldSeq{seq: seq{id: 1, rows: 20, hour: 1, start: domain.Offsets{domain.P(0): 30}, end: domain.Offsets{domain.P(0): 50}}}
	e.publishOldTo(deep, "s3ds", a)
	e.publishOldTo(deep, "s3ds", b)

	// Local deep storage does not hold these segments: named, nothing made.
	_, err = e.lake.CreateFromSegments(ctx, "s3ds", "")
	require.ErrorContains(t, err, "outside deep storage")

	l := lake.New(e.pool, deep, lake.Config{})
	res, err := l.CreateFromSegments(ctx, "s3ds", "")
	require.NoError(t, err)
	require.EqualValues(t, 50, res.Rows)
	require.True(t, strings.HasPrefix(res.MetadataLocation, "s3://handoff/segments/s3ds/metadata/"), res.MetadataLocation)
	scan, err := laketest.Read(ctx, e.pool, e.cfg, "s3ds", "id", iceberg.Properties{
		icebergio.S3EndpointURL: srv.URL, icebergio.S3Region: "us-east-1",
		icebergio.S3AccessKeyID: "test", icebergio.S3SecretAccessKey: "test-secret"})
	require.NoError(t, err)
	require.EqualValues(t, 50, scan.Rows)
	require.Len(t, scan.IDs, 50)
	require.Equal(t, domain.Offsets{domain.P(0): 50}, scan.Offsets)
}

// Two creates race: one builds the table, the other finds it under the
// lock and refuses; the table has one snapshot holding every row once.
func TestRacingCreatesBuildOneTable(t *testing.T) {
	t.Parallel()
	e, ctx := newEnv(t, lake.Config{}), context.Background()
	a := oldSeq{seq: seq{id: 0, rows: 40, start: domain.Offsets{domain.P(0): 0}, end: domain.Offsets{domain.P(0): 40}}, millis: true}
	b := oldSeq{seq: seq{id: 1, rows: 30, hour: 1, start: domain.Offsets{domain.P(0): 40}, end: domain.Offsets{domain.P(0): 70}}}
	e.publishOld("race", a)
	e.publishOld("race", b)
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := e.lake.CreateFromSegments(ctx, "race", domain.GranularityHour)
			errs <- err
		}()
	}
	var ok, exists int
	for range 2 {
		switch err := <-errs; {
		case err == nil:
			ok++
		case errors.Is(err, lake.ErrTableExists):
			exists++
		default:
			t.Fatal(err)
		}
	}
	require.Equal(t, 1, ok)
	require.Equal(t, 1, exists)
	e.requireRows("race", a.seq, b.seq)
	tbl, err := laketestLoad(e, "race")
	require.NoError(t, err)
	require.Len(t, tbl.Metadata().Snapshots(), 1)
}
