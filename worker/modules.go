package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.uber.org/fx"

	"handoff/activities"
	"handoff/internal/kafka"
	"handoff/internal/lake"
	"handoff/internal/liveness"
	"handoff/internal/metrics"
	"handoff/internal/pgstore"
	"handoff/internal/redact"
	"handoff/internal/scratch"
	"handoff/internal/storage"
	"handoff/internal/wakeup"
	"handoff/internal/workload"
	"handoff/workflows"
)

// Modules wires the worker: each resource is built by a plain constructor
// and opened and closed by lifecycle hooks that never block.
func Modules(cfg Config) fx.Option {
	return fx.Options(
		fx.Supply(cfg),
		fx.Provide(newSelf, newLogger, newTracker, newMetrics, newPostgres, newKafka, newStorage, newScratch, newWakeups, newTemporalClient, newLiveness, newActivities),
		fx.Invoke(logConfig, warnInsecure, ensureSearchAttributes, startTemporalWorker, startHTTP),
	)
}

// newTracker bounds the worker's consume and publish activities; its
// memory monitor samples the heap from start until stop.
func newTracker(lc fx.Lifecycle, cfg Config) *workload.Tracker {
	t := workload.NewTracker(cfg.limits())
	var cancel context.CancelFunc
	done := make(chan struct{})
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			var ctx context.Context
			ctx, cancel = context.WithCancel(context.Background())
			go func() {
				defer close(done)
				t.Monitor(ctx)
			}()
			return nil
		},
		OnStop: func(context.Context) error {
			cancel()
			<-done
			return nil
		},
	})
	return t
}

// newMetrics registers the worker's metrics, the tracker's, and the Go
// runtime's and process's on a registry of their own, which /metrics
// serves.
func newMetrics(t *workload.Tracker) (*metrics.Metrics, *prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return nil, nil, fmt.Errorf("register go collector: %w", err)
	}
	if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, nil, fmt.Errorf("register process collector: %w", err)
	}
	m := metrics.New(reg)
	m.Track(t)
	return m, reg, nil
}

// newPostgres opens the pool and, at start, applies pending migrations.
func newPostgres(lc fx.Lifecycle, cfg Config, log *slog.Logger) (*pgstore.Store, error) {
	pool, err := pgxpool.New(context.Background(), cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("postgres config: %w", redact.Error(err))
	}
	store := pgstore.New(pool)
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error {
			if err := store.Ping(ctx); err != nil {
				return redact.Error(err)
			}
			if err := store.Migrate(ctx); err != nil {
				return redact.Error(err)
			}
			log.Info("postgres ready, migrations applied")
			return nil
		},
		OnStop: func(context.Context) error { pool.Close(); return nil },
	})
	return store, nil
}

// newWakeups listens for wakes of this worker's consume streams from start
// (after the migrations) until stop.
func newWakeups(lc fx.Lifecycle, store *pgstore.Store, log *slog.Logger) *wakeup.Hub {
	h := wakeup.New(store.Pool(), log)
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error { h.Start(); return nil },
		OnStop:  func(context.Context) error { h.Close(); return nil },
	})
	return h
}

// newKafka's fetch connections close when the worker stops, after the
// Temporal worker (started later, so stopped earlier) let activities end.
func newKafka(lc fx.Lifecycle, cfg Config) (*kafka.Client, error) {
	c, err := kafka.New(cfg.KafkaBrokers, kafka.WithSecurity(cfg.Security.Kafka))
	if err != nil {
		return nil, err
	}
	lc.Append(fx.Hook{OnStop: func(context.Context) error { c.Close(); return nil }})
	return c, nil
}

// stores holds deep storage and staging.
type stores struct {
	fx.Out
	Deep    storage.Store `name:"deep"`
	Staging storage.Store `name:"staging"`
}

// openDeepTimeout bounds opening deep storage: an s3:// store asks the
// server whether its bucket exists.
const openDeepTimeout = 30 * time.Second

func newStorage(cfg Config, log *slog.Logger) (stores, error) {
	ctx, cancel := context.WithTimeout(context.Background(), openDeepTimeout)
	defer cancel()
	deep, err := storage.Open(ctx, cfg.DeepStorage, storage.WithS3(cfg.S3))
	if err != nil {
		return stores{}, fmt.Errorf("deep storage: %w", redact.Error(err))
	}
	staging, err := storage.Open(ctx, cfg.StagingDir, storage.WithS3(cfg.S3))
	if err != nil {
		return stores{}, fmt.Errorf("staging: %w", redact.Error(err))
	}
	log.Info("storage ready", "deep", deep.URI(""), "staging", staging.URI(""))
	return stores{Deep: deep, Staging: staging}, nil
}

