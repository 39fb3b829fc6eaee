package cli

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
	"handoff/internal/testenv"
	"handoff/workflows"
)

// stubSupervisor answers the supervisor's updates and query the way the
// contract in workflows/api.go says, so the CLI can be checked against the
// real SDK and server: how a refused update, a terminated workflow and the
// search attributes look there. It is PENDING for its first half second,
// then RUNNING; a supervisor whose id starts with "stuck" stays PENDING.
func stubSupervisor(ctx workflow.Context, in workflows.SupervisorInput) error {
	state := workflows.StatePending
	done := false
	if !strings.HasPrefix(in.Spec.ID, "stuck") {
		workflow.Go(ctx, func(ctx workflow.Context) {
			if workflow.Sleep(ctx, 500*time.Millisecond) == nil && state == workflows.StatePending {
				state = workflows.StateRunning
			}
		})
	}
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

	r := cli("start", "-f", "testdata/spec.json", "--wait")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "started supervisor orders")
	assert.Contains(t, r.stdout, "  state     RUNNING\n")
	assert.Regexp(t, `^\[\d+\.\ds\] supervisor orders is PENDING\n(.*\n)*\[\d+\.\ds\] supervisor orders is RUNNING\n$`, r.stderr,
		"each state on stderr as it changes")
	d, err := c.DescribeWorkflow(t.Context(), "supervisor/orders", "")
	require.NoError(t, err)
	summary, err := d.GetStaticSummary()
	require.NoError(t, err)
	assert.Equal(t, "supervisor orders: topic orders → datasource orders, 2 task groups", summary)
	for key, want := range map[string]string{
		domain.SearchAttributeSupervisor: "orders", domain.SearchAttributeDataSource: "orders",
		domain.SearchAttributeTopic: "orders", domain.SearchAttributeState: workflows.StatePending, // the stub keeps none up to date
	} {
		got, ok := d.TypedSearchAttributes.GetKeyword(temporal.NewSearchAttributeKeyKeyword(key))
		assert.True(t, ok, key)
		assert.Equal(t, want, got, key)
	}

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

	// A supervisor that does not get to RUNNING: --wait gives up after
	// --timeout, naming the state it is in.
	spec, err := os.ReadFile("testdata/spec.json")
	require.NoError(t, err)
	stuck := writeFile(t, strings.Replace(string(spec), `"id": "orders"`, `"id": "stuck"`, 1))
	start := time.Now()
	r = cli("start", "-f", stuck, "--wait", "--timeout", "2s", "-o", "json")
	assert.Equal(t, ExitFailure, r.code)
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.Contains(t, r.stderr, "supervisor stuck is PENDING\n")
	assert.Contains(t, r.stderr, "error: supervisor stuck is not RUNNING or IDLE after 2s: it is PENDING; no recent errors (see `starter status stuck`)\n")
	var got startResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), "what was started is printed: %s", r.stdout)
	assert.Equal(t, "supervisor/stuck", got.WorkflowID)
	assert.Equal(t, workflows.StatePending, got.State)
	r = cli("stop", "stuck", "--now")
	require.Equal(t, ExitOK, r.code, r.stderr)
}
