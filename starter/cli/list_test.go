package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"

	"handoff/workflows"
)

func TestListQueriesEachRunningSupervisor(t *testing.T) {
	t.Parallel()
	orders := sampleStatus()
	wiki := sampleStatus()
	wiki.ID, wiki.DataSource, wiki.Topic, wiki.State, wiki.Lag = "wiki", "wiki", "wiki", workflows.StateSuspended, 0
	fc := &fakeClient{
		listed: []*workflowpb.WorkflowExecutionInfo{
			runningSupervisor(t, "orders", "PENDING", "orders_ds", "orders"),
			runningSupervisor(t, "wiki", "PENDING", "wiki", "wiki"),
		},
		statuses: map[string]any{"supervisor/orders": orders, "supervisor/wiki": wiki},
	}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "list")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, `ID      STATE      DATASOURCE  TOPIC   LAG
orders  RUNNING    orders_ds   orders  37
wiki    SUSPENDED  wiki        wiki    0
`, r.stdout)

	r = runCLI(t, runOpts{dial: dialTo(fc, nil)}, "list", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.JSONEq(t, `[
		{"id": "orders", "state": "RUNNING", "dataSource": "orders_ds", "topic": "orders", "aggregateLag": 37},
		{"id": "wiki", "state": "SUSPENDED", "dataSource": "wiki", "topic": "wiki", "aggregateLag": 0}
	]`, r.stdout)
}

func TestListFallsBackOnSearchAttributes(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{
		listed:   []*workflowpb.WorkflowExecutionInfo{runningSupervisor(t, "orders", "RUNNING", "orders_ds", "orders")},
		queryErr: serviceerror.NewDeadlineExceeded("no worker"),
	}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "list")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, `ID      STATE                DATASOURCE  TOPIC   LAG
orders  RUNNING (no answer)  orders_ds   orders  -
`, r.stdout)

	r = runCLI(t, runOpts{dial: dialTo(fc, nil)}, "list", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var got []supervisorSummary
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	require.Len(t, got, 1)
	assert.Nil(t, got[0].Lag)
	assert.Equal(t, "RUNNING", got[0].State)
	assert.Contains(t, got[0].StatusError, "no worker")
}

func TestListEmpty(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "list")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, "no running supervisors\n", r.stdout)
	r = runCLI(t, runOpts{dial: dialTo(fc, nil)}, "list", "-o", "json")
	assert.Equal(t, "[]\n", r.stdout)
}

func TestStatusWatchPrintsALinePerRefreshUntilCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	fc := &fakeClient{status: sampleStatus(), onQuery: func(n int) {
		if n == 3 {
			cancel() // Ctrl-C during the third query
		}
	}}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil), ctx: ctx, env: noKafka}, "status", "orders", "--watch", "--interval", "1ms")
	require.Equal(t, ExitOK, r.code, "Ctrl-C ends a watch normally: %s", r.stderr)
	assert.Regexp(t, `^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ RUNNING lag=14 unpublished=23 rows/s=(-|\d+\.\d) published=140 rows, none yet\n){2}$`, r.stdout)
	assert.NotContains(t, r.stdout, "\x1b", "no escape codes off a terminal")
}

func TestStatusWatchJSONAndQueryErrors(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	fc := &fakeClient{}
	fc.onQuery = func(n int) {
		switch n {
		case 1:
			fc.mu.Lock()
			fc.queryErr = serviceerror.NewUnavailable("frontend restarting")
			fc.mu.Unlock()
		case 2:
			fc.mu.Lock()
			fc.queryErr, fc.status = nil, sampleStatus()
			fc.mu.Unlock()
		case 4:
			cancel()
		}
	}
	fc.status = sampleStatus()
	r := runCLI(t, runOpts{dial: dialTo(fc, nil), ctx: ctx}, "status", "orders", "-w", "--interval", "1ms", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stderr, "frontend restarting", "a failed refresh is reported and the watch goes on")
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	n := 0
	for dec.More() {
		var got watchLine
		require.NoError(t, dec.Decode(&got))
		assert.Equal(t, "orders", got.ID)
		assert.False(t, got.Time.IsZero())
		n++
	}
	assert.Equal(t, 2, n, "queries 1 and 3 answered; 2 failed; 4 was canceled")
}

func TestStatusIntervalNeedsWatch(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"status", "orders", "--interval", "5s"},
		{"status", "orders", "--watch", "--interval", "0s"},
	} {
		r := runCLI(t, runOpts{}, args...)
		assert.Equal(t, ExitUsage, r.code, "%v: %s", args, r.stderr)
	}
}
