package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/workflows"
)

// The text status says which group stopped on an offset that is gone and
// what to run, and lists the automatic offset resets with what they skipped.
func TestStatusTextShowsOutOfRangeAndResets(t *testing.T) {
	at := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	s := workflows.SupervisorStatus{
		ID: "wiki", Topic: "wiki", DataSource: "wiki", State: workflows.StateUnhealthyTasks,
		Groups: []workflows.GroupStatus{
			{Group: 0, Partitions: []domain.Partition{domain.P(0)}},
			{Group: 1, Partitions: []domain.Partition{domain.P(1)}, OutOfRange: &domain.OutOfRange{Partition: 1, Offset: 1500, Earliest: 0, Latest: 100}},
		},
		OffsetResets: []workflows.OffsetResetRecord{
			{Time: at, Group: 0, Partition: domain.P(0), From: 1000, To: 1400, Skipped: 400},
			{Time: at, Group: 0, Partition: domain.P(2), From: 1500, To: 0, Skipped: 0, Recreated: true},
		},
	}
	var out bytes.Buffer
	require.NoError(t, writeStatus(&out, freshStatus{SupervisorStatus: s}))
	text := out.String()
	require.Contains(t, text, "group 1 stopped: partition 1 has no offset 1500 (it holds 0 to 100): run `starter reset wiki --partition 1=earliest --force`")
	require.Contains(t, text, "OFFSET RESET")
	require.Regexp(t, `2026-12-03T09:00:00Z\s+0\s+0\s+1000\s+1400\s+400\n`, text)
	require.Regexp(t, `2026-12-03T09:00:00Z\s+0\s+2\s+1500\s+0\s+0 \(topic recreated\)`, text)
	require.NotContains(t, text, "group 0 stopped")
}

func TestStatusTextShowsIsolationHoldsAndSkippedRecords(t *testing.T) {
	since := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	s := workflows.SupervisorStatus{
		ID: "orders", Topic: "orders", DataSource: "orders", State: workflows.StateRunning,
		IsolationLevel: domain.IsolationReadCommitted,
		Held:           []domain.HeldPartition{{Partition: domain.P(2), Offset: 1234, HighWatermark: 1300, Since: since}},
		Read:           workflows.ReadTotals{Records: 100, Rows: 90, ThrownAway: 10, NoValue: 4, Markers: 7, Aborted: 25},
	}
	var out bytes.Buffer
	require.NoError(t, writeStatus(&out, freshStatus{Time: since.Add(3 * time.Minute), SupervisorStatus: s}))
	text := out.String()
	require.Contains(t, text, "(topic orders → datasource orders, reads read_committed)")
	require.Contains(t, text, "held by an open transaction: partition 2 at offset 1234 since 2026-12-03T09:00:00Z, 66 records behind it (3m0s ago)")
	require.Contains(t, text, "100 records, 90 rows, 0 unparseable, 10 thrown away (4 with a null or empty value); passed 7 transaction markers and 25 records of aborted transactions")

	var js bytes.Buffer
	format := outputJSON
	require.NoError(t, printer{w: &js, format: &format}.print(statusResult{freshStatus{SupervisorStatus: s}}))
	require.Contains(t, js.String(), `"isolationLevel": "read_committed"`)
	require.Contains(t, js.String(), `"heldByOpenTransaction"`)
	require.Contains(t, js.String(), `"abortedRecords": 25`)
}
