package activities_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
	"handoff/internal/protocol"
	"handoff/internal/testenv"
)

// localGroup stands for a task group: it runs one stream.
func localGroup(ctx workflow.Context, in protocol.ConsumeStreamInput) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Hour, HeartbeatTimeout: 2 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	return workflow.ExecuteActivity(ctx, protocol.ActivityConsumeStream, in).Get(ctx, nil)
}

// localWatch stands for a supervisor: it runs one watch.
func localWatch(ctx workflow.Context, in protocol.WatchInput) (protocol.WatchResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Hour, HeartbeatTimeout: 5 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	var res protocol.WatchResult
	err := workflow.ExecuteActivity(ctx, protocol.ActivityWatch, in).Get(ctx, &res)
	return res, err
}

// A watch whose group's stream runs in the same worker reads the stream's
// positions from it without describing the group, and still sees the
// group end at once when its workflow is terminated (the stream itself
// would find out only at its next heartbeat, 80 s on): the end is
// described as before.
func TestWatchReadsLocalStreamsAndSeesTheirGroupsEnd(t *testing.T) {
	t.Parallel()
	acts, _, _ := streamFixture(t, 0)
	c, err := client.Dial(client.Options{HostPort: testenv.Temporal(t)})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	acts.Temporal = c
	queue := fmt.Sprintf("watch-local-%d", time.Now().UnixNano())
	w := worker.New(c, queue, worker.Options{})
	acts.Register(w)
	w.RegisterWorkflow(localGroup)
	w.RegisterWorkflow(localWatch)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	ctx := t.Context()
	group := queue + "/group-0"
	_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: group, TaskQueue: queue}, localGroup, protocol.ConsumeStreamInput{
		Spec: boundsSpec("json"), SequenceName: "bounds_g0_s0", From: domain.Offsets{domain.P(0): 0}, MaxRun: time.Hour,
	})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return acts.StreamsHere(group) }, 30*time.Second, 50*time.Millisecond)

	watch := func(maxRun time.Duration) protocol.WatchResult {
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, localWatch, protocol.WatchInput{
			Topic: "json", Every: 100 * time.Millisecond, MaxRun: maxRun,
			Known: protocol.WatchView{Partitions: []domain.Partition{domain.P(0)}, Groups: map[string]bool{group: true}, CaughtUp: true},
		})
		require.NoError(t, err)
		var res protocol.WatchResult
		require.NoError(t, run.Get(ctx, &res))
		return res
	}
	res := watch(2 * time.Second)
	require.Equal(t, "max-run", res.Reason, "nothing changed")
	require.Equal(t, domain.Offsets{domain.P(0): 0}, res.Current, "the stream's position")
	require.Zero(t, acts.GroupsDescribed(), "the group's stream runs here: no Describe")

	require.NoError(t, c.TerminateWorkflow(ctx, group, "", "test: the group ends"))
	require.True(t, acts.StreamsHere(group), "the stream has not noticed yet")
	start := time.Now()
	res = watch(time.Minute)
	require.Equal(t, fmt.Sprintf("group %s running=false", group), res.Reason)
	require.Equal(t, "Terminated", res.Closed[group].Status)
	require.Less(t, time.Since(start), 10*time.Second)
	require.Positive(t, acts.GroupsDescribed(), "a listed end is described")
}
