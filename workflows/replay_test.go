package workflows

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
)

// TestReplayRecordedHistories replays histories recorded from real runs on
// the real stack (e2e tests with HANDOFF_RECORD_HISTORIES set; see
// e2e/histories_test.go), among them runs that ended in continue-as-new and
// rollovers. A change to the workflows that would break a running
// supervisor or group fails here with a nondeterminism error. When a change
// is meant to be incompatible, version it (workflow.GetVersion) rather than
// re-record.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json.gz"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no recorded histories under testdata/histories")
	var sawContinueAsNew, sawCompaction bool
	saw := map[string]bool{} // change ids recorded by version markers
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			zr, err := gzip.NewReader(f)
			require.NoError(t, err)
			hist, err := client.HistoryFromJSON(zr, client.HistoryJSONOptions{})
			require.NoError(t, err)
			events := hist.GetEvents()
			if a := events[0].GetWorkflowExecutionStartedEventAttributes(); a != nil && a.GetWorkflowType().GetName() == CompactionWorkflowName {
				sawCompaction = true
			}
			if events[len(events)-1].GetWorkflowExecutionContinuedAsNewEventAttributes() != nil {
				sawContinueAsNew = true
			}
			for _, ev := range events {
				if m := ev.GetMarkerRecordedEventAttributes(); m != nil && m.GetMarkerName() == "Version" {
					for _, change := range []string{streamConsumeChange, watchChange, selfCloseChange} {
						if strings.Contains(m.GetDetails()["change-id"].String(), change) {
							saw[change] = true
						}
					}
				}
			}
			r := worker.NewWorkflowReplayer()
			Register(r)
			require.NoError(t, r.ReplayWorkflowHistory(nil, hist))
		})
	}
	require.True(t, sawContinueAsNew, "the recorded histories must include a run that continued as new")
	require.True(t, sawCompaction, "the recorded histories must include a compaction workflow's")
	for _, change := range []string{streamConsumeChange, watchChange, selfCloseChange} {
		require.True(t, saw[change], "no recorded history of a run with %s", change)
	}
}
