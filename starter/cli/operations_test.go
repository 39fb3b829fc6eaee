package cli

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"handoff/internal/domain"
	"handoff/workflows"
)

func TestSuspendAndResumeSendTheirUpdates(t *testing.T) {
	t.Parallel()
	for cmd, update := range map[string]string{"suspend": workflows.UpdateSuspend, "resume": workflows.UpdateResume} {
		fc := &fakeClient{updateResult: workflows.OperationResult{State: "SUSPENDED", Message: "groups published and stopped"}}
		r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, cmd, "orders")
		require.Equal(t, ExitOK, r.code, r.stderr)
		assert.Equal(t, []sentUpdate{{"supervisor/orders", update, nil}}, fc.updates, "%s sends no argument", cmd)
		assert.Equal(t, cmd+" supervisor orders: groups published and stopped (state SUSPENDED)\n", r.stdout)

		r = runCLI(t, runOpts{dial: dialTo(fc, nil)}, cmd, "orders", "-o", "json")
		require.Equal(t, ExitOK, r.code, r.stderr)
		assert.JSONEq(t, `{"supervisorId": "orders", "operation": "`+update+`", "state": "SUSPENDED", "message": "groups published and stopped"}`, r.stdout)
	}
}

func TestRefusedUpdateExits1WithTheWorkflowsReason(t *testing.T) {
	t.Parallel()
	spec := writeFile(t, `{"id": "orders", "dataSchema": {"dataSource": "d", "timestampSpec": {"column": "ts"},
		"dimensionsSpec": {"dimensions": ["a"]}}, "ioConfig": {"topic": "t"}}`)
	for _, args := range [][]string{
		{"checkpoint", "orders", "--group", "7"}, {"stop", "orders"}, {"suspend", "orders"}, {"resume", "orders"},
		{"reset", "orders", "--to", "earliest"}, {"update", "-f", spec},
	} {
		// What the SDK makes of a validator's errors.New: an ApplicationError
		// whose Error() adds the type; only the reason is printed.
		fc := &fakeClient{updateRejected: temporal.NewApplicationError("supervisor is RUNNING: suspend it first, or use --force", "*errors.errorString")}
		r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, args...)
		assert.Equal(t, ExitFailure, r.code, "%v", args)
		require.Len(t, fc.updates, 1, "%v", args)
		assert.Contains(t, r.stderr, "refused "+fc.updates[0].name+": supervisor is RUNNING: suspend it first, or use --force\n", "%v", args)
		assert.NotContains(t, r.stderr, "errorString", "%v", args)
		assert.NotContains(t, r.stderr, "--help", "%v: not a usage error", args)
		assert.Empty(t, r.stdout, "%v", args)
	}
}

func TestReset(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want workflows.ResetRequest
	}{
		{[]string{"--to", "earliest"}, workflows.ResetRequest{All: "earliest"}},
		{[]string{"--to", "latest", "--force"}, workflows.ResetRequest{All: "latest", Force: true}},
		{[]string{"--partition", "0=earliest", "--partition", "3=01200", "--partition", "2=latest"},
			workflows.ResetRequest{Partitions: map[domain.Partition]string{domain.P(0): "earliest", domain.P(3): "1200", domain.P(2): "latest"}}},
		// A topicPattern supervisor's partitions name their topic.
		{[]string{"--partition", "orders.eu:0=earliest", "--partition", "orders.us:3=1200"},
			workflows.ResetRequest{Partitions: map[domain.Partition]string{domain.TP("orders.eu", 0): "earliest", domain.TP("orders.us", 3): "1200"}}},
	}
	for _, tt := range tests {
		fc := &fakeClient{updateResult: workflows.ResetResult{
			Offsets: domain.Offsets{domain.P(0): 0, domain.P(3): 1200}, DroppedSequences: 2, Message: "offsets moved; resume to read from them",
		}}
		r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, append([]string{"reset", "orders"}, tt.args...)...)
		require.Equal(t, ExitOK, r.code, "%v: %s", tt.args, r.stderr)
		assert.Equal(t, []sentUpdate{{"supervisor/orders", workflows.UpdateReset, []any{tt.want}}}, fc.updates, "%v", tt.args)
		assert.Equal(t, `reset supervisor orders: offsets moved; resume to read from them
dropped 2 sequences that had not been published

PARTITION  OFFSET
0          0
3          1200
`, r.stdout)
	}
}

func TestResetJSON(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{updateResult: workflows.ResetResult{Offsets: domain.Offsets{domain.P(0): 5}, Message: "ok"}}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "reset", "orders", "--to", "latest", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.JSONEq(t, `{"supervisorId": "orders", "offsets": {"0": 5}, "droppedSequences": 0, "message": "ok"}`, r.stdout)
}

