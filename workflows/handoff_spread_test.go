package workflows

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// TestIdleSequenceHandsOffOnItsPhaseNotAtItsFirstRecord: a sequence that
// sat open on an empty topic for longer than intermediateHandoffPeriod
// does not hand off at its first record; it hands off on the group's
// phase of the period, at least half a period after that record, and the
// stream it reads with is told when.
func TestIdleSequenceHandsOffOnItsPhaseNotAtItsFirstRecord(t *testing.T) {
	const period = time.Minute
	var (
		mu        sync.Mutex
		n         int
		firstRead time.Time
	)
	read := func(in protocol.ConsumeStreamInput) protocol.ConsumeStreamResult {
		mu.Lock()
		defer mu.Unlock()
		n++
		switch n {
		case 1: // five idle minutes, then a burst, then quiet
			to := domain.Offsets{}
			for p, o := range in.From {
				to[p] = o + 5
			}
			firstRead = in.Close.OpenedAt.Add(5*time.Minute - 2*time.Second)
			return protocol.ConsumeStreamResult{To: to, Records: 10, Rows: 10, FirstRecordAt: firstRead, Reason: protocol.StreamQuiet,
				Chunks: []protocol.ChunkRef{{Key: in.SequenceName + "/c1", Rows: 10}}}
		default: // nothing more: the stream returns at its handoff
			return protocol.ConsumeStreamResult{To: in.From.Clone(), Reason: protocol.StreamHandoffPeriod}
		}
	}
	g := newStreamGroup(t, read, 5*time.Minute)
	g.env.RegisterDelayedCallback(func() { g.env.SignalWorkflow(SignalGroupStop, nil) }, 30*time.Minute)
	in := quietGroupInput()
	in.Spec.TuningConfig.IntermediateHandoffPeriod = domain.Duration(period)
	g.env.ExecuteWorkflow(TaskGroupWorkflowName, in)
	require.True(t, g.env.IsWorkflowCompleted())
	require.NoError(t, g.env.GetWorkflowError())

	phase := domain.HandoffPhase(in.Spec.ID, in.Group, period)
	due := domain.HandoffDue(firstRead, period, phase)
	require.GreaterOrEqual(t, due.Sub(firstRead), period/2)
	require.GreaterOrEqual(t, len(g.streams), 3)
	second := g.streams[1].Close
	require.NotNil(t, second)
	require.True(t, second.Spread)
	require.True(t, second.Progressed)
	require.Equal(t, phase, second.Phase)
	require.True(t, due.Equal(second.HandoffAt), "the stream is told when the handoff is due: %s, want %s", second.HandoffAt, due)
	// The next sequence opens when the supervisor answers the handoff's
	// request: when the second stream returned, not at the first record.
	next := g.streams[2].Close
	require.NotNil(t, next)
	require.False(t, next.OpenedAt.Before(due), "no handoff before it is due (%s): the next sequence opened at %s, the first record was read at %s", due, next.OpenedAt, firstRead)
	require.Equal(t, 10*time.Minute, next.OpenedAt.Sub(g.streams[0].Close.OpenedAt), "handed off as the second stream returned")
}

// TestGroupReadsOnWhileItsHandoffIsRecorded: when a sequence closes, the
// group streams into the next one at once, from the boundary, while the
// supervisor records the close; the answer adopts what was read early, and
// the sequences publish back to back with nothing read twice or skipped.
func TestGroupReadsOnWhileItsHandoffIsRecorded(t *testing.T) {
	var (
		mu sync.Mutex
		n  int
	)
	read := func(in protocol.ConsumeStreamInput) protocol.ConsumeStreamResult {
		mu.Lock()
		defer mu.Unlock()
		n++
		step, reason := int64(10), protocol.StreamQuiet
		if n == 1 {
			step, reason = 50, protocol.StreamMaxRows // 100 rows: the sequence is full
		}
		to := domain.Offsets{}
		for p, o := range in.From {
			to[p] = o + step
		}
		rows := 2 * step
		return protocol.ConsumeStreamResult{To: to, Records: rows, Rows: rows, Reason: reason,
			Chunks: []protocol.ChunkRef{{Key: fmt.Sprintf("%s/c%d", in.SequenceName, n), Rows: rows}}}
	}
	g := newStreamGroup(t, read, time.Minute)
	// Longer than a stream runs: a stream into the next sequence that ends
	// before the answer comes was started before it.
	g.answerAfter = 3 * time.Minute
	var published []protocol.PublishInput
	g.env.OnActivity(protocol.ActivityPublish, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.PublishInput) (protocol.PublishResult, error) {
			mu.Lock()
			published = append(published, in)
			mu.Unlock()
			return protocol.PublishResult{SegmentIDs: []string{"seg"}, Rows: in.End.Sum() - in.Start.Sum()}, nil
		})
	g.env.RegisterDelayedCallback(func() { g.env.SignalWorkflow(SignalGroupStop, nil) }, 10*time.Minute)
	in := quietGroupInput()
	in.Spec.TuningConfig.MaxRowsPerSegment = 100
	in.NextSequenceID = 4 // restored: ids 1 to 3 were taken
	g.env.ExecuteWorkflow(TaskGroupWorkflowName, in)
	require.True(t, g.env.IsWorkflowCompleted())
	require.NoError(t, g.env.GetWorkflowError())

	first, next := domain.SequenceName(in.Spec.ID, 0, 0), domain.SequenceName(in.Spec.ID, 0, 4)
	require.Equal(t, "stream "+first, g.events[0])
	early, answer := slices.Index(g.events, "stream "+next), slices.Index(g.events, "answer 0")
	require.True(t, early > 0 && answer > early, "the next sequence is read before the supervisor's answer comes: %v", g.events)
	require.Equal(t, domain.Offsets{domain.P(0): 50, domain.P(1): 50}, g.streams[1].From, "from the boundary")
	require.NotNil(t, g.streams[1].Close, "with the next sequence's triggers")

	require.GreaterOrEqual(t, len(published), 2)
	require.Equal(t, 0, published[0].SequenceID)
	require.Equal(t, domain.Offsets{domain.P(0): 50, domain.P(1): 50}, published[0].End)
	require.Equal(t, 4, published[1].SequenceID, "the early sequence publishes under the id the answer named")
	require.Equal(t, []string{next + "/c2"}, published[1].StagingKeys[:1], "with what was read early")
	for i := 1; i < len(published); i++ {
		require.Equal(t, published[i-1].End, published[i].Start, "sequences publish back to back")
	}
}
