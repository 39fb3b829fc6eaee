package chaos

import (
	"context"
	"errors"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"handoff/e2e/harness"
	"handoff/internal/domain"
	"handoff/internal/kafka"
	"handoff/workflows"
)

// spec is a small-chunk spec over the env's topic: many chunks, and a
// sequence closed every two seconds, so that publishes run while faults
// happen.
func (e *env) spec(taskCount int) domain.Spec {
	spec := domain.Spec{
		ID: e.name,
		DataSchema: domain.DataSchema{
			DataSource:    e.name,
			TimestampSpec: domain.TimestampSpec{Column: "ts", Format: "iso"},
			DimensionsSpec: domain.DimensionsSpec{Dimensions: []domain.DimensionSpec{
				{Name: "id"}, {Name: "page"}, {Name: "user"}, {Name: "country"}, {Name: "action"},
			}},
			GranularitySpec: domain.GranularitySpec{SegmentGranularity: domain.GranularityMinute},
		},
		IOConfig: domain.IOConfig{
			Topic: e.name, TaskCount: taskCount, UseEarliestOffset: true, Period: domain.Duration(time.Second),
		},
		TuningConfig: domain.TuningConfig{
			MaxRecordsPerChunk: 2000, ChunkPeriod: domain.Duration(300 * time.Millisecond),
			IntermediateHandoffPeriod: domain.Duration(2 * time.Second),
		},
	}
	spec.ApplyDefaults()
	require.NoError(e.t, spec.Validate())
	return spec
}

func (e *env) startSupervisor(spec domain.Spec) client.WorkflowRun {
	e.t.Helper()
	var run client.WorkflowRun
	err := retry(30*time.Second, func() (err error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		run, err = e.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: workflows.SupervisorWorkflowID(spec.ID), TaskQueue: workflows.TaskQueue,
		}, workflows.SupervisorWorkflowName, workflows.SupervisorInput{Spec: spec})
		var notFound *serviceerror.NamespaceNotFound
		if err != nil && !errors.As(err, &notFound) {
			return retryStop{err}
		}
		return err
	})
	require.NoError(e.t, err, "start supervisor")
	return run
}

// signal sends a signal to the supervisor, retrying for a while: the
// server may be the thing that is down.
func (e *env) signal(spec domain.Spec, name string, arg any) {
	e.t.Helper()
	require.NoError(e.t, retry(time.Minute, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return e.temporal.SignalWorkflow(ctx, workflows.SupervisorWorkflowID(spec.ID), "", name, arg)
	}), "signal %s", name)
}

func (e *env) status(spec domain.Spec) (workflows.SupervisorStatus, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := e.temporal.QueryWorkflow(ctx, workflows.SupervisorWorkflowID(spec.ID), "", workflows.QueryStatus)
	if err != nil {
		return workflows.SupervisorStatus{}, err
	}
	var st workflows.SupervisorStatus
	return st, v.Get(&st)
}

// publishedSequences counts the committed sequences of the datasource.
func (e *env) publishedSequences(spec domain.Spec) int {
	e.t.Helper()
	var n int
	require.NoError(e.t, retry(time.Minute, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return e.pool.QueryRow(ctx, `SELECT count(*) FROM published_sequences WHERE datasource = $1`,
			spec.DataSchema.DataSource).Scan(&n)
	}))
	return n
}

// waitPublished waits until more than before sequences are committed.
func (e *env) waitPublished(spec domain.Spec, before int, timeout time.Duration) int {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if n := e.publishedSequences(spec); n > before {
			return n
		}
		time.Sleep(100 * time.Millisecond)
	}
	st, err := e.status(spec)
	e.t.Fatalf("no sequence published beyond %d within %v; status: state %s/%s, errors %+v (%v)",
		before, timeout, st.State, st.DetailedState, st.RecentErrors, err)
	return 0
}

// positions asks every group for the next offset it reads.
func (e *env) positions(spec domain.Spec) (domain.Offsets, error) {
	return harness.GroupPositions(context.Background(), e.temporal, spec)
}

// waitCaughtUp waits until every group has read to the topic's end, so a
// stop publishes everything produced.
func (e *env) waitCaughtUp(spec domain.Spec, timeout time.Duration) {
	e.t.Helper()
	latest := e.latest()
	deadline := time.Now().Add(timeout)
	var pos domain.Offsets
	var err error
	for time.Now().Before(deadline) {
		if pos, err = e.positions(spec); err == nil && pos.Equal(latest) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	st, stErr := e.status(spec)
	e.t.Fatalf("groups did not read to the end offsets %v within %v: at %v (%v); supervisor: state %s/%s, errors %+v (%v)",
		latest, timeout, pos, err, st.State, st.DetailedState, st.RecentErrors, stErr)
}

// stopAndWait signals stop and waits for the supervisor to complete.
func (e *env) stopAndWait(spec domain.Spec, run client.WorkflowRun, timeout time.Duration) {
	e.t.Helper()
	e.signal(spec, workflows.SignalStop, workflows.StopSignal{})
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// The run's Get follows continue-as-new; a server restart may cut the
	// long poll, so ask again until ctx ends.
	var err error
	for {
		if err = run.Get(ctx, nil); err == nil || ctx.Err() != nil {
			break
		}
		var unavailable *serviceerror.Unavailable
		if !errors.As(err, &unavailable) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		st, stErr := e.status(spec)
		e.t.Fatalf("supervisor did not complete within %v of stop: %v; status: state %s/%s, groups %+v, errors %+v (%v)",
			timeout, err, st.State, st.DetailedState, st.Groups, st.RecentErrors, stErr)
	}
}

// latest returns each partition's end offset.
func (e *env) latest() domain.Offsets {
	e.t.Helper()
	kc, err := kafka.New(e.brokers)
	require.NoError(e.t, err)
	defer kc.Close()
	var latest domain.Offsets
	require.NoError(e.t, retry(time.Minute, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var err error
		_, _, latest, err = kc.Look(ctx, domain.IOConfig{Topic: e.name})
		return err
	}))
	return latest
}