func TestResetUsageErrorsNameTheBadValue(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "give --partition P=earliest|latest|OFFSET (repeatable) or --to earliest|latest"},
		{[]string{"--to", "latest", "--partition", "0=earliest"}, "give either --partition or --to, not both"},
		{[]string{"--to", "oldest"}, `--to "oldest": want earliest or latest`},
		{[]string{"--partition", "0"}, `--partition "0": want P=earliest|latest|OFFSET`},
		{[]string{"--partition", "x=earliest"}, `partition "x" is not a partition number`},
		{[]string{"--partition", "-1=earliest"}, `partition "-1" is not a partition number`},
		{[]string{"--partition", "99999999999=earliest"}, `partition "99999999999" is not a partition number`},
		{[]string{"--partition", "0=first"}, `"first" is not earliest, latest or an offset`},
		{[]string{"--partition", "0=-5"}, `"-5" is not earliest, latest or an offset`},
		{[]string{"--partition", "0=1.5"}, `"1.5" is not earliest, latest or an offset`},
		{[]string{"--partition", "1=5", "--partition", "1=latest"}, `--partition "1=latest": partition 1 is given twice`},
		{[]string{"--partition", ":3=latest"}, `partition ":3" is not a partition number (0 or more) or TOPIC:NUMBER`},
		{[]string{"--partition", "orders.eu:x=latest"}, `partition "orders.eu:x" is not a partition number`},
	} {
		r := runCLI(t, runOpts{}, append([]string{"reset", "orders"}, tt.args...)...) // dialing fails the test
		assert.Equal(t, ExitUsage, r.code, "%v: %s", tt.args, r.stderr)
		assert.Contains(t, r.stderr, tt.want, "%v", tt.args)
		assert.Contains(t, r.stderr, "starter reset --help", "%v", tt.args)
		assert.Empty(t, r.stdout, "%v", tt.args)
	}
}

func TestUpdateValidatesLocallyThenSendsTheSpec(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{updateResult: workflows.UpdateSpecResult{Changed: true, Message: "applies once 2 groups have published"}}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "update", "-f", "testdata/spec.json", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Len(t, fc.updates, 1)
	assert.Equal(t, workflows.UpdateSpec, fc.updates[0].name)
	req := fc.updates[0].args[0].(workflows.UpdateSpecRequest)
	assert.Equal(t, int64(1_000_000), req.Spec.TuningConfig.MaxRowsPerSegment)
	assert.JSONEq(t, `{"supervisorId": "orders", "workflowId": "supervisor/orders", "changed": true, "message": "applies once 2 groups have published"}`, r.stdout)

	// A bad spec is refused before any server is contacted.
	bad := writeFile(t, `{"id": "orders"}`)
	r = runCLI(t, runOpts{}, "update", "-f", bad)
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, "invalid spec")
}

func TestStopNowTerminatesSupervisorAndGroups(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{status: sampleStatus()}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "stop", "orders", "--now")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Empty(t, fc.updates, "nothing is asked of the supervisor")
	assert.Equal(t, []terminated{
		{"supervisor/orders", "stop --now"},
		{"supervisor/orders/group-0", "stop --now"},
		{"supervisor/orders/group-1", "stop --now"},
	}, fc.terminated, "the supervisor first, so it cannot restart a group")
	assert.Equal(t, `terminated supervisor orders; terminated task groups supervisor/orders/group-0, supervisor/orders/group-1
committed offsets are unchanged: reads not yet published will be read again by the next start
`, r.stdout)
}

func TestStopNowWithoutStatusTriesEveryGroupID(t *testing.T) {
	t.Parallel()
	running := map[string]bool{"supervisor/orders": true, "supervisor/orders/group-0": true, "supervisor/orders/group-5": true}
	fc := &fakeClient{
		queryErr: serviceerror.NewDeadlineExceeded("no worker"),
		terminateErr: func(wid string) error {
			if !running[wid] {
				return serviceerror.NewNotFound("workflow not found")
			}
			return nil
		},
	}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "stop", "orders", "--now", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, []terminated{
		{"supervisor/orders", "stop --now"},
		{"supervisor/orders/group-0", "stop --now"},
		{"supervisor/orders/group-5", "stop --now"},
	}, fc.terminated)
	assert.Contains(t, r.stderr, "trying every task group id")
	var got stopResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	assert.Equal(t, stopResult{
		SupervisorID: "orders", WorkflowID: "supervisor/orders", WorkflowStatus: "Terminated", Now: true,
		TerminatedGroups: []string{"supervisor/orders/group-0", "supervisor/orders/group-5"},
	}, got)
}

func TestStopNowOfStoppedSupervisorStillEndsItsGroups(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{
		status:   sampleStatus(),
		describe: completed(),
		terminateErr: func(wid string) error {
			if wid == "supervisor/orders" {
				return serviceerror.NewNotFound("workflow execution already completed")
			}
			return nil
		},
	}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "stop", "orders", "--now")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Len(t, fc.terminated, 2)
	assert.Contains(t, r.stdout, "supervisor orders was not running (workflow supervisor/orders Completed); terminated task groups")
}

func TestStopNowAndWaitAreExclusive(t *testing.T) {
	t.Parallel()
	r := runCLI(t, runOpts{}, "stop", "orders", "--now", "--wait")
	assert.Equal(t, ExitUsage, r.code, r.stderr)
}

func TestUpdateText(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		result workflows.UpdateSpecResult
		want   string
	}{
		{workflows.UpdateSpecResult{Changed: true, Message: "applies once 2 groups have published"}, "supervisor orders: spec updated: applies once 2 groups have published\n"},
		{workflows.UpdateSpecResult{Changed: true}, "supervisor orders: spec updated\n"},
		{workflows.UpdateSpecResult{}, "supervisor orders is already running with this spec: nothing to do\n"},
	} {
		fc := &fakeClient{updateResult: tt.result}
		r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "update", "-f", "testdata/spec.json")
		require.Equal(t, ExitOK, r.code, r.stderr)
		assert.Equal(t, tt.want, r.stdout)
	}
}

func TestStopJSON(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{updateResult: workflows.OperationResult{State: workflows.StateStopping, Message: "publishing 2 open sequences"}}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "stop", "orders", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.JSONEq(t, `{"supervisorId": "orders", "workflowId": "supervisor/orders", "alreadyStopped": false,
		"operation": {"state": "STOPPING", "message": "publishing 2 open sequences"}}`, r.stdout)
}
