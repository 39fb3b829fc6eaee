package e2e

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // iceberg-go's S3 IO, to read the table as another engine would
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"handoff/activities"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/internal/kafka"
	"handoff/internal/kafkadev"
	"handoff/internal/lake"
	"handoff/internal/lake/laketest"
	"handoff/internal/pgstore"
	"handoff/internal/segment"
	"handoff/internal/storage"
	"handoff/internal/testenv"
	"handoff/workflows"
)

// TestExactlyOnceToS3 runs a real ingestion whose deep storage and
// staging are an S3 bucket (an in-process S3 server), opened as the worker
// opens them, with storage.Open and s3:// URIs: every event is in exactly
// one segment object, every object under the segments prefix is a
// published segment, no staging object is left, and the stored offsets are
// the partitions' ends.
func TestExactlyOnceToS3(t *testing.T) {
	t.Parallel()
	s, deep, staging, s3URL := newS3Stack(t, 3)
	spec := s.spec(2)
	gen := eventgen.New(s.name, 9)
	const wave = 4000

	s.produce(gen, wave)
	run := s.startSupervisor(spec)
	n := s.checkpointUntilPublished(spec, 0)
	s.produce(gen, wave)
	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)
	require.Greater(t, s.publishedSequences(spec.DataSchema.DataSource), n, "stop must publish the last sequences")

	seen, uris := s3IDCounts(t, s, deep, spec)
	for _, u := range uris {
		require.True(t, strings.HasPrefix(u, "s3://handoff/segments/"), "segment URI %s is not in the bucket's prefix", u)
	}
	keys, err := deep.List(context.Background(), "")
	require.NoError(t, err)
	var listed []string
	metadata := 0
	for _, k := range keys {
		if strings.HasPrefix(k, spec.DataSchema.DataSource+"/metadata/") {
			metadata++ // the datasource's Iceberg table metadata
			continue
		}
		listed = append(listed, deep.URI(k))
	}
	require.NotZero(t, metadata, "the table's metadata lives beside the segments")
	slices.Sort(uris)
	require.Equal(t, uris, listed, "the bucket must hold exactly the published segments")
	requireEachOnce(t, seen, gen.RunID, 2*wave)
	left, err := staging.List(context.Background(), "")
	require.NoError(t, err)
	require.Empty(t, left, "every staging chunk is deleted once its sequence is published")

	stored, err := s.store.Offsets(context.Background(), spec.DataSchema.DataSource, spec.IOConfig.Topic)
	require.NoError(t, err)
	require.Equal(t, s.latest(spec), stored, "stored offsets must be each partition's end")

	// iceberg-go's own S3 IO reads the table from the bucket.
	r, err := laketest.Check(context.Background(), s.store.Pool(), lake.Config{}, spec.DataSchema.DataSource, gen.RunID, 2*wave, stored,
		iceberg.Properties{icebergio.S3EndpointURL: s3URL, icebergio.S3Region: "us-east-1",
			icebergio.S3AccessKeyID: "e2e", icebergio.S3SecretAccessKey: "e2e-secret"})
	require.NoError(t, err, "the datasource read through its Iceberg table")
	for _, f := range r.Scan.Files {
		require.True(t, strings.HasPrefix(f, "s3://handoff/segments/"), "table file %s", f)
	}
}

