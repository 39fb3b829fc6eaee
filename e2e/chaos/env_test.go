package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"google.golang.org/protobuf/types/known/durationpb"

	"handoff/internal/kafkadev"
	"handoff/internal/pgstore"
	"handoff/internal/testenv"
)

// env is one scenario's world: a Temporal namespace of its own, a
// database, a topic, and the directories its workers share, as if they ran
// on one machine.
type env struct {
	t        *testing.T
	name     string // topic, datasource and supervisor id
	ns       string
	hostPort string
	temporal client.Client // in ns
	// workerDB is the DATABASE_URL workers get (maybe through a proxy);
	// pool and store reach the database directly, for the checks.
	workerDB string
	pool     *pgxpool.Pool
	store    *pgstore.Store
	brokers  []string

	deepDir, stagingDir, logDir string
	report                      *report

	mu     sync.Mutex
	killed []*killed // workers the scenario killed (recover_test.go)
}

// envOptions say which services a scenario brings itself; zero values
// take the shared ones: testenv's Temporal and Postgres, and an in-process
// broker with the scenario's topic.
type envOptions struct {
	partitions int32
	temporal   string   // host:port of a Temporal frontend
	dbURL      string   // database for the checks (and workers, unless workerDB)
	workerDB   string   // DATABASE_URL of workers
	brokers    []string // a broker that has (or will have) the topic
}

var quietLog = tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))

// topicName is the scenario's topic (and supervisor id and datasource).
func topicName(t *testing.T) string {
	return strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{t: t, name: topicName(t), hostPort: o.temporal, workerDB: o.workerDB}
	e.deepDir, e.stagingDir, e.logDir = t.TempDir(), t.TempDir(), t.TempDir()
	e.report = newReport(t)
	if e.hostPort == "" {
		e.hostPort = testenv.Temporal(t)
	}
	dbURL := o.dbURL
	if dbURL == "" {
		dbURL = testenv.Postgres(t)
	}
	if e.workerDB == "" {
		e.workerDB = dbURL
	}
	e.brokers = o.brokers
	if len(e.brokers) == 0 {
		if o.partitions == 0 {
			o.partitions = 4
		}
		broker, err := kafkadev.Start(ctx, "127.0.0.1:0", map[string]int32{e.name: o.partitions})
		require.NoError(t, err)
		t.Cleanup(broker.Close)
		e.brokers = broker.Addrs()
	}

	var err error
	e.pool, err = pgxpool.New(ctx, dbURL)
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

// registerNamespace registers a namespace of the scenario's own, so that
// its workers are the only ones polling task queue "handoff" there.
func (e *env) registerNamespace() string {
	e.t.Helper()
	ns := fmt.Sprintf("chaos-%s-%d", e.name, time.Now().UnixNano())
	nsc, err := client.NewNamespaceClient(client.Options{HostPort: e.hostPort, Logger: quietLog})
	require.NoError(e.t, err)
	defer nsc.Close()
	require.NoError(e.t, retry(30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return nsc.Register(ctx, &workflowservice.RegisterNamespaceRequest{
			Namespace: ns, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
		})
	}))
	e.t.Cleanup(func() {
		// testenv's own dev server goes away with the test binary; a server
		// of TEMPORAL_ADDRESS keeps namespaces, so delete ours there.
		if os.Getenv("TEMPORAL_ADDRESS") == "" || e.t.Failed() {
			return
		}
		c, err := client.Dial(client.Options{HostPort: e.hostPort, Logger: quietLog})
		if err != nil {
			return
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = c.OperatorService().DeleteNamespace(ctx, &operatorservice.DeleteNamespaceRequest{Namespace: ns})
	})
	return ns
}

// waitNamespaceUsable waits until the new namespace answers namespaced
// calls: it takes a moment to reach every part of the server.
func (e *env) waitNamespaceUsable() {
	e.t.Helper()
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

// retryStop ends a retry at once with the error it wraps.
type retryStop struct{ err error }

func (r retryStop) Error() string { return r.err.Error() }
