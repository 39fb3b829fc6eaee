package cli

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"handoff/internal/domain"
	"handoff/internal/pgstore"
	"handoff/workflows"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// segmentsDB is specsDB (supervisor orders writes datasource orders_ds) with
// three segments of orders_ds published by two sequences, and one of
// other_ds.
func segmentsDB(t *testing.T) string {
	t.Helper()
	url := specsDB(t)
	pool, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	s := pgstore.New(pool)
	seg := func(id, ds, start, end, seq string, rows, bytes int64) pgstore.Segment {
		return pgstore.Segment{
			ID: id, DataSource: ds, IntervalStart: utc(start), IntervalEnd: utc(end), Version: "2024-05-03T00:00:00Z",
			SequenceName: seq, Rows: rows, Bytes: bytes, URI: "file:///deep/" + ds + "/" + id + ".parquet", Checksum: "sha256:" + id,
		}
	}
	for _, p := range []pgstore.Publication{{
		SequenceName: "orders_0_1", SupervisorID: "orders", DataSource: "orders_ds", Topic: "orders", Group: 0, SequenceID: 1,
		Start: domain.Offsets{domain.P(0): 0}, End: domain.Offsets{domain.P(0): 350}, Rows: 350,
		Segments: []pgstore.Segment{
			seg("s1", "orders_ds", "2024-05-01T01:00:00Z", "2024-05-01T02:00:00Z", "orders_0_1", 250, 1572864),
			seg("s0", "orders_ds", "2024-05-01T00:00:00Z", "2024-05-01T01:00:00Z", "orders_0_1", 100, 2048),
		},
	}, {
		SequenceName: "orders_0_2", SupervisorID: "orders", DataSource: "orders_ds", Topic: "orders", Group: 0, SequenceID: 2,
		Start: domain.Offsets{domain.P(0): 350}, End: domain.Offsets{domain.P(0): 357}, Rows: 7,
		Segments: []pgstore.Segment{
			seg("s2", "orders_ds", "2024-05-02T00:00:00Z", "2024-05-03T00:00:00Z", "orders_0_2", 7, 500),
		},
	}, {
		SequenceName: "other_0_1", SupervisorID: "other", DataSource: "other_ds", Topic: "other", Group: 0, SequenceID: 1,
		Start: domain.Offsets{domain.P(0): 0}, End: domain.Offsets{domain.P(0): 5}, Rows: 5,
		Segments: []pgstore.Segment{
			seg("o1", "other_ds", "2024-05-01T10:15:30.5Z", "2024-05-01T10:20:00Z", "other_0_1", 5, 100),
		},
	}} {
		_, err := s.Publish(context.Background(), p)
		require.NoError(t, err)
	}
	return url
}

const ordersSegmentsText = `INTERVAL                  ROWS  SIZE     SEQUENCE    URI
2024-05-01T00:00Z/01:00Z  100   2.0 KiB  orders_0_1  file:///deep/orders_ds/s0.parquet
2024-05-01T01:00Z/02:00Z  250   1.5 MiB  orders_0_1  file:///deep/orders_ds/s1.parquet
2024-05-02/2024-05-03     7     500 B    orders_0_2  file:///deep/orders_ds/s2.parquet
total: 3 segments, 357 rows, 1.5 MiB (1575412 bytes) in datasource orders_ds
`

