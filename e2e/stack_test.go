package e2e

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"handoff/activities"
	"handoff/e2e/harness"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/internal/kafka"
	"handoff/internal/kafkadev"
	"handoff/internal/lake"
	"handoff/internal/pgstore"
	"handoff/internal/storage"
	"handoff/internal/testenv"
	"handoff/internal/wakeup"
	"handoff/workflows"
)

// stack is one test's own world: its topic, database, storage directories
// and task queue, with a worker polling that queue.
type stack struct {
	t         *testing.T
	name      string
	broker    *kafkadev.Broker
	brokers   []string
	store     *pgstore.Store
	temporal  client.Client
	deep      *storage.Local
	staging   *storage.Local
	taskQueue string
	acts      *activities.Activities
}

// newStack starts the stack; partitions 0 leaves the topic to be created
// later with createTopic.
func newStack(t *testing.T, partitions int32, faults activities.Faults) *stack {
	t.Helper()
	ctx := context.Background()
	name := strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	s := &stack{t: t, name: name, taskQueue: "e2e-" + name}

	topics := map[string]int32{}
	if partitions > 0 {
		topics[name] = partitions
	}
	broker, err := kafkadev.Start(ctx, "127.0.0.1:0", topics)
	require.NoError(t, err)
	t.Cleanup(broker.Close)
	s.broker = broker
	s.brokers = broker.Addrs()

	pool, err := pgxpool.New(ctx, testenv.Postgres(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	s.store = pgstore.New(pool)
	require.NoError(t, s.store.Migrate(ctx))

	s.deep, err = storage.NewLocal(t.TempDir())
	require.NoError(t, err)
	s.staging, err = storage.NewLocal(t.TempDir())
	require.NoError(t, err)

	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s.temporal, err = client.Dial(client.Options{HostPort: testenv.Temporal(t), Logger: tlog.NewStructuredLogger(log)})
	require.NoError(t, err)
	t.Cleanup(s.temporal.Close)

	kc, err := kafka.New(s.brokers)
	require.NoError(t, err)
	s.acts = &activities.Activities{
		Kafka: kc, Store: s.store, Deep: s.deep, Staging: s.staging,
		Temporal: s.temporal, Log: log, Faults: faults, Wakeups: startWakeups(t, pool, log),
		Tables:          lake.New(pool, s.deep, lake.Config{}),
		HeldReportAfter: 2 * time.Second, // the tests' transactions are held seconds
	}
	w := worker.New(s.temporal, s.taskQueue, workerOptions)
	workflows.Register(w)
	s.acts.Register(w)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return s
}

// workerOptions are the worker's own (worker/modules.go) where they change
// what the workflows do: streams heartbeat as often as they decide.
var workerOptions = worker.Options{MaxHeartbeatThrottleInterval: 2 * time.Second}

// startWakeups delivers wakes to the streams of the test's worker.
func startWakeups(t *testing.T, pool *pgxpool.Pool, log *slog.Logger) *wakeup.Hub {
	h := wakeup.Start(pool, log)
	t.Cleanup(h.Close)
	return h
}

// spec is a small-chunk spec over the stack's topic, so a test sees many
// chunks and sequences.
func (s *stack) spec(taskCount int) domain.Spec {
	spec := domain.Spec{
		ID: s.name,
		DataSchema: domain.DataSchema{
			DataSource:    s.name,
			TimestampSpec: domain.TimestampSpec{Column: "ts", Format: "iso"},
			DimensionsSpec: domain.DimensionsSpec{Dimensions: []domain.DimensionSpec{
				{Name: "id"}, {Name: "page"}, {Name: "user"}, {Name: "country"}, {Name: "action"},
			}},
			GranularitySpec: domain.GranularitySpec{
				SegmentGranularity: domain.GranularityMinute,
			},
		},
		IOConfig: domain.IOConfig{
			Topic: s.name, TaskCount: taskCount, UseEarliestOffset: true, Period: domain.Duration(time.Second),
		},
		TuningConfig: domain.TuningConfig{MaxRecordsPerChunk: 2000, ChunkPeriod: domain.Duration(300 * time.Millisecond)},
	}
	spec.ApplyDefaults()
	require.NoError(s.t, spec.Validate())
	return spec
}

// produce sends n events with unique ids and returns how many were acked.
func (s *stack) produce(gen *eventgen.Generator, n int64) {
	s.t.Helper()
	sent, err := gen.Produce(context.Background(), s.brokers, s.name, 0, n, false)
	require.NoError(s.t, err)
	require.Equal(s.t, n, sent)
}

func (s *stack) startSupervisor(spec domain.Spec) client.WorkflowRun {
	s.t.Helper()
	run, err := s.temporal.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{
		ID: workflows.SupervisorWorkflowID(spec.ID), TaskQueue: s.taskQueue,
	}, workflows.SupervisorWorkflowName, workflows.SupervisorInput{Spec: spec})
	require.NoError(s.t, err)
	return run
}

func (s *stack) signal(spec domain.Spec, name string, arg any) {
	s.t.Helper()
	require.NoError(s.t, s.temporal.SignalWorkflow(context.Background(), workflows.SupervisorWorkflowID(spec.ID), "", name, arg))
}

func (s *stack) status(spec domain.Spec) workflows.SupervisorStatus {
	s.t.Helper()
	v, err := s.temporal.QueryWorkflow(context.Background(), workflows.SupervisorWorkflowID(spec.ID), "", workflows.QueryStatus)
	require.NoError(s.t, err)
	var st workflows.SupervisorStatus
	require.NoError(s.t, v.Get(&st))
	return st
}

// update sends an update to the supervisor and waits for its answer.
func (s *stack) update(spec domain.Spec, name string, arg, result any) error {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	h, err := s.temporal.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: workflows.SupervisorWorkflowID(spec.ID), UpdateName: name,
		Args: argsOf(arg), WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return err
	}
	return h.Get(ctx, result)
}

