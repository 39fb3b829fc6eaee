package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/activities"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/internal/testenv"
	"handoff/workflows"
)

// TestContinueAsNewKeepsExactlyOnce runs until both the supervisor and a
// task group have continued as new (the test dev server suggests it after
// testenv.SuggestContinueAsNewAfter events), with checkpoints and sequences
// in flight across the boundaries; the children must stay attached and every
// event must still be published exactly once.
func TestContinueAsNewKeepsExactlyOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	spec := s.spec(1)
	// Sequences also hand off by age, closed by the group itself, on both
	// sides of the boundaries.
	spec.TuningConfig.IntermediateHandoffPeriod = domain.Duration(time.Second)
	gen := eventgen.New(s.name, 5)
	const wave = 3000
	ctx := context.Background()

	s.produce(gen, wave)
	run := s.startSupervisor(spec)
	n := s.checkpointUntilPublished(spec, 0)
	group := workflows.TaskGroupWorkflowID(spec.ID, 0)
	firstGroupRun := s.currentRunID(group)

	produced := int64(wave)
	require.Eventually(t, func() bool {
		s.produce(gen, 200)
		produced += 200
		s.signal(spec, workflows.SignalCheckpoint, workflows.CheckpointSignal{})
		return s.currentRunID(workflows.SupervisorWorkflowID(spec.ID)) != run.GetRunID() &&
			s.currentRunID(group) != firstGroupRun
	}, 2*time.Minute, 300*time.Millisecond, "no continue-as-new after %d events of history", testenv.SuggestContinueAsNewAfter)

	s.checkpointUntilPublished(spec, n)
	s.waitCaughtUp(spec)
	st := s.status(spec)
	require.Equal(t, 1, st.Groups[0].Generation, "the group must have continued, not been restarted")
	s.signal(spec, workflows.SignalStop, workflows.StopSignal{})
	final := s.temporal.GetWorkflow(ctx, workflows.SupervisorWorkflowID(spec.ID), "")
	waitCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	require.NoError(t, final.Get(waitCtx, nil))
	s.recordHistories(spec)
	s.requireExactlyOnce(spec, gen.RunID, produced)
}
