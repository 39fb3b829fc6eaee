package workflows

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkpb "go.temporal.io/api/sdk/v1"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// Issue 13: the latest offsets are as old as the last discover, the
// current ones come with every progress report, so current ran past
// latest and the status showed a consumer ahead of the log's end, with a
// lag (latest − committed) that said nothing of either. The status, and
// the details the Temporal UI shows, raise latest to current and mark it;
// lag is latest − current (Druid's), unpublished current − committed.
func TestStatusLatestNeverBelowCurrent(t *testing.T) {
	spec := testSpec()
	o := newOpsHarness(t, spec)
	o.discover = func(int) (protocol.DiscoverResult, error) {
		return protocol.DiscoverResult{Partitions: []domain.Partition{domain.P(0), domain.P(1)}, Latest: domain.Offsets{domain.P(0): 500, domain.P(1): 80}}, nil
	}
	o.startOffsets = protocol.StartOffsetsResult{Offsets: domain.Offsets{domain.P(0): 100, domain.P(1): 50}, NextSequenceIDs: map[int]int{0: 1}}
	o.signal(2*time.Second, SignalProgress, GroupProgress{Group: 0, Generation: 1, Position: domain.Offsets{domain.P(0): 650, domain.P(1): 60}})
	snaps := o.snapshots(3 * time.Second)
	var details string
	o.at(3*time.Second, func() {
		v, err := o.env.QueryWorkflow("__temporal_workflow_metadata")
		require.NoError(t, err)
		var md sdkpb.WorkflowMetadata
		require.NoError(t, v.Get(&md))
		details = md.GetCurrentDetails()
	})
	o.signal(5*time.Second, SignalStop, StopSignal{})
	o.run()
	require.NoError(t, o.env.GetWorkflowError())

	st := snaps[3*time.Second]
	require.Equal(t, domain.Offsets{domain.P(0): 650, domain.P(1): 60}, st.Current)
	require.Equal(t, domain.Offsets{domain.P(0): 650, domain.P(1): 80}, st.Latest, "partition 0's latest was read before its group got to 650")
	require.Equal(t, []domain.Partition{domain.P(0)}, st.LatestRaised)
	require.Equal(t, map[domain.Partition]int64{domain.P(0): 0, domain.P(1): 20}, st.PartitionLag)
	require.Equal(t, int64(20), st.Lag)
	require.Equal(t, map[domain.Partition]int64{domain.P(0): 550, domain.P(1): 10}, st.PartitionUnpublished, "read from 100 and 50, nothing published")
	require.Equal(t, int64(560), st.Unpublished)

	// The details are as at the last reconcile (1s): nothing read yet.
	require.Contains(t, details, "lag 430 · unpublished 0")
	require.Contains(t, details, "\n\nlag = latest − current offset · unpublished = current − committed · latest read at ")
	require.True(t, strings.HasSuffix(details, "\n\n\u00a0\n"), "the details end with the paragraph the UI panel cuts")
}

// The details end with a paragraph of a no-break space, which the UI's
// panel may cut (see details), and list at most detailsGroups groups.
func TestDetailsStayShort(t *testing.T) {
	s := &supervisor{spec: testSpec(), c: SupervisorCarry{State: StateRunning, DetailedState: StateRunning, Groups: map[int]*groupRecord{}}}
	for g := range 12 {
		s.c.Groups[g] = &groupRecord{Partitions: []domain.Partition{domain.P(int32(g))}, Generation: 1, Running: true}
	}
	d := s.details()
	require.True(t, strings.HasSuffix(d, "\n\n\u00a0\n"), "%q", d)
	require.True(t, strings.HasPrefix(d, "**RUNNING** · topic `events` → datasource `events` · lag 0 · unpublished 0 · read_committed\n\n"), "%q", d)
	require.Equal(t, detailsGroups+1, strings.Count(d, "\n| ")-1, "a header, the groups shown and a row for the rest: %s", d)
	require.Contains(t, d, "| … | | 4 more groups: `starter status spec1` | | | |")
}
