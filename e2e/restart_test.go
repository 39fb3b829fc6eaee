package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/activities"
	"handoff/internal/eventgen"
	"handoff/workflows"
)

// TestGroupKilledMidSequenceIsRestartedExactlyOnce terminates a task group
// while it holds read but unpublished chunks: the supervisor must restart it
// from the committed offsets, and nothing may be lost or published twice.
func TestGroupKilledMidSequenceIsRestartedExactlyOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t, 2, activities.Faults{})
	spec := s.spec(1)
	gen := eventgen.New(s.name, 4)
	const wave = 4000

	s.produce(gen, wave)
	run := s.startSupervisor(spec)
	n := s.checkpointUntilPublished(spec, 0)
	s.produce(gen, wave)
	s.waitCaughtUp(spec) // the open sequence now holds the second wave, unpublished

	group := workflows.TaskGroupWorkflowID(spec.ID, 0)
	require.NoError(t, s.temporal.TerminateWorkflow(context.Background(), group, "", "test: kill the group"))
	require.Eventually(t, func() bool {
		st := s.status(spec)
		return len(st.Groups) == 1 && st.Groups[0].Generation == 2 && st.Groups[0].Running
	}, 30*time.Second, 200*time.Millisecond, "the supervisor did not start a new generation")

	s.produce(gen, wave)
	s.checkpointUntilPublished(spec, n)
	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)
	s.requireExactlyOnce(spec, gen.RunID, 3*wave)
}
