package cli

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"handoff/internal/testenv"
	"handoff/workflows"
)

// stubSupervisor answers the supervisor's updates and query the way the
// contract in workflows/api.go says, so the CLI can be checked against the
// real SDK and server: how a refused update, a terminated workflow and the
// search attributes look there.
func stubSupervisor(ctx workflow.Context, in workflows.SupervisorInput) error {
	state := workflows.StateRunning
	done := false
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(workflow.SetQueryHandler(ctx, workflows.QueryStatus, func() (workflows.SupervisorStatus, error) {
		return workflows.SupervisorStatus{ID: in.Spec.ID, State: state, Topic: in.Spec.IOConfig.Topic, DataSource: in.Spec.DataSchema.DataSource}, nil
	}))
	must(workflow.SetUpdateHandlerWithOptions(ctx, workflows.UpdateSuspend,
		func(workflow.Context) (workflows.OperationResult, error) { return workflows.OperationResult{}, nil },
		workflow.UpdateHandlerOptions{Validator: func() error { return errors.New("not now: 2 sequences are publishing") }}))
	must(workflow.SetUpdateHandler(ctx, workflows.UpdateResume, func(workflow.Context) (workflows.OperationResult, error) {
		return workflows.OperationResult{State: state, Message: "was not suspended"}, nil
	}))
	must(workflow.SetUpdateHandler(ctx, workflows.UpdateSpec, func(_ workflow.Context, req workflows.UpdateSpecRequest) (workflows.UpdateSpecResult, error) {
		return workflows.UpdateSpecResult{Changed: req.Spec.IOConfig.TaskCount != in.Spec.IOConfig.TaskCount}, nil
	}))
	must(workflow.SetUpdateHandler(ctx, workflows.UpdateStop, func(workflow.Context, workflows.StopSignal) (workflows.OperationResult, error) {
		state, done = workflows.StateStopped, true
		return workflows.OperationResult{State: state, Message: "nothing to publish"}, nil
	}))
	return workflow.Await(ctx, func() bool { return done && workflow.AllHandlersFinished(ctx) })
}

func TestAgainstTemporalServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	if os.Getenv("TEMPORAL_ADDRESS") != "" {
		// The stub polls the real task queue: never on a shared server.
		t.Skip("TEMPORAL_ADDRESS is set: this test needs its own dev server")
	}
	t.Parallel()
	hostPort := testenv.Temporal(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := client.Dial(client.Options{HostPort: hostPort, Logger: log.NewStructuredLogger(quiet)})
	require.NoError(t, err)
	defer c.Close()
	w := worker.New(c, workflows.TaskQueue, worker.Options{})
	w.RegisterWorkflowWithOptions(stubSupervisor, workflow.RegisterOptions{Name: workflows.SupervisorWorkflowName})
	require.NoError(t, w.Start())
	defer w.Stop()

	env := map[string]string{"TEMPORAL_ADDRESS": hostPort}
	cli := func(args ...string) result {
		return runCLI(t, runOpts{env: env, dial: client.DialContext}, args...)
	}

	r := cli("start", "-f", "testdata/spec.json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "started supervisor orders")
	d, err := c.DescribeWorkflow(t.Context(), "supervisor/orders", "")
	require.NoError(t, err)
	summary, err := d.GetStaticSummary()
	require.NoError(t, err)
	assert.Equal(t, "supervisor orders: topic orders → datasource orders, 2 task groups", summary)
	assert.Len(t, d.TypedSearchAttributes.GetUntypedValues(), 4)

	r = cli("start", "-f", "testdata/spec.json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, "supervisor orders is already running with this spec: nothing to do\n", r.stdout)

	r = cli("suspend", "orders")
	assert.Equal(t, ExitFailure, r.code)
	assert.Equal(t, "error: supervisor orders refused suspend: not now: 2 sequences are publishing\n", r.stderr)

	r = cli("resume", "orders", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.JSONEq(t, `{"supervisorId": "orders", "operation": "resume", "state": "RUNNING", "message": "was not suspended"}`, r.stdout)

	require.EventuallyWithT(t, func(t *assert.CollectT) { // visibility lags a little
		r := cli("list")
		assert.Equal(t, "ID      STATE    DATASOURCE  TOPIC   LAG\norders  RUNNING  orders      orders  0\n", r.stdout)
	}, 10*time.Second, 100*time.Millisecond)

	r = cli("status", "order")
	assert.Equal(t, ExitNotFound, r.code)
	assert.Contains(t, r.stderr, "running supervisors: orders\n")

	r = cli("stop", "orders", "--now")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "terminated supervisor orders; no task group was running")

	r = cli("checkpoint", "orders")
	assert.Equal(t, ExitNotFound, r.code)
	assert.Contains(t, r.stderr, `supervisor "orders" is not running (workflow supervisor/orders Terminated)`)

	r = cli("stop", "orders")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "supervisor orders is not running (workflow supervisor/orders Terminated)")
}
