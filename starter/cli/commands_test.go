package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

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
	sa := fc.startOpts.TypedSearchAttributes
	for key, want := range map[string]string{
		domain.SearchAttributeSupervisor: "orders", domain.SearchAttributeDataSource: "orders",
		domain.SearchAttributeTopic: "orders", domain.SearchAttributeState: workflows.StatePending,
	} {
		got, ok := sa.GetKeyword(temporal.NewSearchAttributeKeyKeyword(key))
		assert.True(t, ok, key)
		assert.Equal(t, want, got, key)
	}
	assert.Equal(t, 4, sa.Size())
	assert.Equal(t, "supervisor orders: topic orders → datasource orders, 2 task groups", fc.startOpts.StaticSummary)
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
	}, got, "no UI link: where the UI is was not said")
}

func TestStartAlreadyRunningUpdatesTheSpec(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		result workflows.UpdateSpecResult
		want   string
	}{
		{workflows.UpdateSpecResult{Changed: false, Message: "same spec"}, "supervisor orders is already running with this spec: nothing to do\n"},
		{workflows.UpdateSpecResult{Changed: true, Message: "applies after the open sequences publish"},
			"supervisor orders: spec updated: applies after the open sequences publish\n"},
	} {
		fc := &fakeClient{
			startErr:     serviceerror.NewWorkflowExecutionAlreadyStarted("already started", "req", "run-0"),
			updateResult: tt.result,
		}
		r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "start", "-f", "testdata/spec.json")
		require.Equal(t, ExitOK, r.code, r.stderr)
		assert.Equal(t, tt.want, r.stdout)
		require.Len(t, fc.updates, 1)
		u := fc.updates[0]
		assert.Equal(t, "supervisor/orders", u.workflowID)
		assert.Equal(t, workflows.UpdateSpec, u.name)
		require.Len(t, u.args, 1)
		req, ok := u.args[0].(workflows.UpdateSpecRequest)
		require.True(t, ok, "%T", u.args[0])
		assert.Equal(t, "orders", req.Spec.ID)
		assert.Equal(t, domain.DefaultMaxRecordsPerChunk, req.Spec.TuningConfig.MaxRecordsPerChunk, "the sent spec has its defaults")
	}
}

func TestStartWithoutRegisteredSearchAttributesSaysStartAWorker(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{startErr: serviceerror.NewInvalidArgument("search attribute Supervisor is not defined")}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "start", "-f", "testdata/spec.json")
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, "start a worker first")
}

func TestUnknownSupervisorExits3(t *testing.T) {
	t.Parallel()
	notFound := serviceerror.NewNotFound("workflow not found")
	spec := writeFile(t, `{"id": "x", "dataSchema": {"dataSource": "d", "timestampSpec": {"column": "ts"},
		"dimensionsSpec": {"dimensions": ["a"]}}, "ioConfig": {"topic": "t"}}`)
	for _, args := range [][]string{
		{"status", "x"}, {"status", "x", "--watch"}, {"checkpoint", "x"}, {"stop", "x"}, {"stop", "x", "--now"},
		{"suspend", "x"}, {"resume", "x"}, {"reset", "x", "--to", "latest"}, {"update", "-f", spec},
	} {
		fc := &fakeClient{queryErr: notFound, updateCallErr: notFound, describeEr: notFound, terminateErr: func(string) error { return notFound }}
		r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, args...)
		assert.Equal(t, ExitNotFound, r.code, "%v", args)
		assert.Contains(t, r.stderr, "no supervisor \"x\" (workflow supervisor/x): start it with `starter start -f spec.json`\n", "%v", args)
		assert.Empty(t, fc.terminated, "%v", args)
	}
}

func TestUnknownSupervisorNamesTheRunningOnes(t *testing.T) {
	t.Parallel()
	notFound := serviceerror.NewNotFound("workflow not found")
	for _, args := range [][]string{
		{"status", "order"}, {"status", "order", "--watch"}, {"checkpoint", "order"}, {"stop", "order"},
		{"stop", "order", "--now"}, {"suspend", "order"}, {"resume", "order"}, {"reset", "order", "--to", "latest"},
	} {
		fc := &fakeClient{
			queryErr: notFound, updateCallErr: notFound, describeEr: notFound,
			listed: []*workflowpb.WorkflowExecutionInfo{runningSupervisor(t, "orders", "RUNNING", "d", "t"), runningSupervisor(t, "wiki", "RUNNING", "d", "t")},
		}
		r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, args...)
		assert.Equal(t, ExitNotFound, r.code, "%v", args)
		assert.Contains(t, r.stderr, "no supervisor \"order\" (workflow supervisor/order): start it with `starter start -f spec.json`; running supervisors: orders, wiki\n", "%v", args)
	}
}

