package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"handoff/internal/domain"
	"handoff/internal/pgstore"
	"handoff/internal/segment"
	"handoff/internal/storage"
	"handoff/internal/testenv"
)

// tableDB is a metadata database with the specs of supervisors wiki
// (datasource wiki_ds, hour segments), fresh (fresh_ds, nothing published)
// and off (off_ds, ioConfig.icebergTable false), and deep storage holding
// two segments of wiki_ds and one of off_ds published without a table.
func tableDB(t *testing.T) (url, deep string) {
	t.Helper()
	url, deep = testenv.Postgres(t), t.TempDir()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	s := pgstore.New(pool)
	require.NoError(t, s.Migrate(ctx))
	for id, spec := range map[string]string{
		"wiki":  `{"id": "wiki", "dataSchema": {"dataSource": "wiki_ds", "granularitySpec": {"segmentGranularity": "hour"}}, "ioConfig": {"topic": "wiki"}}`,
		"fresh": `{"id": "fresh", "dataSchema": {"dataSource": "fresh_ds"}, "ioConfig": {"topic": "fresh", "icebergTable": true}}`,
		"off":   `{"id": "off", "dataSchema": {"dataSource": "off_ds"}, "ioConfig": {"topic": "off", "icebergTable": false}}`,
	} {
		_, _, err := s.RecordSpec(ctx, id, json.RawMessage(spec))
		require.NoError(t, err)
	}
	store, err := storage.NewLocal(deep)
	require.NoError(t, err)
	t0 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	schema := domain.Schema{Dims: []domain.Column{{Name: "page", Type: domain.TypeString}},
		Metrics: []domain.MetricSpec{{Type: domain.MetricCount, Name: "edits"}}}
	publish := func(sup, ds string, group, id, hour, rows int, start, end domain.Offsets) {
		name := domain.SequenceName(sup, group, id)
		key := fmt.Sprintf("%s/%s.parquet", ds, name)
		var rs []domain.Row
		for i := range rows {
			rs = append(rs, domain.Row{Time: t0.Add(time.Duration(hour)*time.Hour + time.Duration(i)*time.Second).UnixMilli(),
				Dims: []domain.Value{domain.StringValue("p")}, Metrics: []domain.Value{domain.LongValue(1)}})
		}
		info, err := segment.WriteFile(filepath.Join(deep, filepath.FromSlash(key)), schema, rs)
		require.NoError(t, err)
		iv := t0.Add(time.Duration(hour) * time.Hour)
		_, err = s.Publish(ctx, pgstore.Publication{
			SequenceName: name, SupervisorID: sup, DataSource: ds, Topic: sup, Group: group, SequenceID: id,
			Start: start, End: end, Rows: info.Rows,
			Segments: []pgstore.Segment{{ID: ds + "_" + name, DataSource: ds, IntervalStart: iv, IntervalEnd: iv.Add(time.Hour),
				Version: "v", SequenceName: name, Rows: info.Rows, Bytes: info.Bytes, URI: store.URI(key), Checksum: info.Checksum}},
		})
		require.NoError(t, err)
	}
	publish("wiki", "wiki_ds", 0, 0, 0, 30, domain.Offsets{domain.P(0): 0}, domain.Offsets{domain.P(0): 30})
	publish("wiki", "wiki_ds", 1, 0, 1, 20, domain.Offsets{domain.P(1): 0}, domain.Offsets{domain.P(1): 20})
	publish("off", "off_ds", 0, 0, 0, 5, domain.Offsets{domain.P(0): 0}, domain.Offsets{domain.P(0): 5})
	return url, deep
}

// noTemporal lets a command find Temporal unreachable without failing the
// test: only naming the running supervisors of an unknown id asks it.
func noTemporal(context.Context, client.Options) (client.Client, error) {
	return nil, errors.New("test: no Temporal")
}

