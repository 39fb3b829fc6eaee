package liveness

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"handoff/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// stuck is an activity whose first attempt heartbeats its progress and
// then hangs, deaf to cancellation, as one on a dead (or paused) worker
// looks to the server; later attempts return the details they resume
// from.
type stuck struct {
	release    chan struct{}
	zombieBeat atomic.Value // the hung attempt's heartbeat error once released
}

func (s *stuck) Run(ctx context.Context) (string, error) {
	info := activity.GetInfo(ctx)
	if info.Attempt <= 2 {
		activity.RecordHeartbeat(ctx, fmt.Sprintf("staged up to %d", 40+info.Attempt))
		<-s.release
		activity.RecordHeartbeat(ctx, "too late")
		time.Sleep(500 * time.Millisecond) // the SDK sends heartbeats in the background
		s.zombieBeat.Store(fmt.Sprint(ctx.Err()))
		return "from the zombie", nil
	}
	var from string
	if activity.HasHeartbeatDetails(ctx) {
		if err := activity.GetHeartbeatDetails(ctx, &from); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("attempt %d resumed from %q", info.Attempt, from), nil
}

func stuckWorkflow(ctx workflow.Context) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute, HeartbeatTimeout: 5 * time.Minute,
		// A policy whose third attempt would wait 20 s.
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 10 * time.Second, BackoffCoefficient: 2},
	})
	var out string
	err := workflow.ExecuteActivity(ctx, "Run").Get(ctx, &out)
	return out, err
}

// Failing a hung attempt by id hands the activity to its next attempt
// within its retry policy's first interval, with the last heartbeat's
// details, long before its heartbeat timeout; the hung attempt, when it
// wakes, is no longer current.
func TestTakeOverRetriesAHungAttemptFromItsLastHeartbeat(t *testing.T) {
	t.Parallel()
	const identity = "4242@gone@test"
	c, err := client.Dial(client.Options{HostPort: testenv.Temporal(t), Identity: identity})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	queue := "liveness-" + t.Name()
	w := worker.New(c, queue, worker.Options{})
	s := &stuck{release: make(chan struct{})}
	w.RegisterWorkflowWithOptions(stuckWorkflow, workflow.RegisterOptions{Name: "stuck"})
	w.RegisterActivityWithOptions(s.Run, activity.RegisterOptions{Name: "Run"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	defer close(s.release)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "stuck-" + t.Name(), TaskQueue: queue}, "stuck")
	require.NoError(t, err)
	var ref ActivityRef
	require.Eventually(t, func() bool {
		d, err := c.DescribeWorkflowExecution(ctx, run.GetID(), run.GetRunID())
		if err != nil || len(d.GetPendingActivities()) == 0 || d.GetPendingActivities()[0].GetHeartbeatDetails() == nil {
			return false
		}
		pa := d.GetPendingActivities()[0]
		ref = ActivityRef{WorkflowID: run.GetID(), RunID: run.GetRunID(), ActivityID: pa.GetActivityId(), Type: "Run", Attempt: 1}
		return true
	}, 20*time.Second, 50*time.Millisecond)

	// Another identity's attempts are not touched.
	got, err := TakeOver(ctx, c, Lost{Identity: "1@elsewhere@", Namespace: "default", Activities: []ActivityRef{ref}})
	require.NoError(t, err)
	require.Empty(t, got.Failed)

	// Twice: the hung attempt 1, then the hung attempt 2; each retry starts
	// at once, not after the policy's growing backoff.
	lost := Lost{WorkerID: "w1", Identity: identity, Namespace: "default", Activities: []ActivityRef{ref}, Why: "lease expired"}
	start := time.Now()
	got, err = TakeOver(ctx, c, lost)
	require.NoError(t, err)
	require.Len(t, got.Failed, 1)
	require.Eventually(t, func() bool {
		d, err := c.DescribeWorkflowExecution(ctx, run.GetID(), run.GetRunID())
		return err == nil && len(d.GetPendingActivities()) == 1 && d.GetPendingActivities()[0].GetAttempt() == 2 &&
			d.GetPendingActivities()[0].GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED
	}, 5*time.Second, 20*time.Millisecond, "attempt 2 started within its policy's first interval (10 s)")
	require.Less(t, time.Since(start), 3*time.Second)
	time.Sleep(300 * time.Millisecond) // its heartbeat reaches the server
	start = time.Now()
	got, err = TakeOver(ctx, c, lost)
	require.NoError(t, err)
	require.Len(t, got.Failed, 1)
	var out string
	require.NoError(t, run.Get(ctx, &out))
	took := time.Since(start)
	require.Equal(t, `attempt 3 resumed from "staged up to 42"`, out)
	require.Less(t, took, 3*time.Second, "the third attempt starts at once, not after the policy's 20 s backoff")
	t.Logf("taken over twice; the third attempt finished %v after the second takeover", took.Round(time.Millisecond))
}

// An attempt the server handed to the worker just before it died, which
// its lease never listed, is found by the sweep of the namespace's
// running workflows and failed like a listed one.
func TestTakeOverFindsAnAttemptTheLeaseNeverListed(t *testing.T) {
	t.Parallel()
	const identity = "4343@gone@unlisted"
	c, err := client.Dial(client.Options{HostPort: testenv.Temporal(t), Identity: identity})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	queue := "liveness-" + t.Name()
	w := worker.New(c, queue, worker.Options{})
	s := &stuck{release: make(chan struct{})}
	w.RegisterWorkflowWithOptions(stuckWorkflow, workflow.RegisterOptions{Name: "stuck"})
	w.RegisterActivityWithOptions(s.Run, activity.RegisterOptions{Name: "Run"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	defer close(s.release)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "stuck-" + t.Name(), TaskQueue: queue}, "stuck")
	require.NoError(t, err)
	attemptStarted := func(n int32) func() bool {
		return func() bool {
			d, err := c.DescribeWorkflowExecution(ctx, run.GetID(), run.GetRunID())
			return err == nil && len(d.GetPendingActivities()) == 1 && d.GetPendingActivities()[0].GetAttempt() == n &&
				d.GetPendingActivities()[0].GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED
		}
	}
	require.Eventually(t, attemptStarted(1), 20*time.Second, 50*time.Millisecond)
	// Visibility lists the run a moment after it started.
	require.Eventually(t, func() bool {
		n, err := c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{
			Namespace: "default", Query: fmt.Sprintf("WorkflowId = '%s' AND ExecutionStatus = 'Running'", run.GetID())})
		return err == nil && n.GetCount() == 1
	}, 20*time.Second, 100*time.Millisecond)

	got, err := TakeOver(ctx, c, Lost{WorkerID: "w2", Identity: identity, Namespace: "default", Why: "lease expired"})
	require.NoError(t, err)
	require.Len(t, got.Failed, 1)
	require.Equal(t, ActivityRef{WorkflowID: run.GetID(), RunID: run.GetRunID(), ActivityID: got.Failed[0].ActivityID, Type: "Run", Attempt: 1}, got.Failed[0])
	require.Equal(t, 1, got.Unlisted)
	require.GreaterOrEqual(t, got.Swept, 1)
	require.Eventually(t, attemptStarted(2), 5*time.Second, 20*time.Millisecond, "attempt 2 started within its policy's first interval (10 s)")
}