func TestCheckpointPrintsEachGroupsOutcome(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{updateResult: workflows.CheckpointResult{Groups: []workflows.GroupCheckpointResult{
		{Group: 0, Outcome: workflows.CheckpointRecorded, SequenceID: 4, End: domain.Offsets{domain.P(0): 1200, domain.P(2): 880}},
		{Group: 1, Outcome: workflows.CheckpointEmpty},
		{Group: 2, Outcome: workflows.CheckpointNotRunning},
		{Group: 3, Outcome: workflows.CheckpointTimedOut},
	}}}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "checkpoint", "orders", "--group", "2", "--group", "0,2")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, []sentUpdate{{"supervisor/orders", workflows.UpdateCheckpoint, []any{workflows.CheckpointSignal{Groups: []int{0, 2}}}}}, fc.updates)
	assert.Equal(t, `group 0: sequence 4 closed at p0:1200,p2:880 — publishing
group 1: empty — nothing read since the last boundary, nothing to publish
group 2: not running — see `+"`starter status orders`"+`
group 3: timed out — the group did not answer in time; see `+"`starter status orders`"+`
`, r.stdout)

	fc = &fakeClient{updateResult: workflows.CheckpointResult{Groups: []workflows.GroupCheckpointResult{{Group: 0, Outcome: workflows.CheckpointEmpty}}}}
	r = runCLI(t, runOpts{dial: dialTo(fc, nil)}, "checkpoint", "orders", "-o", "json")
	require.Equal(t, ExitOK, r.code, "an empty group is not a failure: %s", r.stderr)
	assert.Equal(t, []any{workflows.CheckpointSignal{}}, fc.updates[0].args)
	var got checkpointResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	assert.Equal(t, checkpointResult{SupervisorID: "orders", CheckpointResult: workflows.CheckpointResult{
		Groups: []workflows.GroupCheckpointResult{{Group: 0, Outcome: workflows.CheckpointEmpty}},
	}}, got)
}

func TestCheckpointStoppedSupervisorExits3(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{
		updateCallErr: serviceerror.NewNotFound("workflow execution already completed"),
		describe:      completed(),
	}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "checkpoint", "orders")
	assert.Equal(t, ExitNotFound, r.code)
	assert.Contains(t, r.stderr, `supervisor "orders" is not running (workflow supervisor/orders Completed)`)
}

func TestStop(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{updateResult: workflows.OperationResult{State: workflows.StateStopping, Message: "publishing 2 open sequences"}}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "stop", "orders")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, []sentUpdate{{"supervisor/orders", workflows.UpdateStop, []any{workflows.StopSignal{}}}}, fc.updates)
	assert.Equal(t, "stop requested for supervisor orders: publishing 2 open sequences (state STOPPING); wait with `starter stop orders --wait`\n", r.stdout)
}

func TestStopWaitPrintsFinalState(t *testing.T) {
	t.Parallel()
	st := sampleStatus()
	st.State = workflows.StateStopped
	fc := &fakeClient{describe: completed(), status: st, updateResult: workflows.OperationResult{State: workflows.StateStopping}}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "stop", "orders", "--wait", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var got stopResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	assert.Equal(t, "Completed", got.WorkflowStatus)
	assert.Equal(t, &workflows.OperationResult{State: workflows.StateStopping}, got.Operation)
	require.NotNil(t, got.Final)
	assert.Equal(t, workflows.StateStopped, got.Final.State)

	r = runCLI(t, runOpts{dial: dialTo(fc, nil)}, "stop", "orders", "--wait")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.True(t, strings.HasPrefix(r.stdout, "supervisor orders stopped (workflow supervisor/orders Completed)\n\nsupervisor orders  STOPPED (APPLYING_SPEC)"), r.stdout)
}

