package workflows

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// TestGroupClosesItsOwnSequenceAtAHandoffTrigger: a full sequence closes
// where the stream stopped, without a request: the group streams into the
// next one (the id it was given next) from the boundary at once, and the
// sequence's Publish carries the notice that tells the supervisor of the
// boundary and the commit. The group signals neither. The stop still asks
// the supervisor, with the boundaries it closed itself and has not
// published.
func TestGroupClosesItsOwnSequenceAtAHandoffTrigger(t *testing.T) {
	read := steppedStream(func(n int) (int64, string) {
		if n == 1 || n == 3 {
			return 50, protocol.StreamMaxRows // 100 rows: the sequence is full
		}
		return 10, protocol.StreamQuiet
	})
	g := newStreamGroup(t, read, time.Minute)
	publishes := g.publishes()
	g.env.RegisterDelayedCallback(func() { g.env.SignalWorkflow(SignalGroupStop, nil) }, 10*time.Minute)
	in := quietGroupInput()
	in.Spec.TuningConfig.MaxRowsPerSegment = 100
	in.NextSequenceID = 4 // restored: ids 1 to 3 were taken
	g.env.ExecuteWorkflow(TaskGroupWorkflowName, in)
	require.True(t, g.env.IsWorkflowCompleted())
	require.NoError(t, g.env.GetWorkflowError())

	name := func(id int) string { return domain.SequenceName(in.Spec.ID, 0, id) }
	require.Equal(t, []string{"stream " + name(0), "stream " + name(4), "stream " + name(4), "stream " + name(5)}, g.events[:4],
		"each full sequence is followed at once by a stream into the next, with no answer awaited")
	require.Equal(t, domain.Offsets{domain.P(0): 50, domain.P(1): 50}, g.streams[1].From, "from the boundary")
	require.NotNil(t, g.streams[1].Close, "with the next sequence's triggers")
	require.Zero(t, g.streams[1].Close.Rows, "counted afresh")

	// The group sent its first progress report and, for the stop only, a
	// request; never a published notice.
	require.NotContains(t, g.signals, SignalSequencePublished)
	var requests []CheckpointRequest
	for i, name := range g.signals {
		if name == SignalCheckpointRequest {
			requests = append(requests, g.sent[i].(CheckpointRequest))
		}
	}
	require.Len(t, requests, 1, "signals: %v", g.signals)
	require.Equal(t, ReasonStop, requests[0].Reason)

	published := publishes()
	var ids []int
	for _, p := range published {
		ids = append(ids, p.SequenceID)
	}
	require.Equal(t, []int{0, 4, 5, 6}, ids, "three full sequences and what the stop closed")
	for i, p := range published {
		if i > 0 {
			require.Equal(t, published[i-1].End, p.Start, "sequences publish back to back")
		}
		require.NotNil(t, p.Notify, "every Publish tells the supervisor itself")
		require.Equal(t, SupervisorWorkflowID(in.Spec.ID), p.Notify.WorkflowID)
		require.Equal(t, SignalSequencePublished, p.Notify.Signal)
	}
	require.Equal(t, domain.Offsets{domain.P(0): 50, domain.P(1): 50}, published[0].End)
	var notice SequencePublished
	require.NoError(t, json.Unmarshal(published[0].Notify.Notice, &notice))
	require.Equal(t, 0, notice.SequenceID)
	require.Equal(t, published[0].End, notice.End)
	require.Equal(t, 1, notice.Generation)
	require.Equal(t, &ClosedByGroup{NextSequenceID: 4}, notice.Closed)
	require.NotNil(t, notice.Progress, "the progress report travels with the notice")
	require.Equal(t, domain.Offsets{domain.P(0): 50, domain.P(1): 50}, notice.Progress.Position)
	require.EqualValues(t, 100, notice.Progress.Records)

	// What the stop closed was asked for after the closed ones published.
	require.Empty(t, requests[0].ClosedByGroup)
	require.Equal(t, published[len(published)-1].SequenceID, requests[0].SequenceID)
}