func TestSegmentsOfDataSource(t *testing.T) {
	t.Parallel()
	url := segmentsDB(t)

	// --datasource needs no Temporal: the default test dial fails the test.
	r := runCLI(t, runOpts{}, "segments", "--datasource", "orders_ds", "--database-url", url)
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, ordersSegmentsText, r.stdout)

	r = runCLI(t, runOpts{env: map[string]string{"DATABASE_URL": url}}, "segments", "--datasource", "other_ds")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, `INTERVAL                       ROWS  SIZE   SEQUENCE   URI
2024-05-01T10:15:30.5Z/10:20Z  5     100 B  other_0_1  file:///deep/other_ds/o1.parquet
total: 1 segment, 5 rows, 100 B (100 bytes) in datasource other_ds
`, r.stdout)

	r = runCLI(t, runOpts{}, "segments", "--datasource", "orders_ds", "--database-url", url, "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.JSONEq(t, `[
	  {"id": "s0", "dataSource": "orders_ds", "intervalStart": "2024-05-01T00:00:00Z", "intervalEnd": "2024-05-01T01:00:00Z",
	   "version": "2024-05-03T00:00:00Z", "sequenceName": "orders_0_1", "rows": 100, "bytes": 2048,
	   "uri": "file:///deep/orders_ds/s0.parquet", "checksum": "sha256:s0"},
	  {"id": "s1", "dataSource": "orders_ds", "intervalStart": "2024-05-01T01:00:00Z", "intervalEnd": "2024-05-01T02:00:00Z",
	   "version": "2024-05-03T00:00:00Z", "sequenceName": "orders_0_1", "rows": 250, "bytes": 1572864,
	   "uri": "file:///deep/orders_ds/s1.parquet", "checksum": "sha256:s1"},
	  {"id": "s2", "dataSource": "orders_ds", "intervalStart": "2024-05-02T00:00:00Z", "intervalEnd": "2024-05-03T00:00:00Z",
	   "version": "2024-05-03T00:00:00Z", "sequenceName": "orders_0_2", "rows": 7, "bytes": 500,
	   "uri": "file:///deep/orders_ds/s2.parquet", "checksum": "sha256:s2"}
	]`, r.stdout)

	r = runCLI(t, runOpts{}, "segments", "--datasource", "nothing_ds", "--database-url", url)
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, "no used segments in datasource nothing_ds\n", r.stdout)
	r = runCLI(t, runOpts{}, "segments", "--datasource", "nothing_ds", "--database-url", url, "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.JSONEq(t, `[]`, r.stdout)
}

func TestSegmentsOfSupervisorAsksItsStatus(t *testing.T) {
	t.Parallel()
	url := segmentsDB(t)
	// The running supervisor's datasource wins over its recorded specs'.
	fc := &fakeClient{statuses: map[string]any{
		workflows.SupervisorWorkflowID("orders"): workflows.SupervisorStatus{ID: "orders", DataSource: "other_ds"},
	}}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "segments", "orders", "--database-url", url, "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var got []segmentRecord
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	require.Len(t, got, 1)
	assert.Equal(t, "o1", got[0].ID)
}

func TestSegmentsOfSupervisorFallsBackToSpecHistory(t *testing.T) {
	t.Parallel()
	url := segmentsDB(t)

	t.Run("temporal unreachable", func(t *testing.T) {
		t.Parallel()
		r := runCLI(t, runOpts{dial: client.DialContext}, "segments", "orders", "--database-url", url, "--address", "127.0.0.1:1")
		require.Equal(t, ExitOK, r.code, r.stderr)
		assert.Equal(t, ordersSegmentsText, r.stdout)
	})
	t.Run("supervisor not running", func(t *testing.T) {
		t.Parallel()
		fc := &fakeClient{queryErr: serviceerror.NewNotFound("workflow not found")}
		r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "segments", "orders", "--database-url", url)
		require.Equal(t, ExitOK, r.code, r.stderr)
		assert.Equal(t, ordersSegmentsText, r.stdout)
		assert.Empty(t, r.stderr)
	})
	t.Run("no worker answers", func(t *testing.T) {
		t.Parallel()
		fc := &fakeClient{queryErr: serviceerror.NewDeadlineExceeded("no poller")}
		r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "segments", "orders", "--database-url", url)
		require.Equal(t, ExitOK, r.code, r.stderr)
		assert.Equal(t, ordersSegmentsText, r.stdout)
		assert.Contains(t, r.stderr, "using the datasource of its latest recorded spec")
	})
}

func TestSegmentsOfUnknownSupervisorExits3(t *testing.T) {
	t.Parallel()
	url := segmentsDB(t)

	r := runCLI(t, runOpts{dial: client.DialContext}, "segments", "nobody", "--database-url", url, "--address", "127.0.0.1:1")
	assert.Equal(t, ExitNotFound, r.code, r.stderr)
	assert.Contains(t, r.stderr, `no supervisor "nobody"`)
	assert.Empty(t, r.stdout)

	fc := &fakeClient{queryErr: serviceerror.NewNotFound("workflow not found")}
	r = runCLI(t, runOpts{dial: dialTo(fc, nil)}, "segments", "nobody", "--database-url", url)
	assert.Equal(t, ExitNotFound, r.code, r.stderr)
	assert.Contains(t, r.stderr, `no supervisor "nobody" (workflow supervisor/nobody)`)
}

func TestSegmentsInterval(t *testing.T) {
	t.Parallel()
	url := segmentsDB(t)
	ids := func(args ...string) []string {
		t.Helper()
		r := runCLI(t, runOpts{}, append([]string{"segments", "--datasource", "orders_ds", "--database-url", url, "-o", "json"}, args...)...)
		require.Equal(t, ExitOK, r.code, r.stderr)
		var got []segmentRecord
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
		out := []string{}
		for _, g := range got {
			out = append(out, g.ID)
		}
		return out
	}
	// Intervals are half-open: a segment ending where the filter starts, or
	// starting where it ends, does not overlap it.
	assert.Equal(t, []string{"s0"}, ids("--interval", "2024-05-01T00:30:00Z/2024-05-01T01:00:00Z"))
	assert.Equal(t, []string{"s0", "s1"}, ids("--interval", "2024-05-01T00:59:59Z/2024-05-01T01:00:01Z"))
	assert.Equal(t, []string{"s1"}, ids("--interval", "2024-05-01T01:30Z/2024-05-02"))
	assert.Equal(t, []string{"s1", "s2"}, ids("--interval", "2024-05-01T03:00:00+02:00/2024-05-02T00:00:00.001Z"))
	assert.Equal(t, []string{"s2"}, ids("--interval", "2024-05-02T12:00/13:00")) // abbreviated end, no zone: UTC
	assert.Equal(t, []string{}, ids("--interval", "2024-04-01/2024-05-01"))
	assert.Equal(t, []string{"s0", "s1", "s2"}, ids("--interval", "2000-01-01/2100-01-01"))

	r := runCLI(t, runOpts{}, "segments", "--datasource", "orders_ds", "--database-url", url, "--interval", "2024-05-01T01:00Z/02:00Z")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, `INTERVAL                  ROWS  SIZE     SEQUENCE    URI