func TestStopAlreadyStoppedIsOK(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{updateCallErr: serviceerror.NewNotFound("workflow execution already completed"), describe: completed()}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "stop", "orders")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "supervisor orders is not running (workflow supervisor/orders Completed)")
}

func TestStatusText(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{status: sampleStatus()}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil), env: noKafka}, "status", "orders")
	require.Equal(t, ExitOK, r.code, r.stderr)
	want := `supervisor orders  RUNNING (APPLYING_SPEC)  (topic orders → datasource orders_ds)
a new spec applies once the task groups have published their open sequences

PARTITION  COMMITTED  CURRENT  LATEST  LAG  UNPUBLISHED
0          100        120      130     10   20
1          40         40       40      0    0
2          -          3        7       4    3
total                                  14   23
LAG = LATEST − CURRENT, in Kafka and not read yet; UNPUBLISHED = CURRENT − COMMITTED, read and not published yet
latest: the supervisor's last read (…); current: the supervisor's

GROUP  GEN  PARTITIONS  RUNNING  FAILURES  SEQUENCES
0      1    0,2         yes      0         #3 publishing to p0:100,p2:0 (50 rows); #4 open from p0:100,p2:0 (23 rows)
1      2    1           no       3         -

read       200 records, 190 rows, 4 unparseable, 6 thrown away
published  1 sequence, 2 segments, 140 rows

recent errors
  2026-01-02T03:04:05Z  consume p2: broker down
`
	assert.Equal(t, want, maskKafkaError(r.stdout))
}

func TestStatusJSONIsTheStruct(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{status: sampleStatus()}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil), env: noKafka}, "status", "orders", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var got workflows.SupervisorStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	// The offsets as the supervisor has them; lag and unpublished as
	// internal/lagview works them out (the sample's are made up).
	want := sampleStatus()
	want.PartitionLag, want.Lag = map[domain.Partition]int64{domain.P(0): 10, domain.P(1): 0, domain.P(2): 4}, 14
	want.PartitionUnpublished, want.Unpublished = map[domain.Partition]int64{domain.P(0): 20, domain.P(1): 0, domain.P(2): 3}, 23
	assert.Equal(t, want, got)
}

func completed() *client.WorkflowExecutionDescription {
	d := &client.WorkflowExecutionDescription{}
	d.Status = enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
	return d
}

func sampleStatus() workflows.SupervisorStatus {
	return workflows.SupervisorStatus{
		ID: "orders", DataSource: "orders_ds", Topic: "orders", State: workflows.StateRunning,
		DetailedState: "APPLYING_SPEC", PendingSpec: true,
		Partitions: []domain.Partition{domain.P(0), domain.P(1), domain.P(2)},
		Groups: []workflows.GroupStatus{
			{Group: 0, WorkflowID: "supervisor/orders/group-0", Generation: 1, Partitions: []domain.Partition{domain.P(0), domain.P(2)}, Running: true,
				Sequences: []workflows.SequenceStatus{
					{Sequence: domain.Sequence{ID: 3, Start: domain.Offsets{domain.P(0): 50, domain.P(2): 0}, End: domain.Offsets{domain.P(0): 100, domain.P(2): 0}}, Rows: 50, Chunks: 2},
					{Sequence: domain.Sequence{ID: 4, Start: domain.Offsets{domain.P(0): 100, domain.P(2): 0}}, Rows: 23, Chunks: 1},
				}},
			{Group: 1, WorkflowID: "supervisor/orders/group-1", Generation: 2, Partitions: []domain.Partition{domain.P(1)}, Failures: 3},
		},
		Committed:    domain.Offsets{domain.P(0): 100, domain.P(1): 40},
		Current:      domain.Offsets{domain.P(0): 120, domain.P(1): 40, domain.P(2): 3},
		Latest:       domain.Offsets{domain.P(0): 130, domain.P(1): 40, domain.P(2): 7},
		PartitionLag: map[domain.Partition]int64{domain.P(0): 30, domain.P(1): 0, domain.P(2): 7},
		Lag:          37,
		Read:         workflows.ReadTotals{Records: 200, Rows: 190, Unparseable: 4, ThrownAway: 6},
		Published:    workflows.PublishTotals{Sequences: 1, Segments: 2, Rows: 140},
		RecentErrors: []workflows.ErrorRecord{{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Message: "consume p2: broker down"}},
	}
}
