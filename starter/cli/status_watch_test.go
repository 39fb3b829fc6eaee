package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/workflows"
)

var watchStart = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// changingStatuses is a fake client whose status changes at each query, as
// a supervisor's does while it reads and publishes: rows read go from 1000
// to 1190 (95 rows/s over the 2 s between refreshes), then stay while a
// sequence publishes, then start over at 500 (a new run). Ctrl-C comes
// during the fifth query.
func changingStatuses(cancel context.CancelFunc) *fakeClient {
	statuses := make([]workflows.SupervisorStatus, 4)
	for i := range statuses {
		statuses[i] = sampleStatus()
	}
	statuses[0].Read.Rows, statuses[0].Published.LastAt = 1000, watchStart.Add(-12*time.Second)
	statuses[1].Read.Rows, statuses[1].Published.LastAt = 1190, watchStart.Add(-12*time.Second)
	statuses[2].Read.Rows, statuses[2].Published.LastAt, statuses[2].Published.Rows = 1190, watchStart.Add(3*time.Second), 190
	statuses[3].Read.Rows, statuses[3].Published.LastAt, statuses[3].Published.Rows = 500, watchStart.Add(3*time.Second), 190
	fc := &fakeClient{status: statuses[0]}
	fc.onQuery = func(n int) {
		fc.mu.Lock()
		defer fc.mu.Unlock()
		if n < len(statuses) {
			fc.status = statuses[n]
		}
		if n == len(statuses)+1 {
			cancel()
		}
	}
	return fc
}

func watchCLI(t *testing.T, terminal bool, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	fc := changingStatuses(cancel)
	r := runCLI(t, runOpts{dial: dialTo(fc, nil), ctx: ctx, now: steppingClock(watchStart, 2*time.Second), terminal: terminal, env: noKafka},
		append([]string{"status", "orders", "--watch", "--interval", "1ms"}, args...)...)
	require.Equal(t, ExitOK, r.code, r.stderr)
	return r
}

func TestStatusWatchLinesHaveRowsPerSecondAndLastPublish(t *testing.T) {
	t.Parallel()
	r := watchCLI(t, false)
	assert.Equal(t, `2026-01-02T03:04:05Z RUNNING lag=14 unpublished=23 rows/s=- published=140 rows, last 12s ago
2026-01-02T03:04:07Z RUNNING lag=14 unpublished=23 rows/s=95.0 published=140 rows, last 14s ago
2026-01-02T03:04:09Z RUNNING lag=14 unpublished=23 rows/s=0.0 published=190 rows, last 1s ago
2026-01-02T03:04:11Z RUNNING lag=14 unpublished=23 rows/s=- published=190 rows, last 3s ago
`, r.stdout)
}

func TestStatusWatchJSONHasRowsPerSecond(t *testing.T) {
	t.Parallel()
	r := watchCLI(t, false, "-o", "json")
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	var rates []any
	for dec.More() {
		var got map[string]any
		require.NoError(t, dec.Decode(&got))
		require.Contains(t, got, "rowsPerSecond")
		rates = append(rates, got["rowsPerSecond"])
		assert.Equal(t, "orders", got["id"])
		assert.Contains(t, got["published"], "lastAt")
	}
	assert.Equal(t, []any{nil, 95.0, 0.0, nil}, rates, "null on the first refresh and after the totals start over")
}

func TestStatusWatchOnATerminalRedrawsACompactTable(t *testing.T) {
	t.Parallel()
	r := watchCLI(t, true)
	frames := strings.Split(r.stdout, clearScreen)
	require.Len(t, frames, 5, "a clear screen before each of 4 refreshes: %q", r.stdout)
	assert.Empty(t, frames[0])
	assert.Equal(t, `every 1ms: starter status orders    2026-01-02T03:04:07Z    (Ctrl-C to stop)

supervisor orders: topic orders → datasource orders_ds
a new spec applies once the task groups have published their open sequences

STATE                    LAG  UNPUBLISHED  ROWS/S  OPEN SEQUENCES  PUBLISHED  LAST PUBLISH
RUNNING (APPLYING_SPEC)  14   23           95.0    1 (23 rows)     140 rows   14s ago

PARTITION  LAG  UNPUBLISHED
0          10   20
1          0    0
2          4    3
LAG = latest − current, not read yet; UNPUBLISHED = current − committed, read and not published yet
latest: the supervisor's last read (…); current: the supervisor's

recent errors
  2026-01-02T03:04:05Z  consume p2: broker down
`, maskKafkaError(frames[2]))
	assert.Contains(t, frames[1], "RUNNING (APPLYING_SPEC)  14   23           -       1 (23 rows)     140 rows   12s ago\n")
	assert.Contains(t, frames[3], "0.0     1 (23 rows)     190 rows   1s ago\n")
}

func TestWatchTableOfAnIdleSupervisor(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	st := workflows.SupervisorStatus{ID: "wiki", Topic: "wiki", DataSource: "wiki", State: workflows.StateIdle,
		Partitions: []domain.Partition{domain.P(0)}, Committed: domain.Offsets{domain.P(0): 5}, Latest: domain.Offsets{domain.P(0): 5},
		PartitionLag: map[domain.Partition]int64{domain.P(0): 0}, PartitionUnpublished: map[domain.Partition]int64{domain.P(0): 0}}
	rate := 0.0
	f := freshStatus{Time: watchStart, SupervisorStatus: st, LatestFrom: latestFromKafka}
	f.LatestAt = watchStart
	require.NoError(t, writeWatch(&b, watchLine{freshStatus: f, RowsPerSecond: &rate}))
	assert.Equal(t, `supervisor wiki: topic wiki → datasource wiki

STATE  LAG  UNPUBLISHED  ROWS/S  OPEN SEQUENCES  PUBLISHED  LAST PUBLISH
IDLE   0    0            0.0     0 (0 rows)      0 rows     never

PARTITION  LAG  UNPUBLISHED
0          0    0
LAG = latest − current, not read yet; UNPUBLISHED = current − committed, read and not published yet
latest read from Kafka at 2026-01-02T03:04:05Z; current: the supervisor's
`, b.String())
}

func TestAgo(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		-3 * time.Second:                      "0s ago", // the worker's clock is ahead
		0:                                     "0s ago",
		12*time.Second + 400*time.Millisecond: "12s ago",
		59*time.Second + 600*time.Millisecond: "1m00s ago",
		3*time.Minute + 5*time.Second:         "3m05s ago",
		2*time.Hour + 10*time.Minute:          "2h10m ago",
		50 * time.Hour:                        "2d ago",
	} {
		assert.Equal(t, want, ago(watchStart, watchStart.Add(-d)), "%s", d)
	}
	assert.Equal(t, "never", ago(watchStart, time.Time{}))
}
