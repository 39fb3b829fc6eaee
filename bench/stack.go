package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"handoff/internal/kafkadev"
	"handoff/internal/logtail"
	"handoff/internal/pgcluster"
	"handoff/internal/searchattr"
)

// Existing services to use instead of starting them, as for the worker.
const (
	envPostgres = "BENCH_DATABASE_URL" // a server URL: bench creates its databases there
	envTemporal = "BENCH_TEMPORAL_ADDRESS"
	envKafka    = "BENCH_KAFKA_BROKERS" // comma-separated
	// The Prometheus endpoint of the server of BENCH_TEMPORAL_ADDRESS, for
	// the heartbeats it serves; without it they are reported unknown.
	envTemporalMetrics = "BENCH_TEMPORAL_METRICS_URL"
)

// stack is the services a run needs, started or given.
type stack struct {
	dir       string // the run's files: deep storage, staging, logs
	pgServer  string // URL of a database on the Postgres server
	temporal  string // host:port
	namespace string
	// metricsURL is the Temporal server's Prometheus endpoint ("": none).
	metricsURL string
	brokers    []string

	closers []func()
}

func startStack(ctx context.Context, o options, dir string) (*stack, error) {
	s := &stack{dir: dir, namespace: "default"}
	ok := false
	defer func() {
		if !ok {
			s.close()
		}
	}()
	if err := s.startPostgres(ctx); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	// The table-growth and catalog phases need Postgres only.
	if !slices.ContainsFunc(o.phases, func(p string) bool { return p != "tablegrowth" && p != "catalog" }) {
		ok = true
		return s, nil
	}
	if err := s.startTemporal(ctx, o.temporalBin); err != nil {
		return nil, fmt.Errorf("temporal: %w", err)
	}
	if err := s.startKafka(ctx); err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	ok = true
	return s, nil
}

func (s *stack) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

func (s *stack) startPostgres(ctx context.Context) error {
	if u := os.Getenv(envPostgres); u != "" {
		s.pgServer = u
		return nil
	}
	c, err := pgcluster.Start(ctx, pgcluster.Options{Dir: filepath.Join(s.dir, "pg")})
	if err != nil {
		return err
	}
	s.closers = append(s.closers, func() { _ = c.Stop() })
	s.pgServer = c.URL("postgres")
	logf("postgres on port %d", c.Port())
	return nil
}

// database creates a fresh database for one phase and returns its URL.
func (s *stack) database(ctx context.Context, name string) (string, error) {
	if err := pgcluster.CreateDatabase(ctx, s.pgServer, name); err != nil {
		return "", err
	}
	return withDatabase(s.pgServer, name)
}

func (s *stack) startTemporal(ctx context.Context, bin string) error {
	if addr := os.Getenv(envTemporal); addr != "" {
		s.temporal, s.metricsURL = addr, os.Getenv(envTemporalMetrics)
		return nil
	}
	if bin == "" {
		bin = os.Getenv("HANDOFF_TEMPORAL_BIN")
	}
	if bin == "" {
		bin = filepath.Join(".tools", "bin", "temporal")
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("temporal CLI %s: %w (run `make tools`, or set %s)", bin, err, envTemporal)
	}
	metricsAddr, err := freeAddr()
	if err != nil {
		return err
	}
	_, metricsPort, _ := strings.Cut(metricsAddr, ":")
	out := &logtail.Buffer{Size: 8 << 10}
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	srv, err := testsuite.StartDevServer(sctx, testsuite.DevServerOptions{
		ExistingPath:  bin,
		LogLevel:      "warn",
		ClientOptions: &client.Options{Logger: quietLogger()},
		Stdout:        out, Stderr: out,
		ExtraArgs: append(searchattr.DevServerArgs(), "--metrics-port", metricsPort),
	})
	if err != nil {
		return fmt.Errorf("start dev server: %w; output:\n%s", err, out)
	}
	s.closers = append(s.closers, func() { srv.Client().Close(); _ = srv.Stop() })
	s.temporal = srv.FrontendHostPort()
	s.metricsURL = "http://" + metricsAddr + "/metrics"
	logf("temporal dev server on %s, metrics on %s", s.temporal, s.metricsURL)
	return nil
}

func (s *stack) startKafka(ctx context.Context) error {
	if b := os.Getenv(envKafka); b != "" {
		s.brokers = strings.Split(b, ",")
		return nil
	}
	b, err := kafkadev.Start(ctx, "127.0.0.1:0", nil)
	if err != nil {
		return err
	}
	s.closers = append(s.closers, b.Close)
	s.brokers = b.Addrs()
	logf("kafka (kfake) on %s", strings.Join(s.brokers, ","))
	return nil
}

// createTopic creates topic with partitions through the Kafka protocol, so
// it works the same on kfake and on a real broker.
func (s *stack) createTopic(ctx context.Context, topic string, partitions int) error {
	c := &kafkago.Client{Addr: kafkago.TCP(s.brokers...), Timeout: 30 * time.Second}
	res, err := c.CreateTopics(ctx, &kafkago.CreateTopicsRequest{Topics: []kafkago.TopicConfig{
		{Topic: topic, NumPartitions: partitions, ReplicationFactor: 1},
	}})
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	if err := res.Errors[topic]; err != nil {
		if errors.Is(err, kafkago.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: it exists already: bench needs a topic of its own", topic)
		}
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return nil
}

func (s *stack) client() (client.Client, error) {
	return client.Dial(client.Options{HostPort: s.temporal, Namespace: s.namespace, Logger: quietLogger()})
}

func quietLogger() tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
}
