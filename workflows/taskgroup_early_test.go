package workflows

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// TestGroupReadsOnWhileItsHandoffIsRecorded: when a sequence closes, the
// group streams into the next one at once, from the boundary, while the
// supervisor records the close; the answer adopts what was read early, and
// the sequences publish back to back with nothing read twice or skipped.
// A run that records selfCloseVersion closes a full sequence without
// asking (taskgroup_selfclose_test.go); the early sequence is what its
// user checkpoints keep, and what runs from before it did at every handoff.
func TestGroupReadsOnWhileItsHandoffIsRecorded(t *testing.T) {
	read := steppedStream(func(n int) (int64, string) {
		if n == 1 {
			return 50, protocol.StreamMaxRows // 100 rows: the sequence is full
		}
		return 10, protocol.StreamQuiet
	})
	g := newStreamGroup(t, read, time.Minute)
	g.env.OnGetVersion(selfCloseChange, workflow.DefaultVersion, selfCloseVersion).Return(workflow.DefaultVersion)
	// Longer than a stream runs: a stream into the next sequence that ends
	// before the answer comes was started before it.
	g.answerAfter = 3 * time.Minute
	publishes := g.publishes()
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

	published := publishes()
	require.GreaterOrEqual(t, len(published), 2)
	require.Equal(t, 0, published[0].SequenceID)
	require.Equal(t, domain.Offsets{domain.P(0): 50, domain.P(1): 50}, published[0].End)
	require.Equal(t, 4, published[1].SequenceID, "the early sequence publishes under the id the answer named")
	require.Equal(t, []string{next + "/c2"}, published[1].StagingKeys[:1], "with what was read early")
	for i := 1; i < len(published); i++ {
		require.Equal(t, published[i-1].End, published[i].Start, "sequences publish back to back")
	}
}