func argsOf(arg any) []any {
	if arg == nil {
		return nil
	}
	return []any{arg}
}

// publishedSequences counts the committed sequences of the datasource.
func (s *stack) publishedSequences(dataSource string) int {
	s.t.Helper()
	var n int
	require.NoError(s.t, s.store.Pool().QueryRow(context.Background(),
		`SELECT count(*) FROM published_sequences WHERE datasource = $1`, dataSource).Scan(&n))
	return n
}

// checkpointUntilPublished sends checkpoints until the count of published
// sequences exceeds before: a checkpoint that arrives before a group read
// anything closes nothing, so one signal alone could wait forever.
func (s *stack) checkpointUntilPublished(spec domain.Spec, before int) int {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		s.signal(spec, workflows.SignalCheckpoint, workflows.CheckpointSignal{})
		for range 20 {
			if n := s.publishedSequences(spec.DataSchema.DataSource); n > before {
				return n
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	s.t.Fatalf("no sequence published within 60s of checkpoints; status: %+v", s.status(spec))
	return 0
}

// waitCaughtUp waits until every group has read to the topic's end, so a
// stop publishes everything produced.
func (s *stack) waitCaughtUp(spec domain.Spec) {
	s.t.Helper()
	latest := s.latest(spec)
	ctx := context.Background()
	require.Eventually(s.t, func() bool {
		pos, err := harness.GroupPositions(ctx, s.temporal, spec)
		return err == nil && pos.Equal(latest)
	}, time.Minute, 100*time.Millisecond, "groups did not read to the end offsets %v", latest)
}

func (s *stack) stopAndWait(spec domain.Spec, run client.WorkflowRun) {
	s.t.Helper()
	s.signal(spec, workflows.SignalStop, workflows.StopSignal{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(s.t, run.Get(ctx, nil), "supervisor did not complete after stop")
}

// currentRunID is the run id of the workflow's latest run.
func (s *stack) currentRunID(workflowID string) string {
	s.t.Helper()
	d, err := s.temporal.DescribeWorkflowExecution(context.Background(), workflowID, "")
	require.NoError(s.t, err)
	return d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
}
