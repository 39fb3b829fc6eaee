package workflows

import (
	"sync"
	"testing"
	"time"

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
	// The next sequence opens when the handoff closes the open one: when
	// the second stream returned, not at the first record.
	next := g.streams[2].Close
	require.NotNil(t, next)
	require.False(t, next.OpenedAt.Before(due), "no handoff before it is due (%s): the next sequence opened at %s, the first record was read at %s", due, next.OpenedAt, firstRead)
	require.Equal(t, 10*time.Minute, next.OpenedAt.Sub(g.streams[0].Close.OpenedAt), "handed off as the second stream returned")
}
