package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"google.golang.org/protobuf/types/known/durationpb"

	"handoff/e2e/harness"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/internal/kafka"
	"handoff/internal/kafkadev"
	"handoff/internal/lake"
	"handoff/internal/lake/laketest"
	"handoff/internal/pgstore"
	"handoff/internal/segment"
	"handoff/internal/testenv"
	"handoff/workflows"
)

// env is one test's world: a Temporal namespace, a database, a broker with
// the test's topic and the directories workers share, as if they ran one
// after the other on the same machine.
type env struct {
	t        *testing.T
	name     string // topic, datasource and supervisor id
	ns       string
	hostPort string
	temporal client.Client // in ns
	dbURL    string
	pool     *pgxpool.Pool
	store    *pgstore.Store
	broker   *kafkadev.Broker
	brokers  []string

	deepDir, stagingDir, workDir, logDir string
}

var quietLog = tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))

func newEnv(t *testing.T, partitions int32) *env {
	t.Helper()
	ctx := context.Background()
	name := strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	e := &env{t: t, name: name, hostPort: testenv.Temporal(t), dbURL: testenv.Postgres(t)}
	e.deepDir, e.stagingDir, e.workDir, e.logDir = t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()

	broker, err := kafkadev.Start(ctx, "127.0.0.1:0", map[string]int32{name: partitions})
	require.NoError(t, err)
	t.Cleanup(broker.Close)
	e.broker, e.brokers = broker, broker.Addrs()

	e.pool, err = pgxpool.New(ctx, e.dbURL)
	require.NoError(t, err)
	t.Cleanup(e.pool.Close)
	e.store = pgstore.New(e.pool) // the worker applies the migrations

	e.ns = e.registerNamespace()
	e.temporal, err = client.Dial(client.Options{HostPort: e.hostPort, Namespace: e.ns, Logger: quietLog})
	require.NoError(t, err)
	t.Cleanup(e.temporal.Close)
	e.waitNamespaceUsable()
	return e
}

// registerNamespace registers a namespace of the test's own, so that its
// worker is the only one polling task queue "handoff" there, and deletes it
// when the test ends (unless it failed).
func (e *env) registerNamespace() string {
	e.t.Helper()
	ns := fmt.Sprintf("process-%s-%d", e.name, time.Now().UnixNano())
	nsc, err := client.NewNamespaceClient(client.Options{HostPort: e.hostPort, Logger: quietLog})
	require.NoError(e.t, err)
	defer nsc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(e.t, nsc.Register(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: ns, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
	}))
	e.t.Cleanup(func() {
		// testenv's own dev server goes away with the test binary; a server
		// of TEMPORAL_ADDRESS would keep the namespaces.
		if os.Getenv("TEMPORAL_ADDRESS") == "" {
			return
		}
		if e.t.Failed() {
			e.t.Logf("kept Temporal namespace %s", ns)
			return
		}
		c, err := client.Dial(client.Options{HostPort: e.hostPort, Logger: quietLog})
		if err != nil {
			e.t.Logf("delete namespace %s: %v", ns, err)
			return
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := c.OperatorService().DeleteNamespace(ctx, &operatorservice.DeleteNamespaceRequest{Namespace: ns}); err != nil {
			e.t.Logf("delete namespace %s: %v", ns, err)
		}
	})
	return ns
}

// waitNamespaceUsable waits until the new namespace answers namespaced
// calls: it takes a moment to reach every part of the server.
func (e *env) waitNamespaceUsable() {
	e.t.Helper()
	start := time.Now()
	require.NoError(e.t, retry(30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := e.temporal.OperatorService().ListSearchAttributes(ctx,
			&operatorservice.ListSearchAttributesRequest{Namespace: e.ns}); err != nil {
			return err
		}
		_, err := e.temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: e.ns})
		return err
	}), "namespace %s never became usable", e.ns)
	e.t.Logf("namespace %s usable after %v", e.ns, time.Since(start).Round(time.Millisecond))
}

// retry calls f until it returns nil or a retryStop, or timeout passes.
func retry(timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		var stop retryStop
		if errors.As(err, &stop) {
			return stop.err
		}
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// spec is e2e's small-chunk spec over the env's topic: many chunks and
// sequences, reading from the earliest offsets.
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
		TuningConfig: domain.TuningConfig{MaxRecordsPerChunk: 2000, ChunkPeriod: domain.Duration(300 * time.Millisecond)},
	}
	spec.ApplyDefaults()
	require.NoError(e.t, spec.Validate())
	return spec
}

// produce sends n events (rate events/s, 0: as fast as possible).
func (e *env) produce(gen *eventgen.Generator, n int64, rate float64) error {
	sent, err := gen.Produce(context.Background(), e.brokers, e.name, rate, n, false)
	if err != nil {
		return err
	}
	if sent != n {
		return fmt.Errorf("produced %d of %d events", sent, n)
	}
	return nil
}

