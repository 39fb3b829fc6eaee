package activities_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"handoff/internal/protocol"
	"handoff/internal/testenv"
)

// endAs is a test workflow that ends the way it is told: "fail" with an
// OffsetMismatch error, "long" with a failure too long to report whole,
// "plain" with an error without a type, "wait" by waiting for a signal,
// anything else by completing.
func endAs(ctx workflow.Context, how string) error {
	switch how {
	case "fail":
		return temporal.NewNonRetryableApplicationError("boom", "OffsetMismatch", nil)
	case "long":
		return temporal.NewNonRetryableApplicationError(strings.Repeat("é", 600), "Long", nil)
	case "plain":
		return workflowError("plain failure")
	case "wait":
		workflow.GetSignalChannel(ctx, "go").Receive(ctx, nil)
	}
	return nil
}

type workflowError string

func (e workflowError) Error() string { return string(e) }

// temporalFixture returns a client of the test server and starts a worker
// for endAs on a task queue of the test's own.
func temporalFixture(t *testing.T) (client.Client, string) {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: testenv.Temporal(t)})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	queue := "activities-test-" + t.Name()
	w := worker.New(c, queue, worker.Options{})
	w.RegisterWorkflow(endAs)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return c, queue
}

func start(t *testing.T, c client.Client, queue, id, how string) client.WorkflowRun {
	t.Helper()
	run, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{
		ID: id, TaskQueue: queue, WorkflowExecutionTimeout: time.Minute,
	}, endAs, how)
	require.NoError(t, err)
	return run
}

// unique prefixes workflow ids, so reruns against a shared server
// (TEMPORAL_ADDRESS) do not meet earlier runs.
func unique(t *testing.T) string { return fmt.Sprintf("%s/%d/", t.Name(), time.Now().UnixNano()) }

func TestGroupStatesReportsHowGroupsEnded(t *testing.T) {
	t.Parallel()
	acts, env := fixture(t)
	c, queue := temporalFixture(t)
	acts.Temporal = c
	prefix := unique(t)
	ids := map[string]string{}
	for _, how := range []string{"fail", "long", "plain", "wait", "complete"} {
		ids[how] = prefix + how
		run := start(t, c, queue, ids[how], how)
		if how != "wait" {
			_ = run.Get(context.Background(), nil) // ended
		}
	}
	ids["missing"] = prefix + "missing"

	v, err := env.ExecuteActivity(protocol.ActivityGroupStates, protocol.GroupStatesInput{WorkflowIDs: []string{
		ids["fail"], ids["long"], ids["plain"], ids["wait"], ids["complete"], ids["missing"],
	}})
	require.NoError(t, err)
	var res protocol.GroupStatesResult
	require.NoError(t, v.Get(&res))

	require.Equal(t, map[string]bool{
		ids["fail"]: false, ids["long"]: false, ids["plain"]: false, ids["wait"]: true, ids["complete"]: false, ids["missing"]: false,
	}, res.Running)
	require.NotContains(t, res.Closed, ids["wait"])
	require.Equal(t, protocol.GroupClosed{Status: "Failed", Failure: "OffsetMismatch: boom"}, res.Closed[ids["fail"]])
	require.Equal(t, protocol.GroupClosed{Status: "Completed"}, res.Closed[ids["complete"]])
	require.Equal(t, protocol.GroupClosed{Status: "NotFound"}, res.Closed[ids["missing"]])
	require.Equal(t, "Failed", res.Closed[ids["plain"]].Status)
	require.Contains(t, res.Closed[ids["plain"]].Failure, "plain failure")

	long := res.Closed[ids["long"]]
	require.Equal(t, "Failed", long.Status)
	require.True(t, strings.HasPrefix(long.Failure, "Long: éé"), long.Failure)
	require.True(t, strings.HasSuffix(long.Failure, "…"), long.Failure)
	require.LessOrEqual(t, len(long.Failure), 500)
	require.True(t, strings.ToValidUTF8(long.Failure, "?") == long.Failure, "cut inside a character")
}

func TestTerminateGroups(t *testing.T) {
	t.Parallel()
	acts, env := fixture(t)
	c, queue := temporalFixture(t)
	acts.Temporal = c
	prefix := unique(t)
	waiting := start(t, c, queue, prefix+"wait", "wait")
	done := start(t, c, queue, prefix+"complete", "complete")
	require.NoError(t, done.Get(context.Background(), nil))

	ids := []string{prefix + "wait", prefix + "complete", prefix + "missing"}
	_, err := env.ExecuteActivity(protocol.ActivityTerminateGroups, protocol.TerminateGroupsInput{WorkflowIDs: ids, Reason: "test"})
	require.NoError(t, err, "a missing or completed workflow is not an error")

	var terminated *temporal.TerminatedError
	require.ErrorAs(t, waiting.Get(context.Background(), nil), &terminated)

	// Twice is fine: all are closed or missing now.
	_, err = env.ExecuteActivity(protocol.ActivityTerminateGroups, protocol.TerminateGroupsInput{WorkflowIDs: ids, Reason: "again"})
	require.NoError(t, err)

	v, err := env.ExecuteActivity(protocol.ActivityGroupStates, protocol.GroupStatesInput{WorkflowIDs: ids[:1]})
	require.NoError(t, err)
	var res protocol.GroupStatesResult
	require.NoError(t, v.Get(&res))
	require.Equal(t, protocol.GroupClosed{Status: "Terminated"}, res.Closed[ids[0]])
}