func TestTableBeforeAndAfterCreate(t *testing.T) {
	t.Parallel()
	url, deep := tableDB(t)
	env := map[string]string{"DATABASE_URL": url, "HANDOFF_DEEP_STORAGE": deep}

	r := runCLI(t, runOpts{env: env}, "table", "wiki")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, "no table handoff.wiki_ds in catalog handoff (warehouse file://"+deep+"): datasource wiki_ds has 2 used segments (50 rows)"+
		" published without a table: run `starter table create wiki_ds` to build it from them\n", r.stdout)
	r = runCLI(t, runOpts{env: env}, "table", "--datasource", "wiki_ds", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var before tableResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &before))
	assert.False(t, before.Exists)
	assert.Equal(t, reasonSegmentsNoTable, before.Reason)
	assert.EqualValues(t, 2, before.UsedSegments)

	r = runCLI(t, runOpts{env: env}, "table", "create", "wiki_ds")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Regexp(t, `^created table handoff.wiki_ds from 2 segments: 50 rows, \d+\.\d KiB \(\d+ bytes\), partitioned for segmentGranularity hour
snapshot \d+ carries the stored offsets: topic wiki p0:30,p1:20
metadata file://`+deep+`/wiki_ds/metadata/00001-[0-9a-f-]+\.metadata\.json
publishes from now on commit to it; `+"`starter table --datasource wiki_ds`"+` shows it
$`, r.stdout)
	r = runCLI(t, runOpts{env: env}, "table", "create", "wiki_ds")
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, "the datasource already has a table")
	assert.Contains(t, r.stderr, "`starter table --datasource wiki_ds` shows it")

	r = runCLI(t, runOpts{env: env}, "table", "wiki")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Regexp(t, `^table         handoff.wiki_ds in catalog handoff
warehouse     file://`+deep+`
location      file://`+deep+`/wiki_ds
metadata      file://`+deep+`/wiki_ds/metadata/00001-[0-9a-f-]+\.metadata\.json \(format v2\)
snapshot      \d+, 1 snapshot kept
rows          50 in 2 data files, .* \(\d+ bytes\)
segments      2 used segments, 50 rows
partitioning  hour\(__time\) as __time_hour, for segmentGranularity hour

COLUMN  FIELD ID  TYPE         REQUIRED  DOC
__time  1         timestamptz  yes       row time \(UTC\); truncated to queryGranularity when rollup is on
page    2         string       no        dimension
edits   3         long         no        metric count

last 1 snapshot, newest first:
TIME +SNAPSHOT +SEQUENCE +GROUP +START +END +ADDED ROWS
\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ +\d+ +\(from 2 segments\) +- +- +p0:30,p1:20 +50
$`, r.stdout)

	r = runCLI(t, runOpts{env: env}, "table", "wiki", "-o", "json", "--snapshots", "0")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var after map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &after))
	assert.Equal(t, true, after["exists"])
	assert.Equal(t, "wiki", after["supervisor"])
	assert.Equal(t, "handoff.wiki_ds", after["identifier"])
	assert.EqualValues(t, 50, after["rows"])
	assert.EqualValues(t, 2, after["dataFiles"])
	assert.Nil(t, after["recentSnapshots"], "--snapshots 0")
	assert.EqualValues(t, 1, after["snapshots"])
	assert.Len(t, after["columns"], 3)
}