// TestStopCarriesTheBoundariesNotYetPublished: a stop while sequences the
// group closed itself still wait to publish sends them, oldest first, with
// its request, so the supervisor knows the sequence it is asked to close.
func TestStopCarriesTheBoundariesNotYetPublished(t *testing.T) {
	read := steppedStream(func(int) (int64, string) { return 50, protocol.StreamMaxRows })
	g := newStreamGroup(t, read, time.Minute)
	// Publishes take long: sequences close faster than they commit.
	g.env.OnActivity(protocol.ActivityPublish, mock.Anything, mock.Anything).Return(protocol.PublishResult{SegmentIDs: []string{"seg"}}, nil).After(150 * time.Second)
	g.env.RegisterDelayedCallback(func() { g.env.SignalWorkflow(SignalGroupStop, nil) }, 150*time.Second)
	in := quietGroupInput()
	in.Spec.TuningConfig.MaxRowsPerSegment = 100
	in.Spec.TuningConfig.MaxPendingPublishes = 3 // two closed wait, a third is read
	in.NextSequenceID = 1
	g.env.ExecuteWorkflow(TaskGroupWorkflowName, in)
	require.True(t, g.env.IsWorkflowCompleted())
	require.NoError(t, g.env.GetWorkflowError())

	i := slices.Index(g.signals, SignalCheckpointRequest)
	require.GreaterOrEqual(t, i, 0, "the stop asks: %v", g.signals)
	req := g.sent[i].(CheckpointRequest)
	require.Equal(t, ReasonStop, req.Reason)
	require.Equal(t, []domain.Sequence{
		{ID: 0, Start: domain.Offsets{domain.P(0): 0, domain.P(1): 0}, End: domain.Offsets{domain.P(0): 50, domain.P(1): 50}},
		{ID: 1, Start: domain.Offsets{domain.P(0): 50, domain.P(1): 50}, End: domain.Offsets{domain.P(0): 100, domain.P(1): 100}},
	}, req.ClosedByGroup)
	require.Equal(t, 2, req.SequenceID)
}

// TestPartitionsAddedToASequenceTheGroupClosedJoinTheOpenOne: the
// supervisor adds partitions to the sequence it knows as open, which the
// group has already closed and published by itself; they join the open
// sequence, are read from where the supervisor gave them and publish with
// it.
func TestPartitionsAddedToASequenceTheGroupClosedJoinTheOpenOne(t *testing.T) {
	read := steppedStream(func(n int) (int64, string) {
		if n == 1 {
			return 50, protocol.StreamMaxRows
		}
		return 50, protocol.StreamQuiet
	})
	g := newStreamGroup(t, read, time.Minute)
	publishes := g.publishes()
	p2 := domain.P(2)
	g.env.RegisterDelayedCallback(func() {
		g.env.SignalWorkflow(SignalAddPartitions, AddPartitions{SequenceID: 0, Offsets: domain.Offsets{p2: 7}})
	}, 150*time.Second)
	g.env.RegisterDelayedCallback(func() { g.env.SignalWorkflow(SignalGroupStop, nil) }, 10*time.Minute)
	in := quietGroupInput()
	in.Spec.TuningConfig.MaxRowsPerSegment = 100_000
	in.NextSequenceID = 1
	g.env.ExecuteWorkflow(TaskGroupWorkflowName, in)
	require.True(t, g.env.IsWorkflowCompleted())
	require.NoError(t, g.env.GetWorkflowError())

	published := publishes()
	require.Len(t, published, 2)
	require.Equal(t, 0, published[0].SequenceID, "closed and published before the partitions came")
	require.NotContains(t, published[0].End, p2)
	require.Equal(t, 1, published[1].SequenceID)
	require.Equal(t, int64(7), published[1].Start[p2], "the open sequence reads them from where the supervisor gave them")
	require.Greater(t, published[1].End[p2], int64(7))
}
