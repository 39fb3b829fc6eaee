package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/jsoncheck"
	"handoff/internal/workload"
)

// busyTracker has a consume activity reading and a failed publish.
func busyTracker(t *testing.T) *workload.Tracker {
	t.Helper()
	tr := workload.NewTracker(workload.Limits{Consume: 2, Publish: 1, MemoryLimit: 1 << 40})
	ctx := context.Background()
	h, err := tr.Begin(ctx, workload.Work{
		ID: "taskgroup-wiki-3/7", Kind: workload.Consume, Supervisor: "wiki-edits", Group: 3,
		Partitions: []domain.Partition{domain.P(0), domain.P(1)}, Sequence: "wiki-edits_3_0007", Attempt: 2,
	})
	require.NoError(t, err)
	h.SetState(workload.StateReading)
	h.Progress(domain.Offsets{domain.P(0): 42, domain.P(1): 7}, 1200, 3<<20)
	t.Cleanup(func() { h.End(nil) })

	failed, err := tr.Begin(ctx, workload.Work{Kind: workload.Publish, Supervisor: "wiki-edits", Group: 2})
	require.NoError(t, err)
	failed.End(errors.New("commit: dial postgres://handoff:hunter2@db:5432/handoff: connection refused"))
	return tr
}

func get(t *testing.T, h http.Handler, target string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return string(b)
}

func testMux(t *testing.T, tr *workload.Tracker, isReady func(context.Context) error) http.Handler {
	return testMuxPprof(t, tr, isReady, false)
}

func testMuxPprof(t *testing.T, tr *workload.Tracker, isReady func(context.Context) error, withPprof bool) http.Handler {
	t.Helper()
	m, reg, err := newMetrics(tr)
	require.NoError(t, err)
	m.TemporalHandler().WithTags(map[string]string{"namespace": "default"}).Counter("temporal_request").Inc(1)
	return newMux(reg, tr, isReady, withPprof, slog.New(slog.DiscardHandler))
}

// Go's profiles are served only when asked for (HANDOFF_PPROF).
func TestPprofOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	res := get(t, testMux(t, busyTracker(t), nil), "/debug/pprof/goroutine?debug=1")
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	res = get(t, testMuxPprof(t, busyTracker(t), nil, true), "/debug/pprof/goroutine?debug=1")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, body(t, res), "goroutine profile:")
}

func TestStatusPage(t *testing.T) {
	t.Parallel()
	mux := testMux(t, busyTracker(t), nil)
	res := get(t, mux, "/status")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "text/html; charset=utf-8", res.Header.Get("Content-Type"))
	page := body(t, res)
	for _, want := range []string{
		`<meta http-equiv="refresh" content="5">`,
		"<td>wiki-edits</td>", "<td>reading</td>", "<td>consume</td>", "0,1", "wiki-edits_3_0007",
		"p0:42,p1:7", "3.0 MiB", "1200",
		"Recent failures (1)", "postgres://handoff:xxxxx@db:5432/handoff",
		"<td>consume</td><td class=\"num\">2</td><td class=\"num\">1</td>", // 2 slots, 1 running
	} {
		require.Contains(t, page, want)
	}
	require.NotContains(t, page, "hunter2")
	require.NotContains(t, page, "<script")

	res = get(t, mux, "/status?format=xml")
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
}

func TestStatusPageWhenIdle(t *testing.T) {
	t.Parallel()
	page := body(t, get(t, testMux(t, workload.NewTracker(workload.Limits{}), nil), "/status"))
	require.Contains(t, page, "No consume or publish activity")
	require.Contains(t, page, "none: push-back disabled")
}

func TestStatusJSON(t *testing.T) {
	t.Parallel()
	res := get(t, testMux(t, busyTracker(t), nil), "/status?format=json")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "application/json", res.Header.Get("Content-Type"))
	var s workload.Snapshot
	require.NoError(t, json.NewDecoder(res.Body).Decode(&s))
	require.Len(t, s.Active, 1)
	w := s.Active[0]
	require.Equal(t, "wiki-edits", w.Supervisor)
	require.Equal(t, workload.StateReading, w.State)
	require.Equal(t, domain.Offsets{domain.P(0): 42, domain.P(1): 7}, w.Offsets)
	require.Equal(t, int64(3<<20), s.InFlightBytes)
	require.Equal(t, 2, s.Limits.Consume)
	require.Equal(t, int64(1<<40), s.Memory.Limit)
	require.Len(t, s.RecentFailures, 1)
	require.Contains(t, s.RecentFailures[0].Error, "postgres://handoff:xxxxx@db")
	require.NotContains(t, s.RecentFailures[0].Error, "hunter2")
}

// The JSON has the project's one convention: lowerCamel keys, durations
// as strings ("250ms").
func TestStatusJSONKeysAndDurations(t *testing.T) {
	t.Parallel()
	page := body(t, get(t, testMux(t, busyTracker(t), nil), "/status?format=json"))
	require.NoError(t, jsoncheck.Check([]byte(page)), page)
	require.Contains(t, page, `"checkEvery": "250ms"`)
	require.Contains(t, page, `"pushBackFraction": 0.8`)
	require.Contains(t, page, `"pushBackTotal": "0s"`)

	tr := workload.NewTracker(workload.Limits{CheckEvery: jsoncheck.Sentinel})
	page = body(t, get(t, testMux(t, tr, nil), "/status?format=json"))
	require.NoError(t, jsoncheck.Check([]byte(page)), page)
}

func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	res := get(t, testMux(t, busyTracker(t), nil), "/metrics")
	require.Equal(t, http.StatusOK, res.StatusCode)
	text := body(t, res)
	for _, want := range []string{
		`handoff_activities_in_flight{kind="consume"} 1`,
		`handoff_activities_in_flight{kind="publish"} 0`,
		"handoff_in_flight_bytes 3.145728e+06",
		"handoff_memory_limit_bytes 1.099511627776e+12",
		"handoff_memory_pushing_back 0",
		"handoff_heap_bytes ",
		"handoff_memory_pushback_seconds_total 0",
		`temporal_request_total{namespace="default"} 1`,
		"go_goroutines ",
		"process_start_time_seconds ",
	} {
		require.Contains(t, text, want)
	}
}

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	var readyErr error
	mux := testMux(t, workload.NewTracker(workload.Limits{}), func(context.Context) error { return readyErr })

	require.Equal(t, "ok\n", body(t, get(t, mux, "/healthz")))
	res := get(t, mux, "/readyz")
	require.Equal(t, http.StatusOK, res.StatusCode)

	readyErr = errors.New("postgres: failed to connect to host=db user=handoff password=hunter2")
	res = get(t, mux, "/readyz")
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	b := body(t, res)
	require.Contains(t, b, "password=xxxxx")
	require.False(t, strings.Contains(b, "hunter2"))

	res = get(t, mux, "/")
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, "/status", res.Header.Get("Location"))
	require.Equal(t, http.StatusNotFound, get(t, mux, "/nothing").StatusCode)
}
