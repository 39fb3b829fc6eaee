package cli

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"handoff/internal/domain"
	"handoff/workflows"
)

// These tests use a fake client: the end-to-end tests cover a real server.

func TestStartStartsSupervisor(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{}
	var opts client.Options
	r := runCLI(t, runOpts{dial: dialTo(fc, &opts)}, "start", "-f", "testdata/spec.json", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)

	assert.Equal(t, "supervisor/orders", fc.startOpts.ID)
	assert.Equal(t, workflows.TaskQueue, fc.startOpts.TaskQueue)
	assert.True(t, fc.startOpts.WorkflowExecutionErrorWhenAlreadyStarted)
	require.Len(t, fc.startArgs, 1)
	in, ok := fc.startArgs[0].(workflows.SupervisorInput)
	require.True(t, ok)
	assert.Equal(t, "orders", in.Spec.ID)
	assert.Equal(t, domain.DefaultMaxRecordsPerChunk, in.Spec.TuningConfig.MaxRecordsPerChunk, "the started spec has its defaults")
	assert.True(t, fc.closed, "the client is closed at exit")

	var got startResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	assert.Equal(t, startResult{
		SupervisorID: "orders", WorkflowID: "supervisor/orders", RunID: "run-1", Namespace: "default",
		URL: "http://localhost:8233/namespaces/default/workflows/supervisor%2Forders",
	}, got)
}

func TestStartAlreadyRunning(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{startErr: serviceerror.NewWorkflowExecutionAlreadyStarted("already started", "req", "run-0")}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "start", "-f", "testdata/spec.json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "already running")
	assert.Contains(t, r.stdout, "run-0")
}

func TestUnknownSupervisorExits3(t *testing.T) {
	t.Parallel()
	notFound := serviceerror.NewNotFound("workflow not found")
	for _, args := range [][]string{{"status", "x"}, {"checkpoint", "x"}, {"stop", "x"}} {
		fc := &fakeClient{queryErr: notFound, signalErr: notFound, describeEr: notFound}
		r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, args...)
		assert.Equal(t, ExitNotFound, r.code, "%v", args)
		assert.Contains(t, r.stderr, "no supervisor \"x\" (workflow supervisor/x): start it with `starter start -f spec.json`", "%v", args)
	}
}

func TestCheckpointSignalsGroups(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "checkpoint", "orders", "--group", "2", "--group", "0,2")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Len(t, fc.signals, 1)
	assert.Equal(t, sentSignal{"supervisor/orders", workflows.SignalCheckpoint, workflows.CheckpointSignal{Groups: []int{0, 2}}}, fc.signals[0])
	assert.Contains(t, r.stdout, "groups 0, 2")

	fc = &fakeClient{}
	r = runCLI(t, runOpts{dial: dialTo(fc, nil)}, "checkpoint", "orders")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, workflows.CheckpointSignal{}, fc.signals[0].arg)
	assert.Contains(t, r.stdout, "all groups")
}

func TestCheckpointStoppedSupervisorExits3(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{
		signalErr: serviceerror.NewNotFound("workflow execution already completed"),
		describe:  completed(),
	}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "checkpoint", "orders")
	assert.Equal(t, ExitNotFound, r.code)
	assert.Contains(t, r.stderr, `supervisor "orders" is not running (workflow supervisor/orders Completed)`)
}

func TestStop(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "stop", "orders")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, []sentSignal{{"supervisor/orders", workflows.SignalStop, workflows.StopSignal{}}}, fc.signals)
	assert.Contains(t, r.stdout, "stop requested for supervisor orders")
}

func TestStopWaitPrintsFinalState(t *testing.T) {
	t.Parallel()
	st := sampleStatus()
	st.State = workflows.StateStopped
	fc := &fakeClient{describe: completed(), status: st}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "stop", "orders", "--wait", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var got stopResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	assert.Equal(t, "Completed", got.WorkflowStatus)
	require.NotNil(t, got.Final)
	assert.Equal(t, workflows.StateStopped, got.Final.State)
}

func TestStopAlreadyStoppedIsOK(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{signalErr: serviceerror.NewNotFound("workflow execution already completed"), describe: completed()}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "stop", "orders")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "supervisor orders is not running (workflow supervisor/orders Completed)")
}

func TestStatusText(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{status: sampleStatus()}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "status", "orders")
	require.Equal(t, ExitOK, r.code, r.stderr)
	want := `supervisor orders  RUNNING  (topic orders → datasource orders_ds)

PARTITION  COMMITTED  LATEST  LAG
0          100        130     30
1          40         40      0
2          -          7       -
total                         30

GROUP  GEN  PARTITIONS  RUNNING  SEQUENCES
0      1    0,2         yes      #3 publishing to p0:100,p2:0; #4 open from p0:100,p2:0
1      2    1           no       -

published  1 sequence, 2 segments, 140 rows

recent errors
  2026-01-02T03:04:05Z  consume p2: broker down
`
	assert.Equal(t, want, r.stdout)
}

func TestStatusJSONIsTheStruct(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{status: sampleStatus()}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "status", "orders", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var got workflows.SupervisorStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	assert.Equal(t, sampleStatus(), got)
}

func completed() *client.WorkflowExecutionDescription {
	d := &client.WorkflowExecutionDescription{}
	d.Status = enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
	return d
}

func sampleStatus() workflows.SupervisorStatus {
	return workflows.SupervisorStatus{
		ID: "orders", DataSource: "orders_ds", Topic: "orders", State: workflows.StateRunning,
		Partitions: []int32{0, 1, 2},
		Groups: []workflows.GroupStatus{
			{Group: 0, WorkflowID: "supervisor/orders/group-0", Generation: 1, Partitions: []int32{0, 2}, Running: true,
				Sequences: []domain.Sequence{
					{ID: 3, Start: domain.Offsets{0: 50, 2: 0}, End: domain.Offsets{0: 100, 2: 0}},
					{ID: 4, Start: domain.Offsets{0: 100, 2: 0}},
				}},
			{Group: 1, WorkflowID: "supervisor/orders/group-1", Generation: 2, Partitions: []int32{1}},
		},
		Committed:    domain.Offsets{0: 100, 1: 40},
		Latest:       domain.Offsets{0: 130, 1: 40, 2: 7},
		Lag:          30,
		Published:    workflows.PublishTotals{Sequences: 1, Segments: 2, Rows: 140},
		RecentErrors: []workflows.ErrorRecord{{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Message: "consume p2: broker down"}},
	}
}
