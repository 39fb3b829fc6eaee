package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// result is one in-process run of the CLI.
type result struct {
	code           int
	stdout, stderr string
}

type runOpts struct {
	env   map[string]string
	stdin string
	dial  dialFunc // nil: dialing fails the test
}

func runCLI(t *testing.T, o runOpts, args ...string) result {
	t.Helper()
	if o.dial == nil {
		o.dial = func(context.Context, client.Options) (client.Client, error) {
			t.Errorf("starter %v dialed Temporal; it should not", args)
			return nil, errors.New("test: dialing not allowed")
		}
	}
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), args, IO{
		Stdin:  bytes.NewBufferString(o.stdin),
		Stdout: &stdout,
		Stderr: &stderr,
		Getenv: func(k string) string { return o.env[k] },
	}, o.dial)
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

// fakeClient answers the few client calls the CLI makes; any other call
// panics on the nil embedded Client.
type fakeClient struct {
	client.Client

	startOpts  client.StartWorkflowOptions
	startArgs  []any
	startErr   error
	signals    []sentSignal
	signalErr  error
	status     any // query answer
	queryErr   error
	describe   *client.WorkflowExecutionDescription
	describeEr error
	closed     bool
}

type sentSignal struct {
	workflowID, name string
	arg              any
}

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

func (f *fakeClient) ExecuteWorkflow(_ context.Context, o client.StartWorkflowOptions, _ any, args ...any) (client.WorkflowRun, error) {
	f.startOpts, f.startArgs = o, args
	if f.startErr != nil {
		return nil, f.startErr
	}
	return fakeRun{id: o.ID, runID: "run-1"}, nil
}

func (f *fakeClient) SignalWorkflow(_ context.Context, wid, _, name string, arg any) error {
	f.signals = append(f.signals, sentSignal{wid, name, arg})
	return f.signalErr
}

func (f *fakeClient) QueryWorkflow(context.Context, string, string, string, ...any) (converter.EncodedValue, error) {
	if f.queryErr != nil {
		return nil, f.queryErr
	}
	return fakeValue{f.status}, nil
}

func (f *fakeClient) DescribeWorkflow(context.Context, string, string) (*client.WorkflowExecutionDescription, error) {
	return f.describe, f.describeEr
}

func (f *fakeClient) GetWorkflow(_ context.Context, wid, runID string) client.WorkflowRun {
	return fakeRun{id: wid, runID: runID}
}

func (f *fakeClient) Close() { f.closed = true }
