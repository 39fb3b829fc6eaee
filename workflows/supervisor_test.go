package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// The supervisor lays out one child per group (partition % taskCount) from
// StartOffsets, records checkpoint boundaries and answers them (the same
// answer for a repeat), forwards user checkpoints, and on stop signals every
// group and waits for all of them to finish.
func TestSupervisorGroupsCheckpointsAndStop(t *testing.T) {
	spec := testSpec()
	spec.IOConfig.TaskCount = 2
	h := newSupervisorHarness(t, spec)
	h.discover = func(int) (protocol.DiscoverResult, error) {
		return protocol.DiscoverResult{
			Partitions: []domain.Partition{domain.P(0), domain.P(1), domain.P(2), domain.P(3)},
			Earliest:   domain.Offsets{domain.P(0): 0, domain.P(1): 0, domain.P(2): 0, domain.P(3): 0},
			Latest:     domain.Offsets{domain.P(0): 200, domain.P(1): 210, domain.P(2): 220, domain.P(3): 230},
		}, nil
	}
	h.startOffsets = protocol.StartOffsetsResult{
		Offsets:         domain.Offsets{domain.P(0): 100, domain.P(1): 110, domain.P(2): 120, domain.P(3): 130},
		Committed:       domain.Offsets{domain.P(0): 100, domain.P(2): 120},
		NextSequenceIDs: map[int]int{0: 7},
	}
	h.finishAfter = map[int]time.Duration{0: time.Second, 1: 15 * time.Second}

	req := CheckpointRequest{Group: 0, Generation: 1, SequenceID: 7, Offsets: domain.Offsets{domain.P(0): 150, domain.P(2): 160}, Reason: ReasonUser}
	later := req
	later.Offsets = domain.Offsets{domain.P(0): 170, domain.P(2): 180}
	h.signal(2*time.Second, SignalCheckpointRequest, req)
	h.signal(3*time.Second, SignalCheckpointRequest, req)   // a resend
	h.signal(4*time.Second, SignalCheckpointRequest, later) // a late repeat: the recorded boundary stands

	var running SupervisorStatus
	h.at(5*time.Second, func() { running = h.status() })
	h.signal(6*time.Second, SignalCheckpoint, CheckpointSignal{Groups: []int{1}})
	h.signal(7*time.Second, SignalCheckpoint, CheckpointSignal{})
	h.signal(12*time.Second, SignalStop, StopSignal{})
	var stopping SupervisorStatus
	h.at(20*time.Second, func() { stopping = h.status() })

	perChunk(h.env)
	h.env.ExecuteWorkflow(SupervisorWorkflowName, SupervisorInput{Spec: spec})
	require.True(t, h.env.IsWorkflowCompleted())
	require.NoError(t, h.env.GetWorkflowError())

	// One child per group, with its partitions and first sequence.
	started := h.started()
	require.Len(t, started, 2, "one start per group, no restarts")
	byGroup := map[int]TaskGroupInput{}
	for _, in := range started {
		byGroup[in.Group] = in
	}
	require.Equal(t, TaskGroupInput{
		Spec: spec, Group: 0, Generation: 1, Partitions: []domain.Partition{domain.P(0), domain.P(2)},
		Sequences: []domain.Sequence{{ID: 7, Start: domain.Offsets{domain.P(0): 100, domain.P(2): 120}}}, NextSequenceID: 8,
	}, byGroup[0])
	require.Equal(t, TaskGroupInput{
		Spec: spec, Group: 1, Generation: 2, Partitions: []domain.Partition{domain.P(1), domain.P(3)},
		Sequences: []domain.Sequence{{ID: 0, Start: domain.Offsets{domain.P(1): 110, domain.P(3): 130}}}, NextSequenceID: 1,
	}, byGroup[1])

	// The boundary is recorded once and every request gets the same answer.
	want := SetEndOffsets{SequenceID: 7, End: domain.Offsets{domain.P(0): 150, domain.P(2): 160}, NextSequenceID: 8}
	g0 := h.signalsTo(0)
	userCheckpoint := childSignal{name: SignalGroupCheckpoint, reason: ReasonUser}
	require.Equal(t, []childSignal{
		{name: SignalSetEndOffsets, setEnd: want},
		{name: SignalSetEndOffsets, setEnd: want},
		{name: SignalSetEndOffsets, setEnd: want},
		userCheckpoint, // the checkpoint of all groups
		{name: SignalGroupStop},
	}, g0)
	// User checkpoints go to the listed groups only; stop goes to all.
	require.Equal(t, []childSignal{userCheckpoint, userCheckpoint, {name: SignalGroupStop}}, h.signalsTo(1))

	require.Equal(t, StateRunning, running.State)
	require.Equal(t, []domain.Partition{domain.P(0), domain.P(1), domain.P(2), domain.P(3)}, running.Partitions)
	require.Len(t, running.Groups, 2)
	require.Equal(t, GroupStatus{
		Group: 0, WorkflowID: TaskGroupWorkflowID(spec.ID, 0), Generation: 1, Partitions: []domain.Partition{domain.P(0), domain.P(2)},
		Sequences: []SequenceStatus{
			{Sequence: domain.Sequence{ID: 7, Start: domain.Offsets{domain.P(0): 100, domain.P(2): 120}, End: domain.Offsets{domain.P(0): 150, domain.P(2): 160}}},
			{Sequence: domain.Sequence{ID: 8, Start: domain.Offsets{domain.P(0): 150, domain.P(2): 160}}},
		},
		Running: true,
	}, running.Groups[0], "one boundary recorded, one sequence opened")
	require.Equal(t, GroupStatus{
		Group: 1, WorkflowID: TaskGroupWorkflowID(spec.ID, 1), Generation: 2, Partitions: []domain.Partition{domain.P(1), domain.P(3)},
		Sequences: []SequenceStatus{{Sequence: domain.Sequence{ID: 0, Start: domain.Offsets{domain.P(1): 110, domain.P(3): 130}}}},
		Running:   true,
	}, running.Groups[1])
	require.Empty(t, running.RecentErrors)

	require.Equal(t, StateStopping, stopping.State, "stopping until every group finished")
	final := h.status()
	require.Equal(t, StateStopped, final.State)
	require.Empty(t, final.RecentErrors)
	require.GreaterOrEqual(t, h.discovers(), 3, "one Discover per period")
}

