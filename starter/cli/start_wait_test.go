package cli

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"

	"handoff/workflows"
)

// statesInTurn is a fake client whose supervisor goes through states, one
// per status query, and then stays in the last.
func statesInTurn(states ...workflows.SupervisorStatus) *fakeClient {
	fc := &fakeClient{status: states[0]}
	fc.onQuery = func(n int) {
		fc.mu.Lock()
		defer fc.mu.Unlock()
		fc.status = states[min(n, len(states)-1)]
	}
	return fc
}

func supervisorIn(state, detailed string, errs ...string) workflows.SupervisorStatus {
	st := workflows.SupervisorStatus{ID: "orders", State: state, DetailedState: detailed}
	for i, e := range errs {
		st.RecentErrors = append(st.RecentErrors, workflows.ErrorRecord{Time: watchStart.Add(time.Duration(i) * time.Second), Message: e})
	}
	return st
}

func TestStartWaitPrintsEachStateUntilRunning(t *testing.T) {
	t.Parallel()
	fc := statesInTurn(
		supervisorIn(workflows.StatePending, ""),
		supervisorIn(workflows.StatePending, ""),
		supervisorIn(workflows.StatePending, "CONNECTING_TO_STREAM"),
		supervisorIn(workflows.StateRunning, ""),
	)
	r := runCLI(t, runOpts{dial: dialTo(fc, nil), now: steppingClock(watchStart, 100*time.Millisecond)},
		"start", "-f", "testdata/spec.json", "--wait")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, `started supervisor orders
  workflow  supervisor/orders
  run       run-1
  state     RUNNING
`, r.stdout)
	assert.Equal(t, `[0.1s] supervisor orders is PENDING
[0.2s] supervisor orders is PENDING (CONNECTING_TO_STREAM)
[0.3s] supervisor orders is RUNNING
`, r.stderr, "each change once, as it happens")
	assert.Equal(t, 4, fc.queries)
}

func TestStartWaitJSONHasTheState(t *testing.T) {
	t.Parallel()
	fc := statesInTurn(supervisorIn(workflows.StatePending, ""), supervisorIn(workflows.StateIdle, ""))
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "start", "-f", "testdata/spec.json", "--wait", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var got startResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	assert.Equal(t, workflows.StateIdle, got.State, "IDLE is ready too")
	assert.Equal(t, "run-1", got.RunID)
}

func TestStartWaitOfARunningSupervisorWaitsAfterTheUpdate(t *testing.T) {
	t.Parallel()
	fc := statesInTurn(supervisorIn(workflows.StateRunning, "APPLYING_SPEC"))
	fc.startErr = serviceerror.NewWorkflowExecutionAlreadyStarted("already started", "req", "run-0")
	fc.updateResult = workflows.UpdateSpecResult{Changed: true}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "start", "-f", "testdata/spec.json", "--wait")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, "supervisor orders: spec updated\nsupervisor orders is RUNNING\n", r.stdout)
	require.Len(t, fc.updates, 1)

	r = runCLI(t, runOpts{dial: dialTo(fc, nil)}, "start", "-f", "testdata/spec.json", "--wait", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.JSONEq(t, `{"supervisorId": "orders", "workflowId": "supervisor/orders", "changed": true, "message": "", "state": "RUNNING"}`, r.stdout)
}

func TestStartWaitFailsWhenTheSupervisorIsUnhealthy(t *testing.T) {
	t.Parallel()
	fc := statesInTurn(
		supervisorIn(workflows.StatePending, ""),
		supervisorIn(workflows.StateUnhealthyTasks, "", "group 0: consume p1: broker down", "group 1: consume p0: broker down"),
	)
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "start", "-f", "testdata/spec.json", "--wait")
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, "supervisor orders is PENDING\n")
	assert.Contains(t, r.stderr, "supervisor orders is UNHEALTHY_TASKS\n")
	assert.Contains(t, r.stderr, "error: supervisor orders is UNHEALTHY_TASKS; recent errors (see `starter status orders`):\n"+
		"  2026-01-02T03:04:05Z  group 0: consume p1: broker down\n"+
		"  2026-01-02T03:04:06Z  group 1: consume p0: broker down\n")
	assert.NotContains(t, r.stderr, "--help")
	assert.Contains(t, r.stdout, "started supervisor orders", "what was started is still printed")
	assert.Contains(t, r.stdout, "state     UNHEALTHY_TASKS")
}

func TestStartWaitFailsWhenSuspendedOrStopped(t *testing.T) {
	t.Parallel()
	for state, want := range map[string]string{
		workflows.StateSuspended: "supervisor orders is SUSPENDED: it runs again after `starter resume orders`",
		workflows.StateStopped:   "supervisor orders is STOPPED: it will not run again",
	} {
		fc := statesInTurn(supervisorIn(state, ""))
		r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "start", "-f", "testdata/spec.json", "--wait", "-o", "json")
		assert.Equal(t, ExitFailure, r.code, state)
		assert.Contains(t, r.stderr, want, state)
		var got startResult
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
		assert.Equal(t, state, got.State)
	}
}

func TestStartWaitTimesOutWithTheLastState(t *testing.T) {
	t.Parallel()
	fc := statesInTurn(supervisorIn(workflows.StatePending, "CONNECTING_TO_STREAM", "discover partitions of orders: unknown topic"))
	start := time.Now()
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "start", "-f", "testdata/spec.json", "--wait", "--timeout", "400ms")
	assert.Equal(t, ExitFailure, r.code)
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.Contains(t, r.stderr, "error: supervisor orders is not RUNNING or IDLE after 400ms: it is PENDING (CONNECTING_TO_STREAM); recent errors (see `starter status orders`):\n"+
		"  2026-01-02T03:04:05Z  discover partitions of orders: unknown topic\n")
	assert.Greater(t, fc.queries, 1, "it polled")
}

func TestStartWaitTimesOutWhenNothingAnswers(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{queryErr: serviceerror.NewDeadlineExceeded("no worker polls the task queue")}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "start", "-f", "testdata/spec.json", "--wait", "--timeout", "300ms")
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, "supervisor orders has not answered yet: ")
	assert.Contains(t, r.stderr, "error: supervisor orders did not answer its status query within 300ms: ")
	assert.Contains(t, r.stderr, "no worker polls the task queue")
}

func TestStartWaitBadSpecStartsNothing(t *testing.T) {
	t.Parallel()
	path := writeFile(t, `{"id": "orders", "ioConfig": {"taskCount": "two"}}`)
	r := runCLI(t, runOpts{}, "start", "-f", path, "--wait") // dialing fails the test
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, "ioConfig.taskCount")
	assert.Empty(t, r.stdout)
}
