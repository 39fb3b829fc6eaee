package lake_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/lake"
	"handoff/internal/lake/laketest"
	"handoff/internal/pgstore"
	"handoff/internal/segment"
	"handoff/internal/storage"
	"handoff/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// env is a metadata store, local deep storage and the tables over them.
type env struct {
	t     *testing.T
	pool  *pgxpool.Pool
	store *pgstore.Store
	deep  *storage.Local
	lake  *lake.Lake
	cfg   lake.Config
}

func newEnv(t *testing.T, cfg lake.Config) *env {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), testenv.Postgres(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	store := pgstore.New(pool)
	require.NoError(t, store.Migrate(context.Background()))
	deep, err := storage.NewLocal(t.TempDir())
	require.NoError(t, err)
	return &env{t: t, pool: pool, store: store, deep: deep, lake: lake.New(pool, deep, cfg), cfg: cfg}
}

var testSchema = domain.Schema{
	Dims:    []domain.Column{{Name: "id", Type: domain.TypeString}, {Name: "page", Type: domain.TypeString}},
	Metrics: []domain.MetricSpec{{Type: "longSum", Name: "added", FieldName: "added"}},
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// seq is one sequence to publish: rows id <name>-0 ... at hour hour.
type seq struct {
	id     int
	group  int
	rows   int
	hour   int
	start  domain.Offsets
	end    domain.Offsets
	schema domain.Schema
	gran   domain.Granularity // default hour
}

// write puts the sequence's segment in deep storage as the publish
// activity does (field ids from Ensure) and returns its publication, the
// table half included.
func (e *env) write(ds string, s seq) pgstore.Publication {
	e.t.Helper()
	ctx := context.Background()
	schema := s.schema
	if schema.Dims == nil {
		schema = testSchema
	}
	gran := s.gran
	if gran == "" {
		gran = domain.GranularityHour
	}
	ids, err := e.lake.Ensure(ctx, ds, schema, gran)
	require.NoError(e.t, err)
	name := domain.SequenceName("sup", s.group, s.id)
	start := t0.Add(time.Duration(s.hour) * time.Hour)
	path := filepath.Join(e.t.TempDir(), "seg.parquet")
	f, err := os.Create(path)
	require.NoError(e.t, err)
	w, err := segment.NewWriterWithFieldIDs(f, schema, ids)
	require.NoError(e.t, err)
	for i := range s.rows {
		dims := []domain.Value{domain.StringValue(name + "-" + strconv.Itoa(i)), domain.StringValue("p")}
		for range len(schema.Dims) - 2 {
			dims = append(dims, domain.StringValue("x"))
		}
		require.NoError(e.t, w.Write(domain.Row{Time: start.Add(time.Duration(i) * time.Second).UnixMilli(),
			Dims: dims, Metrics: []domain.Value{domain.LongValue(int64(i))}}))
	}
	info, err := w.Close()
	require.NoError(e.t, err)
	require.NoError(e.t, f.Close())
	footer, err := lake.ReadFooter(path)
	require.NoError(e.t, err)
	key := fmt.Sprintf("%s/%s/%s.parquet", ds, start.Format("20060102T15"), name)
	b, err := os.ReadFile(path)
	require.NoError(e.t, err)
	require.NoError(e.t, e.deep.Put(ctx, key, func(w io.Writer) error { _, err := w.Write(b); return err }))
	uri := e.deep.URI(key)
	files := []lake.File{{URI: uri, Footer: footer}}
	return pgstore.Publication{
		SequenceName: name, SupervisorID: "sup", DataSource: ds, Topic: "topic", Group: s.group, SequenceID: s.id,
		Start: s.start, End: s.end, Rows: info.Rows,
		Segments: []pgstore.Segment{{ID: ds + "_" + name, DataSource: ds, IntervalStart: start, IntervalEnd: start.Add(time.Hour),
			Version: name, SequenceName: name, Rows: info.Rows, Bytes: info.Bytes, URI: uri, Checksum: info.Checksum}},
		Table: func(ctx context.Context, tx pgx.Tx, after domain.Offsets) error {
			_, err := e.lake.CommitInTx(ctx, tx, lake.Append{DataSource: ds, Files: files, Summary: map[string]string{
				lake.SummarySequence: name, lake.SummaryOffsets: offsetsJSON(after)}})
			return err
		},
	}
}

func offsetsJSON(o domain.Offsets) string {
	b, _ := json.Marshal(o)
	return string(b)
}

// laketestLoad opens the table through iceberg-go's own SQL catalog.
func laketestLoad(e *env, ds string) (*table.Table, error) {
	return laketest.Load(context.Background(), e.pool, e.cfg, ds)
}

// readTable scans the table through iceberg-go's own SQL catalog.
func readTable(e *env, ds string) (*laketest.Scan, error) {
	return laketest.Read(context.Background(), e.pool, e.cfg, ds, "id")
}

// requireRows checks through iceberg-go's own SQL catalog that the table
// holds exactly the rows of seqs, once each.
func (e *env) requireRows(ds string, seqs ...seq) {
	e.t.Helper()
	scan, err := readTable(e, ds)
	require.NoError(e.t, err)
	var want int64
	for _, s := range seqs {
		name := domain.SequenceName("sup", s.group, s.id)
		for i := range s.rows {
			id := name + "-" + strconv.Itoa(i)
			require.Equal(e.t, 1, scan.IDs[id], "row %s", id)
			delete(scan.IDs, id)
		}
		want += int64(s.rows)
	}
	require.Empty(e.t, scan.IDs, "rows never published")
	require.Equal(e.t, want, scan.Rows)
	require.Empty(e.t, scan.SharedFiles)
}

// countColumn counts the values of a string column through iceberg-go.
func countColumn(e *env, ds, col string) (map[string]int, error) {
	scan, err := laketest.Read(context.Background(), e.pool, e.cfg, ds, col)
	if err != nil {
		return nil, err
	}
	return scan.IDs, nil
}