// A Discover that fails with a non-retryable TopicNotFound marks the
// supervisor unhealthy with the error, is not retried within the period,
// and is tried again next period; once it succeeds the supervisor runs.
func TestSupervisorDiscoverTopicNotFoundIsUnhealthyAndRetried(t *testing.T) {
	spec := testSpec()
	h := newSupervisorHarness(t, spec)
	const msg = `topic "events" not found`
	h.discover = func(n int) (protocol.DiscoverResult, error) {
		if n <= 2 {
			return protocol.DiscoverResult{}, temporal.NewNonRetryableApplicationError(msg, domain.ErrTopicNotFound, nil)
		}
		return protocol.DiscoverResult{Partitions: []domain.Partition{domain.P(0)}, Latest: domain.Offsets{domain.P(0): 10}}, nil
	}
	h.startOffsets = protocol.StartOffsetsResult{Offsets: domain.Offsets{domain.P(0): 0}}

	type snap struct {
		st        SupervisorStatus
		discovers int
		children  int
	}
	snaps := map[string]snap{}
	take := func(name string) func() {
		return func() { snaps[name] = snap{h.status(), h.discovers(), len(h.started())} }
	}
	h.at(5*time.Second, take("first"))
	h.at(15*time.Second, take("second"))
	h.at(25*time.Second, take("recovered"))
	h.signal(26*time.Second, SignalStop, StopSignal{})

	perChunk(h.env)
	h.env.ExecuteWorkflow(SupervisorWorkflowName, SupervisorInput{Spec: spec})
	require.True(t, h.env.IsWorkflowCompleted())
	require.NoError(t, h.env.GetWorkflowError())

	first := snaps["first"]
	require.Equal(t, StateUnhealthySupervisor, first.st.State)
	require.Len(t, first.st.RecentErrors, 1)
	require.Contains(t, first.st.RecentErrors[0].Message, msg)
	require.Contains(t, first.st.RecentErrors[0].Message, domain.ErrTopicNotFound)
	require.Equal(t, 1, first.discovers, "a non-retryable error is not retried")
	require.Empty(t, first.st.Groups)
	require.Zero(t, first.children)

	second := snaps["second"]
	require.Equal(t, StateUnhealthySupervisor, second.st.State)
	require.Len(t, second.st.RecentErrors, 2)
	require.Equal(t, 2, second.discovers, "Discover is tried again next period")

	rec := snaps["recovered"]
	require.Equal(t, 3, rec.discovers)
	require.Equal(t, StateRunning, rec.st.State)
	require.Equal(t, 1, rec.children)
	require.Len(t, rec.st.Groups, 1)
	require.True(t, rec.st.Groups[0].Running)

	require.Equal(t, StateStopped, h.status().State)
}
