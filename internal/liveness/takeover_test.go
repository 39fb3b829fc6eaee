package liveness

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
	if info.Attempt == 1 {
		activity.RecordHeartbeat(ctx, "staged up to 42")
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
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2},
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

	start := time.Now()
	got, err = TakeOver(ctx, c, Lost{WorkerID: "w1", Identity: identity, Namespace: "default", Activities: []ActivityRef{ref}, Why: "lease expired"})
	require.NoError(t, err)
	require.Len(t, got.Failed, 1)
	var out string
	require.NoError(t, run.Get(ctx, &out))
	took := time.Since(start)
	require.Equal(t, `attempt 2 resumed from "staged up to 42"`, out)
	require.Less(t, took, 15*time.Second, "the next attempt waits its retry interval, not the heartbeat timeout")
	t.Logf("taken over and finished by attempt 2 in %v", took.Round(time.Millisecond))
}
