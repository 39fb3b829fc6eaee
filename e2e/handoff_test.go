package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/activities"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/workflows"
)

// maxHistoryPerHandoff is issue 37's budget: the history events one
// handoff (a sequence closed, read on from, published and counted) writes
// across the supervisor and its group.
const maxHistoryPerHandoff = 20

// TestHandoffsByAgeAreExactlyOnceAndCheap: while events arrive steadily,
// the group hands off by age every 2 s. Each handoff writes at most
// maxHistoryPerHandoff history events (the group closes its sequences
// itself, and each Publish tells the supervisor), the supervisor's record
// follows the commits, and every event is published once.
func TestHandoffsByAgeAreExactlyOnceAndCheap(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	spec := s.spec(1)
	spec.TuningConfig.IntermediateHandoffPeriod = domain.Duration(2 * time.Second)
	require.NoError(t, spec.Validate())
	gen := eventgen.New(s.name, 37)
	const first, steady = 200, 1500

	s.produce(gen, first)
	run := s.startSupervisor(spec)
	ds := spec.DataSchema.DataSource
	history := func() int64 {
		return s.historyEvents(workflows.SupervisorWorkflowID(spec.ID)) + s.historyEvents(workflows.TaskGroupWorkflowID(spec.ID, 0))
	}
	s.waitAllHandedOff(spec)
	h0, p0 := history(), s.publishedSequences(ds)

	sent, err := gen.Produce(context.Background(), s.brokers, s.name, 100, steady, false) // 15 s at 100 events/s
	require.NoError(t, err)
	require.EqualValues(t, steady, sent)
	s.waitAllHandedOff(spec)
	h1, p1 := history(), s.publishedSequences(ds)

	handoffs := p1 - p0
	perHandoff := float64(h1-h0) / float64(handoffs)
	t.Logf("%d handoffs wrote %d history events: %.1f each", handoffs, h1-h0, perHandoff)
	require.GreaterOrEqual(t, handoffs, 5, "handoffs by age while events arrived")
	require.LessOrEqual(t, perHandoff, float64(maxHistoryPerHandoff))

	st := s.status(spec)
	require.Len(t, st.Groups, 1)
	require.Len(t, st.Groups[0].Sequences, 1, "the supervisor has heard of every boundary: only the open sequence is left")
	require.Equal(t, s.storedOffsets(spec), st.Groups[0].Sequences[0].Start, "and it starts at the committed offsets")
	require.Empty(t, st.RecentErrors)

	s.stopAndWait(spec, run)
	s.recordHistories(spec)
	s.requireExactlyOnce(spec, gen.RunID, first+steady)
}

// waitAllHandedOff waits until every event produced so far is read and
// published by the handoffs' own triggers: no checkpoint is sent.
func (s *stack) waitAllHandedOff(spec domain.Spec) {
	s.t.Helper()
	s.waitCaughtUp(spec)
	latest := s.latest(spec)
	require.Eventually(s.t, func() bool { return s.storedOffsets(spec).Equal(latest) }, time.Minute, 100*time.Millisecond,
		"the handoffs by age did not publish up to %v", latest)
}