2024-05-01T01:00Z/02:00Z  250   1.5 MiB  orders_0_1  file:///deep/orders_ds/s1.parquet
total: 1 segment, 250 rows, 1.5 MiB (1572864 bytes) in datasource orders_ds overlapping 2024-05-01T01:00Z/02:00Z
`, r.stdout)

	r = runCLI(t, runOpts{}, "segments", "--datasource", "orders_ds", "--database-url", url, "--interval", "2024-04-01/2024-05-01")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, "no used segments in datasource orders_ds overlapping 2024-04-01/2024-05-01\n", r.stdout)
}

func TestSegmentsUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	url := "postgres://u:p@127.0.0.1:1/db" // never reached: usage errors come first
	for _, args := range [][]string{
		{"segments", "--database-url", url},                                        // neither ID nor --datasource
		{"segments", "orders", "--datasource", "orders_ds", "--database-url", url}, // both
		{"segments", "a", "b", "--database-url", url},
		{"segments", "--datasource", "", "--database-url", url},
		{"segments", "--datasource", "orders_ds"}, // no database URL
		{"segments", "--datasource", "orders_ds", "--database-url", url, "--interval", "2024-05-01"},
		{"segments", "--datasource", "orders_ds", "--database-url", url, "--interval", "yesterday/today"},
		{"segments", "--datasource", "orders_ds", "--database-url", url, "--interval", "2024-05-02/2024-05-01"},
		{"segments", "--datasource", "orders_ds", "--database-url", url, "--interval", "2024-05-01/2024-05-01"},
		{"segments", "--datasource", "orders_ds", "--database-url", url, "--interval", "a/b/c"},
	} {
		r := runCLI(t, runOpts{}, args...)
		assert.Equal(t, ExitUsage, r.code, "starter %v: stderr %s", args, r.stderr)
		assert.Contains(t, r.stderr, "starter segments --help", "starter %v", args)
		assert.Empty(t, r.stdout, "starter %v", args)
	}
	r := runCLI(t, runOpts{}, "segments", "orders", "--datasource", "orders_ds", "--database-url", url)
	assert.Contains(t, r.stderr, "error: give a supervisor ID or --datasource, not both\n")
}

func TestSegmentsAndParseErrorsHelpHaveExamples(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"segments", "parse-errors"} {
		r := runCLI(t, runOpts{}, cmd, "--help")
		require.Equal(t, ExitOK, r.code, cmd)
		assert.Contains(t, r.stdout, "Examples:", cmd)
		assert.Contains(t, r.stdout, "starter "+cmd, cmd)
		assert.Contains(t, r.stdout, "DATABASE_URL", cmd)
	}
	r := runCLI(t, runOpts{}, "--help")
	assert.Contains(t, r.stdout, "segments")
	assert.Contains(t, r.stdout, "parse-errors")
}

func TestCompactInterval(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ start, end, want string }{
		{"2024-05-01T00:00:00Z", "2024-05-02T00:00:00Z", "2024-05-01/2024-05-02"},
		{"2024-05-01T00:00:00Z", "2024-05-01T01:00:00Z", "2024-05-01T00:00Z/01:00Z"},
		{"2024-05-01T23:00:00Z", "2024-05-02T00:00:00Z", "2024-05-01T23:00Z/2024-05-02T00:00Z"},
		{"2024-05-01T10:00:05Z", "2024-05-01T10:00:06.25Z", "2024-05-01T10:00:05Z/10:00:06.25Z"},
		{"2024-05-01T02:00:00+02:00", "2024-05-01T03:00:00+02:00", "2024-05-01T00:00Z/01:00Z"}, // in UTC
	} {
		assert.Equal(t, tt.want, compactInterval(utc(tt.start), utc(tt.end)), "%s/%s", tt.start, tt.end)
		// What segments prints, --interval reads.
		iv, err := parseInterval(tt.want)
		require.NoError(t, err, tt.want)
		assert.True(t, iv.Start.Equal(utc(tt.start)) && iv.End.Equal(utc(tt.end)), "%s: got %v", tt.want, iv)
	}
}

func TestHumanBytes(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 1048575: "1.0 MiB",
		1 << 20: "1.0 MiB", 5 << 30: "5.0 GiB", 3 << 40: "3.0 TiB",
	} {
		assert.Equal(t, want, humanBytes(n), n)
	}
}
