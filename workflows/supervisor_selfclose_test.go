package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// TestSupervisorRecordsBoundariesGroupsClosedThemselves: the notice a
// Publish sends for a sequence its group closed itself records the
// boundary and the next sequence, counts the publish and the progress it
// carries, and counts nothing twice when it comes again; a later request
// that carries the group's unpublished boundaries finds the sequence it
// names, and gets its answer.
func TestSupervisorRecordsBoundariesGroupsClosedThemselves(t *testing.T) {
	spec := testSpec()
	h := newSupervisorHarness(t, spec)
	parts := []domain.Partition{domain.P(0), domain.P(1)}
	h.discover = func(int) (protocol.DiscoverResult, error) {
		return protocol.DiscoverResult{Partitions: parts, Earliest: domain.Offsets{domain.P(0): 0, domain.P(1): 0}, Latest: domain.Offsets{domain.P(0): 500, domain.P(1): 500}}, nil
	}
	h.startOffsets = protocol.StartOffsetsResult{Offsets: domain.Offsets{domain.P(0): 100, domain.P(1): 110}, NextSequenceIDs: map[int]int{0: 7}}
	h.finishAfter = map[int]time.Duration{0: time.Second}
	at := func(a, b int64) domain.Offsets { return domain.Offsets{domain.P(0): a, domain.P(1): b} }

	progress := GroupProgress{Group: 0, Generation: 1, Position: at(150, 160), ReadTotals: ReadTotals{Records: 100, Rows: 100}}
	notice := SequencePublished{Group: 0, Generation: 1, SequenceID: 7, End: at(150, 160), Segments: 2, Rows: 100,
		Closed: &ClosedByGroup{NextSequenceID: 8}, Progress: &progress}
	h.signal(2*time.Second, SignalSequencePublished, notice)
	h.signal(3*time.Second, SignalSequencePublished, notice) // a retried Publish tells again
	var afterNotice SupervisorStatus
	h.at(4*time.Second, func() { afterNotice = h.status() })
	h.signal(5*time.Second, SignalCheckpointRequest, CheckpointRequest{
		Group: 0, Generation: 1, SequenceID: 10, Offsets: at(200, 210), Reason: ReasonUser,
		ClosedByGroup: []domain.Sequence{
			{ID: 8, Start: at(150, 160), End: at(170, 180)},
			{ID: 9, Start: at(170, 180), End: at(190, 200)},
		},
	})
	var afterRequest SupervisorStatus
	h.at(6*time.Second, func() { afterRequest = h.status() })
	h.signal(8*time.Second, SignalStop, StopSignal{})

	perChunk(h.env)
	h.env.ExecuteWorkflow(SupervisorWorkflowName, SupervisorInput{Spec: spec})
	require.True(t, h.env.IsWorkflowCompleted())
	require.NoError(t, h.env.GetWorkflowError())

	require.Len(t, afterNotice.Groups, 1)
	require.Equal(t, []SequenceStatus{{Sequence: domain.Sequence{ID: 8, Start: at(150, 160)}}}, afterNotice.Groups[0].Sequences,
		"sequence 7 closed and published; 8 opened at its end")
	require.Equal(t, at(150, 160), afterNotice.Committed)
	require.EqualValues(t, 1, afterNotice.Published.Sequences, "counted once")
	require.EqualValues(t, 100, afterNotice.Published.Rows)
	require.EqualValues(t, 100, afterNotice.Read.Records, "the progress the notice carried, once")

	require.Equal(t, []SequenceStatus{
		{Sequence: domain.Sequence{ID: 8, Start: at(150, 160), End: at(170, 180)}},
		{Sequence: domain.Sequence{ID: 9, Start: at(170, 180), End: at(190, 200)}},
		{Sequence: domain.Sequence{ID: 10, Start: at(190, 200), End: at(200, 210)}},
		{Sequence: domain.Sequence{ID: 11, Start: at(200, 210)}},
	}, afterRequest.Groups[0].Sequences)
	require.Empty(t, afterRequest.RecentErrors)
	require.Contains(t, h.signalsTo(0), childSignal{name: SignalSetEndOffsets, setEnd: SetEndOffsets{SequenceID: 10, End: at(200, 210), NextSequenceID: 11}})
}

// TestBoundaryClosedByTheGroupKeepsPartitionsThatJoinedLater: partitions
// the supervisor added to a sequence after its group closed it start the
// next sequence, where the group read them.
func TestBoundaryClosedByTheGroupKeepsPartitionsThatJoinedLater(t *testing.T) {
	rec := &groupRecord{Sequences: []domain.Sequence{{ID: 3, Start: domain.Offsets{domain.P(0): 10, domain.P(2): 5}}}, NextSequenceID: 4}
	recordClosed(rec, 3, domain.Offsets{domain.P(0): 40}, 4)
	require.Equal(t, []domain.Sequence{
		{ID: 3, Start: domain.Offsets{domain.P(0): 10, domain.P(2): 5}, End: domain.Offsets{domain.P(0): 40}},
		{ID: 4, Start: domain.Offsets{domain.P(0): 40, domain.P(2): 5}},
	}, rec.Sequences)
	require.Equal(t, 5, rec.NextSequenceID)

	recordClosed(rec, 3, domain.Offsets{domain.P(0): 90}, 9) // closed already: it stands
	require.Len(t, rec.Sequences, 2)
	require.Equal(t, domain.Offsets{domain.P(0): 40}, rec.Sequences[0].End)
}
