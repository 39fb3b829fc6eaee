package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

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
	supervisor, group := workflows.SupervisorWorkflowID(spec.ID), workflows.TaskGroupWorkflowID(spec.ID, 0)
	s.waitAllHandedOff(spec)
	t0, p0 := time.Now(), s.publishedSequences(ds)

	sent, err := gen.Produce(context.Background(), s.brokers, s.name, 100, steady, false) // 15 s at 100 events/s
	require.NoError(t, err)
	require.EqualValues(t, steady, sent)
	s.waitAllHandedOff(spec)
	handoffs := s.publishedSequences(ds) - p0
	require.GreaterOrEqual(t, handoffs, 5, "handoffs by age while events arrived")

	// The group asked nothing and told nothing; each Publish told the
	// supervisor, once.
	groupEvents, supEvents := s.eventsSince(group, t0), s.eventsSince(supervisor, t0)
	for _, ev := range groupEvents {
		if a := ev.GetSignalExternalWorkflowExecutionInitiatedEventAttributes(); a != nil {
			require.NotContains(t, []string{workflows.SignalCheckpointRequest, workflows.SignalSequencePublished}, a.GetSignalName())
		}
	}
	told := 0
	for _, ev := range supEvents {
		if a := ev.GetWorkflowExecutionSignaledEventAttributes(); a != nil {
			require.NotEqual(t, workflows.SignalCheckpointRequest, a.GetSignalName())
			if a.GetSignalName() == workflows.SignalSequencePublished {
				told++
			}
		}
	}
	require.Equal(t, handoffs, told, "one notice per published sequence")

	// The budget, unless a continue-as-new (which the test server suggests
	// after 150 events) fell in the window and added its own events.
	all := append(groupEvents, supEvents...)
	perHandoff := float64(len(all)) / float64(handoffs)
	t.Logf("%d handoffs wrote %d history events: %.1f each; by type %v", handoffs, len(all), perHandoff, countByType(all))
	if countByType(all)[enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW] == 0 {
		require.LessOrEqual(t, perHandoff, float64(maxHistoryPerHandoff))
	}

	st := s.status(spec)
	require.Equal(t, s.storedOffsets(spec), st.Groups[0].Sequences[0].Start, "and it starts at the committed offsets")
	require.Empty(t, st.RecentErrors)

	s.stopAndWait(spec, run)
	s.recordHistories(spec)
	s.requireExactlyOnce(spec, gen.RunID, first+steady)
}

// eventsSince are the history events of every run of workflow id written
// at or after from.
func (s *stack) eventsSince(id string, from time.Time) []*historypb.HistoryEvent {
	s.t.Helper()
	ctx := context.Background()
	runs := map[string]bool{s.currentRunID(id): true}
	list, err := s.temporal.ListWorkflow(ctx, listRequest(id))
	require.NoError(s.t, err)
	for _, r := range list.GetExecutions() {
		runs[r.GetExecution().GetRunId()] = true
	}
	var out []*historypb.HistoryEvent
	for run := range runs {
		it := s.temporal.GetWorkflowHistory(ctx, id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			require.NoError(s.t, err)
			if !ev.GetEventTime().AsTime().Before(from) {
				out = append(out, ev)
			}
		}
	}
	return out
}

func countByType(evs []*historypb.HistoryEvent) map[enumspb.EventType]int {
	n := map[enumspb.EventType]int{}
	for _, ev := range evs {
		n[ev.GetEventType()]++
	}
	return n
}

// waitAllHandedOff waits until every event produced so far is read and
// published by the handoffs' own triggers (no checkpoint is sent), and the
// supervisor has heard of each.
func (s *stack) waitAllHandedOff(spec domain.Spec) {
	s.t.Helper()
	s.waitCaughtUp(spec)
	latest := s.latest(spec)
	require.Eventually(s.t, func() bool { return s.storedOffsets(spec).Equal(latest) }, time.Minute, 100*time.Millisecond,
		"the handoffs by age did not publish up to %v", latest)
	require.Eventually(s.t, func() bool {
		for _, g := range s.status(spec).Groups {
			if len(g.Sequences) != 1 {
				return false
			}
		}
		return true
	}, 30*time.Second, 100*time.Millisecond, "the supervisor hears of every boundary: only the open sequences are left")
}