func TestTableSaysWhyThereIsNone(t *testing.T) {
	t.Parallel()
	url, deep := tableDB(t)
	env := map[string]string{"DATABASE_URL": url}

	r := runCLI(t, runOpts{env: env}, "table", "fresh", "--deep-storage", deep)
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "no table handoff.fresh_ds in catalog handoff")
	assert.Contains(t, r.stdout, "datasource fresh_ds has published nothing yet: its first publish creates the table\n")

	r = runCLI(t, runOpts{env: env}, "table", "--datasource", "off_ds", "--deep-storage", deep, "--iceberg-namespace", "lake")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "no table lake.off_ds in catalog handoff")
	assert.Contains(t, r.stdout, "supervisor off's spec (version 1) sets ioConfig.icebergTable false: its publishes commit no table;"+
		" 1 segment published without one: turn it on (starter update), then run `starter table create off_ds`\n")
	r = runCLI(t, runOpts{env: env}, "table", "off", "--deep-storage", deep, "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var res tableResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res))
	assert.Equal(t, reasonTableOff, res.Reason)

	r = runCLI(t, runOpts{env: env}, "table", "create", "off_ds", "--deep-storage", deep)
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, "supervisor off's spec (version 1) sets ioConfig.icebergTable false: its publishes would not reach the table")

	r = runCLI(t, runOpts{env: env}, "table", "create", "nothing_ds", "--deep-storage", deep)
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, "its first publish creates the table")

	r = runCLI(t, runOpts{env: env, dial: noTemporal}, "table", "nosuch", "--deep-storage", deep)
	assert.Equal(t, ExitNotFound, r.code, r.stderr)
	assert.Contains(t, r.stderr, `no supervisor "nosuch"`)
}

// Deep storage other than the worker's: the segments are outside it, and
// create says so and makes nothing.
func TestTableCreateNeedsTheWorkersDeepStorage(t *testing.T) {
	t.Parallel()
	url, _ := tableDB(t)
	env := map[string]string{"DATABASE_URL": url, "HANDOFF_DEEP_STORAGE": t.TempDir()}
	r := runCLI(t, runOpts{env: env}, "table", "create", "wiki_ds")
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, "outside deep storage")
	assert.Contains(t, r.stderr, "give the deep storage the worker publishes to")
	r = runCLI(t, runOpts{env: env}, "table", "wiki")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "no table handoff.wiki_ds")
}

func TestTableUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"table"}, "table needs a supervisor ID or --datasource"},
		{[]string{"table", "wiki", "--datasource", "wiki"}, "not both"},
		{[]string{"table", "--datasource", " "}, "--datasource is empty"},
		{[]string{"table", "wiki", "--snapshots", "-1"}, "--snapshots -1"},
		{[]string{"table", "create"}, "create takes one datasource, got 0 arguments"},
		{[]string{"table", "create", "a", "b"}, "got 2 arguments"},
		{[]string{"table", "wiki"}, "no database: set --database-url or DATABASE_URL"},
	} {
		r := runCLI(t, runOpts{}, tc.args...)
		assert.Equal(t, ExitUsage, r.code, "%v: %s", tc.args, r.stderr)
		assert.Contains(t, r.stderr, tc.want, "%v", tc.args)
	}
	url := testenv.Postgres(t)
	for deep, want := range map[string]string{
		"":                  "no deep storage: set --deep-storage or HANDOFF_DEEP_STORAGE",
		"/nonexistent/deep": "deep storage /nonexistent/deep is not a directory here: give the worker's",
		"file:///nope/deep": "deep storage file:///nope/deep is not a directory here",
	} {
		r := runCLI(t, runOpts{}, "table", "--datasource", "wiki", "--database-url", url, "--deep-storage", deep)
		assert.Equal(t, ExitUsage, r.code, "%q: %s", deep, r.stderr)
		assert.Contains(t, r.stderr, want)
	}
	r := runCLI(t, runOpts{}, "table", "--help")
	require.Equal(t, ExitOK, r.code)
	for _, env := range []string{"DATABASE_URL", "HANDOFF_DEEP_STORAGE", "HANDOFF_ICEBERG_CATALOG", "HANDOFF_ICEBERG_NAMESPACE"} {
		assert.Contains(t, r.stdout, "(env "+env+")")
	}
	r = runCLI(t, runOpts{}, "table", "create", "--help")
	require.Equal(t, ExitOK, r.code)
	for _, env := range []string{"HANDOFF_ICEBERG_SNAPSHOT_MAX_AGE", "HANDOFF_ICEBERG_MIN_SNAPSHOTS"} {
		assert.Contains(t, r.stdout, "(env "+env+")")
	}
	assert.True(t, strings.Contains(r.stdout, "starter table create DS"))
}