// newScratch takes this process's scratch directory, removing those of
// dead workers; it is removed when the worker stops, after the activities.
func newScratch(lc fx.Lifecycle, cfg Config, log *slog.Logger) (*scratch.Dir, error) {
	d, swept, err := scratch.Open(cfg.ScratchDir)
	if err != nil {
		return nil, err
	}
	if swept > 0 {
		log.Info("removed the scratch directories of dead workers", "count", swept, "root", cfg.ScratchDir)
	}
	lc.Append(fx.Hook{OnStop: func(context.Context) error { return d.Close() }})
	return d, nil
}

// newTemporalClient creates a lazy client and checks the server at start.
// The SDK logs through log and reports its metrics on the worker's registry.
func newTemporalClient(lc fx.Lifecycle, cfg Config, me self, log *slog.Logger, m *metrics.Metrics) (client.Client, error) {
	opts, err := cfg.temporalOptions()
	if err != nil {
		return nil, err
	}
	opts.Identity = me.Identity
	opts.Logger = tlog.NewStructuredLogger(log)
	opts.MetricsHandler = m.TemporalHandler()
	c, err := client.NewLazyClient(opts)
	if err != nil {
		return nil, fmt.Errorf("temporal client for %s: %w", cfg.TemporalAddress, err)
	}
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error {
			if _, err := c.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
				return fmt.Errorf("temporal at %s: %w", cfg.TemporalAddress, err)
			}
			return nil
		},
		OnStop: func(context.Context) error { c.Close(); return nil },
	})
	return c, nil
}

// otherActivities is room for the activities that are neither consume nor
// publish (discovery, offsets, specs, checks): short and light.
const otherActivities = 8

type activityDeps struct {
	fx.In
	Kafka    *kafka.Client
	Store    *pgstore.Store
	Deep     storage.Store `name:"deep"`
	Staging  storage.Store `name:"staging"`
	Scratch  *scratch.Dir
	Temporal client.Client
	Log      *slog.Logger
	Tracker  *workload.Tracker
	Metrics  *metrics.Metrics
	Wakeups  *wakeup.Hub
	Config   Config
}

func newActivities(d activityDeps) *activities.Activities {
	return &activities.Activities{
		Kafka: d.Kafka, Store: d.Store, Deep: d.Deep, Staging: d.Staging, Scratch: d.Scratch.Path(),
		Temporal: d.Temporal, Log: d.Log,
		Tracker: d.Tracker, Metrics: d.Metrics, Faults: faultsFromEnv(d.Log), Wakeups: d.Wakeups,
		Tables: lake.New(d.Store.Pool(), d.Deep, d.Config.Tables),
	}
}

// startTemporalWorker polls the task queue from start until stop; stopping
// waits up to the shutdown grace for running activities, so a graceful
// shutdown loses nothing. Consume and publish activities wait for their
// tracker slots inside the activity, so the SDK's own bound only has to
// leave room for them and for the small activities beside them.
func startTemporalWorker(lc fx.Lifecycle, cfg Config, c client.Client, acts *activities.Activities, running *liveness.Registry, log *slog.Logger) {
	if cfg.WorkflowCache > 0 {
		worker.SetStickyWorkflowCacheSize(cfg.WorkflowCache) // process-wide, before the first worker
	}
	w := worker.New(c, workflows.TaskQueue, worker.Options{
		// The lease lists what runs here, for a live worker to take over
		// at once should this one die (internal/liveness).
		Interceptors: []interceptor.WorkerInterceptor{liveness.NewInterceptor(running)},
		// Streams and watches hold an activity slot for as long as they run
		// (up to an hour), a consume slot only while they stage a chunk.
		MaxConcurrentActivityExecutionSize: cfg.MaxConsume + cfg.MaxPublish + otherActivities + cfg.MaxStreams,
		// Pollers follow the load: two workflow-task pollers (the SDK's
		// default) left hundreds of supervisors' handoffs queued behind
		// each other.
		WorkflowTaskPollerBehavior: worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{}),
		ActivityTaskPollerBehavior: worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{}),
		WorkerStopTimeout:          cfg.ShutdownGrace,
		// A stream decides itself how often it heartbeats (every 2 s while
		// it stages chunks, every 40 s while quiet): let those through.
		MaxHeartbeatThrottleInterval: 2 * time.Second,
	})
	workflows.Register(w)
	acts.Register(w)
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			if err := w.Start(); err != nil {
				return fmt.Errorf("start temporal worker: %w", err)
			}
			log.Info("worker polling", "taskQueue", workflows.TaskQueue)
			return nil
		},
		OnStop: func(context.Context) error { w.Stop(); return nil },
	})
}
