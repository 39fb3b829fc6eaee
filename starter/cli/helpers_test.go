package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"handoff/internal/domain"
	"handoff/workflows"
)

// result is one in-process run of the CLI.
type result struct {
	code           int
	stdout, stderr string
}

type runOpts struct {
	env   map[string]string
	stdin string
	in    io.Reader        // instead of stdin
	dial  dialFunc         // nil: dialing fails the test
	ctx   context.Context  // nil: the test's
	now   func() time.Time // nil: time.Now
	// terminal makes stdout say it is a terminal, as a tty would.
	terminal bool
}

// ttyBuffer is a stdout that says it is a terminal.
type ttyBuffer struct{ bytes.Buffer }

func (*ttyBuffer) IsTerminal() bool { return true }

// steppingClock starts at start and moves on by step at each reading.
func steppingClock(start time.Time, step time.Duration) func() time.Time {
	var mu sync.Mutex
	next := start
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t := next
		next = next.Add(step)
		return t
	}
}

func runCLI(t *testing.T, o runOpts, args ...string) result {
	t.Helper()
	if o.dial == nil {
		o.dial = func(context.Context, client.Options) (client.Client, error) {
			t.Errorf("starter %v dialed Temporal; it should not", args)
			return nil, errors.New("test: dialing not allowed")
		}
	}
	if o.ctx == nil {
		o.ctx = t.Context()
	}
	var stdout ttyBuffer
	var stderr bytes.Buffer
	if o.in == nil {
		o.in = bytes.NewBufferString(o.stdin)
	}
	stdio := IO{
		Stdin:  o.in,
		Stdout: &stdout.Buffer,
		Stderr: &stderr,
		Getenv: func(k string) string { return o.env[k] },
		Now:    o.now,
	}
	if o.terminal {
		stdio.Stdout = &stdout
	}
	code := run(o.ctx, args, stdio, o.dial)
	return result{code, stdout.String(), stderr.String()}
}