// produceInBackground produces n events at rate and reports on the channel.
func (e *env) produceInBackground(gen *eventgen.Generator, n int64, rate float64) <-chan error {
	done := make(chan error, 1)
	go func() { done <- e.produce(gen, n, rate) }()
	return done
}

func (e *env) startSupervisor(spec domain.Spec) client.WorkflowRun {
	e.t.Helper()
	var run client.WorkflowRun
	// A new namespace may still be unknown to some part of the server.
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

// retryStop ends a retry at once with the error it wraps.
type retryStop struct{ err error }

func (r retryStop) Error() string { return r.err.Error() }

func (e *env) signal(spec domain.Spec, name string, arg any) {
	e.t.Helper()
	require.NoError(e.t, e.temporal.SignalWorkflow(context.Background(), workflows.SupervisorWorkflowID(spec.ID), "", name, arg))
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
	require.NoError(e.t, e.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM published_sequences WHERE datasource = $1`, spec.DataSchema.DataSource).Scan(&n))
	return n
}

// checkpointUntilPublished sends checkpoints until more than before
// sequences are published: a checkpoint before a group read anything
// closes nothing.
func (e *env) checkpointUntilPublished(spec domain.Spec, before int, timeout time.Duration) int {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		e.signal(spec, workflows.SignalCheckpoint, workflows.CheckpointSignal{})
		for range 20 {
			if n := e.publishedSequences(spec); n > before {
				return n
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	st, err := e.status(spec)
	e.t.Fatalf("no sequence published within %v of checkpoints; status: %+v (%v)", timeout, st, err)
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
	if err := run.Get(ctx, nil); err != nil {
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
	ctx := context.Background()
	_, _, latest, err := kc.Look(ctx, domain.IOConfig{Topic: e.name})
	require.NoError(e.t, err)
	return latest
}

// publishedIDCounts reads every segment the segments table lists back from
// deep storage and counts each event id in them.
func (e *env) publishedIDCounts(spec domain.Spec) (seen map[string]int, segments int) {
	e.t.Helper()
	segs, err := e.store.Segments(context.Background(), spec.DataSchema.DataSource)
	require.NoError(e.t, err)
	seen = map[string]int{}
	for _, seg := range segs {
		u, err := url.Parse(seg.URI)
		require.NoError(e.t, err)
		schema, rows, err := segment.ReadFile(u.Path)
		require.NoError(e.t, err, "segment %s", seg.ID)
		idCol := slices.IndexFunc(schema.Dims, func(c domain.Column) bool { return c.Name == "id" })
		require.GreaterOrEqual(e.t, idCol, 0, "segment %s has no id column: %v", seg.ID, schema.Dims)
		require.Equal(e.t, seg.Rows, int64(len(rows)), "segment %s row count", seg.ID)
		for _, r := range rows {
			seen[r.Dim(idCol).S]++
		}
	}
	return seen, len(segs)
}

// requireExactlyOnce checks that events runID-0 ... runID-(n-1) are each
// published exactly once and nothing else is, and that the stored offsets
// are the topic's end offsets. It returns the number of segments.
func (e *env) requireExactlyOnce(spec domain.Spec, runID string, n int64) int {
	e.t.Helper()
	seen, segments := e.publishedIDCounts(spec)
	var total int
	for _, c := range seen {
		total += c
	}
	var missing, dup []string
	for i := range n {
		id := runID + "-" + strconv.FormatInt(i, 10)
		switch c := seen[id]; {
		case c == 0:
			missing = append(missing, id)
		case c > 1:
			dup = append(dup, id)
		}
		delete(seen, id)
	}
	e.t.Logf("%d segments, %d rows published; %d of %d ids missing, %d duplicated, %d never produced",
		segments, total, len(missing), n, len(dup), len(seen))
	require.Empty(e.t, first(missing), "%d of %d events lost (first ones shown)", len(missing), n)
	require.Empty(e.t, first(dup), "%d events published more than once", len(dup))
	require.Empty(e.t, seen, "%d rows that were never produced", len(seen))
	require.EqualValues(e.t, n, total)

	stored, err := e.store.Offsets(context.Background(), spec.DataSchema.DataSource, spec.IOConfig.Topic)
	require.NoError(e.t, err)
	require.Equal(e.t, e.latest(), stored, "datasource_offsets must be each partition's end offset")
	r, err := laketest.Check(context.Background(), e.store.Pool(), lake.Config{}, spec.DataSchema.DataSource, runID, n, stored)
	if r != nil {
		e.t.Logf("table: %d rows in %d files", r.Scan.Rows, len(r.Scan.Files))
	}
	require.NoError(e.t, err, "the datasource read through its Iceberg table")
	return segments
}

func first(ids []string) []string { return ids[:min(len(ids), 5)] }