// newS3Stack is newStack with deep storage in bucket "handoff" under
// prefix "segments" of an in-process S3 server, and staging under
// "staging" of the same bucket; it returns the server's URL too.
func newS3Stack(t *testing.T, partitions int32) (s *stack, deep, staging storage.Store, s3URL string) {
	t.Helper()
	ctx := context.Background()
	name := strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	s = &stack{t: t, name: name, taskQueue: "e2e-" + name}

	backend := s3mem.New()
	require.NoError(t, backend.CreateBucket("handoff"))
	srv := httptest.NewServer(gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog())).Server())
	t.Cleanup(srv.Close)
	s3cfg := storage.WithS3(storage.S3Config{
		Endpoint: srv.URL, Region: "us-east-1", AccessKeyID: "e2e", SecretAccessKey: "e2e-secret",
	})
	deep, err := storage.Open(ctx, "s3://handoff/segments", s3cfg)
	require.NoError(t, err)
	require.IsType(t, &storage.S3{}, deep)
	staging, err = storage.Open(ctx, "s3://handoff/staging", s3cfg)
	require.NoError(t, err)

	broker, err := kafkadev.Start(ctx, "127.0.0.1:0", map[string]int32{name: partitions})
	require.NoError(t, err)
	t.Cleanup(broker.Close)
	s.broker, s.brokers = broker, broker.Addrs()

	pool, err := pgxpool.New(ctx, testenv.Postgres(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	s.store = pgstore.New(pool)
	require.NoError(t, s.store.Migrate(ctx))
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s.temporal, err = client.Dial(client.Options{HostPort: testenv.Temporal(t), Logger: tlog.NewStructuredLogger(log)})
	require.NoError(t, err)
	t.Cleanup(s.temporal.Close)
	kc, err := kafka.New(s.brokers)
	require.NoError(t, err)
	t.Cleanup(kc.Close)
	s.acts = &activities.Activities{Kafka: kc, Store: s.store, Deep: deep, Staging: staging, Scratch: t.TempDir(), Temporal: s.temporal, Log: log,
		Wakeups: startWakeups(t, pool, log), Tables: lake.New(pool, deep, lake.Config{})}
	w := worker.New(s.temporal, s.taskQueue, workerOptions)
	workflows.Register(w)
	s.acts.Register(w)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return s, deep, staging, srv.URL
}

// s3IDCounts reads every segment the segments table lists back from the
// bucket and counts each event id; it returns the counts and the URIs.
func s3IDCounts(t *testing.T, s *stack, deep storage.Store, spec domain.Spec) (map[string]int, []string) {
	t.Helper()
	ctx := context.Background()
	segs, err := s.store.Segments(ctx, spec.DataSchema.DataSource)
	require.NoError(t, err)
	require.NotEmpty(t, segs)
	prefix := deep.URI("")
	seen, uris, dir := map[string]int{}, []string{}, t.TempDir()
	for i, seg := range segs {
		key, ok := strings.CutPrefix(seg.URI, prefix)
		require.True(t, ok, "segment %s URI %s is not under %s", seg.ID, seg.URI, prefix)
		uris = append(uris, seg.URI)
		r, err := deep.Open(ctx, key)
		require.NoError(t, err, "segment %s", seg.URI)
		path := filepath.Join(dir, itoa(int64(i))+".parquet")
		f, err := os.Create(path)
		require.NoError(t, err)
		_, err = io.Copy(f, r)
		require.NoError(t, err)
		require.NoError(t, r.Close())
		require.NoError(t, f.Close())

		schema, rows, err := segment.ReadFile(path)
		require.NoError(t, err, "segment %s", seg.URI)
		idCol := slices.IndexFunc(schema.Dims, func(c domain.Column) bool { return c.Name == "id" })
		require.GreaterOrEqual(t, idCol, 0, "segment %s has no id column", seg.URI)
		require.Equal(t, seg.Rows, int64(len(rows)), "segment %s row count", seg.URI)
		for _, row := range rows {
			seen[row.Dim(idCol).S]++
		}
	}
	return seen, uris
}

// requireEachOnce checks that ids runID-0 ... runID-(n-1) were each seen
// once, and nothing else.
func requireEachOnce(t *testing.T, seen map[string]int, runID string, n int64) {
	t.Helper()
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
	require.Empty(t, first(missing), "%d of %d events lost (first ones shown)", len(missing), n)
	require.Empty(t, first(dup), "%d events published more than once", len(dup))
	require.Empty(t, seen, "%d rows that were never produced", len(seen))
}