// dialTo returns a dial function that hands out c and records the options.
func dialTo(c client.Client, got *client.Options) dialFunc {
	return func(_ context.Context, o client.Options) (client.Client, error) {
		if got != nil {
			*got = o
		}
		return c, nil
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// fakeClient answers the client calls the CLI makes; any other call panics
// on the nil embedded Client. It is safe for concurrent use (list queries
// supervisors in parallel).
type fakeClient struct {
	client.Client

	mu         sync.Mutex
	startOpts  client.StartWorkflowOptions
	startArgs  []any
	startErr   error
	status     any            // query answer of any workflow not in statuses
	statuses   map[string]any // query answer by workflow id
	queryErr   error
	queries    int
	onQuery    func(n int) // called with the number of queries so far
	describe   *client.WorkflowExecutionDescription
	describeEr error
	executions map[string]*workflowservice.DescribeWorkflowExecutionResponse // DescribeWorkflowExecution by id
	closed     bool

	updates        []sentUpdate
	updateResult   any   // what an accepted update answers
	updateCallErr  error // returned by UpdateWorkflow (e.g. NotFound)
	updateRejected error // returned by the handle's Get (a refused update)

	listed   []*workflowpb.WorkflowExecutionInfo
	listErr  error
	listHang bool // ListWorkflow answers only when its context ends

	terminated   []terminated
	terminateErr func(workflowID string) error // nil: every terminate succeeds
}

type sentUpdate struct {
	workflowID, name string
	args             []any
}

type terminated struct{ workflowID, reason string }

type fakeRun struct {
	client.WorkflowRun
	id, runID string
}

func (r fakeRun) GetID() string                  { return r.id }
func (r fakeRun) GetRunID() string               { return r.runID }
func (r fakeRun) Get(context.Context, any) error { return nil }

type fakeValue struct{ v any }

func (v fakeValue) HasValue() bool { return v.v != nil }
func (v fakeValue) Get(ptr any) error {
	b, err := json.Marshal(v.v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, ptr)
}

// fakeUpdate is a completed update: its result goes through JSON, as it
// would through the data converter.
type fakeUpdate struct {
	client.WorkflowUpdateHandle
	result any
	err    error
}

func (h fakeUpdate) Get(_ context.Context, ptr any) error {
	if h.err != nil || ptr == nil {
		return h.err
	}
	return fakeValue{h.result}.Get(ptr)
}

func (f *fakeClient) ExecuteWorkflow(_ context.Context, o client.StartWorkflowOptions, _ any, args ...any) (client.WorkflowRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.startOpts, f.startArgs = o, args
	if f.startErr != nil {
		return nil, f.startErr
	}
	return fakeRun{id: o.ID, runID: "run-1"}, nil
}

func (f *fakeClient) UpdateWorkflow(_ context.Context, o client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if o.WaitForStage != client.WorkflowUpdateStageCompleted {
		return nil, errors.New("test: updates must wait for completion")
	}
	f.updates = append(f.updates, sentUpdate{o.WorkflowID, o.UpdateName, o.Args})
	if f.updateCallErr != nil {
		return nil, f.updateCallErr
	}
	return fakeUpdate{result: f.updateResult, err: f.updateRejected}, nil
}

func (f *fakeClient) QueryWorkflow(_ context.Context, wid, _, _ string, _ ...any) (converter.EncodedValue, error) {
	f.mu.Lock()
	f.queries++
	n, hook := f.queries, f.onQuery
	st, ok := f.statuses[wid]
	if !ok {
		st = f.status
	}
	err := f.queryErr
	f.mu.Unlock()
	if hook != nil {
		hook(n)
	}
	if err != nil {
		return nil, err
	}
	return fakeValue{st}, nil
}

// DescribeTaskQueue answers that nothing polls the task queue.
func (f *fakeClient) DescribeTaskQueue(context.Context, string, enumspb.TaskQueueType) (*workflowservice.DescribeTaskQueueResponse, error) {
	return &workflowservice.DescribeTaskQueueResponse{}, nil
}

func (f *fakeClient) DescribeWorkflow(context.Context, string, string) (*client.WorkflowExecutionDescription, error) {
	return f.describe, f.describeEr
}

// DescribeWorkflowExecution answers from executions; any other workflow
// is not found.
func (f *fakeClient) DescribeWorkflowExecution(_ context.Context, wid, _ string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d, ok := f.executions[wid]; ok {
		return d, nil
	}
	return nil, serviceerror.NewNotFound("test: no workflow " + wid)
}

func (f *fakeClient) GetWorkflow(_ context.Context, wid, runID string) client.WorkflowRun {
	return fakeRun{id: wid, runID: runID}
}

func (f *fakeClient) ListWorkflow(ctx context.Context, req *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	if f.listHang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if f.listErr != nil {
		return nil, f.listErr
	}
	if req.GetQuery() != runningSupervisorsQuery {
		return nil, fmt.Errorf("test: unexpected list query %q", req.GetQuery())
	}
	// Two pages, to exercise paging.
	if len(req.GetNextPageToken()) == 0 && len(f.listed) > 1 {
		return &workflowservice.ListWorkflowExecutionsResponse{Executions: f.listed[:1], NextPageToken: []byte("p2")}, nil
	}
	if len(req.GetNextPageToken()) > 0 {
		return &workflowservice.ListWorkflowExecutionsResponse{Executions: f.listed[1:]}, nil
	}
	return &workflowservice.ListWorkflowExecutionsResponse{Executions: f.listed}, nil
}

func (f *fakeClient) TerminateWorkflow(_ context.Context, wid, _, reason string, _ ...any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.terminateErr != nil {
		if err := f.terminateErr(wid); err != nil {
			return err
		}
	}
	f.terminated = append(f.terminated, terminated{wid, reason})
	return nil
}

func (f *fakeClient) Close() { f.closed = true }

// runningSupervisor is a list entry, with search attributes as the
// supervisor records them.
func runningSupervisor(t *testing.T, id, state, dataSource, topic string) *workflowpb.WorkflowExecutionInfo {
	t.Helper()
	fields := map[string]*commonpb.Payload{}
	for k, v := range map[string]string{
		domain.SearchAttributeSupervisor: id, domain.SearchAttributeState: state,
		domain.SearchAttributeDataSource: dataSource, domain.SearchAttributeTopic: topic,
	} {
		p, err := converter.GetDefaultDataConverter().ToPayload(v)
		require.NoError(t, err)
		fields[k] = p
	}
	return &workflowpb.WorkflowExecutionInfo{
		Execution:        &commonpb.WorkflowExecution{WorkflowId: workflows.SupervisorWorkflowID(id), RunId: "run-" + id},
		Type:             &commonpb.WorkflowType{Name: workflows.SupervisorWorkflowName},
		SearchAttributes: &commonpb.SearchAttributes{IndexedFields: fields},
	}
}
