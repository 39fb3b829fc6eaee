package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.uber.org/fx"

	"handoff/activities"
	"handoff/internal/kafka"
	"handoff/internal/pgstore"
	"handoff/internal/storage"
	"handoff/workflows"
)

// Modules wires the worker: each resource is built by a plain constructor
// and opened and closed by lifecycle hooks that never block.
func Modules(cfg Config) fx.Option {
	return fx.Options(
		fx.Supply(cfg),
		fx.Provide(newLogger, newPostgres, newKafka, newStorage, newTemporalClient, newActivities),
		fx.Invoke(ensureSearchAttributes, startTemporalWorker, startHTTP),
	)
}

func newLogger(cfg Config) *slog.Logger {
	level, _ := cfg.level() // validated
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// newPostgres opens the pool and, at start, applies pending migrations.
func newPostgres(lc fx.Lifecycle, cfg Config, log *slog.Logger) (*pgstore.Store, error) {
	pool, err := pgxpool.New(context.Background(), cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("postgres config: %w", err)
	}
	store := pgstore.New(pool)
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error {
			if err := store.Ping(ctx); err != nil {
				return err
			}
			if err := store.Migrate(ctx); err != nil {
				return err
			}
			log.Info("postgres ready, migrations applied")
			return nil
		},
		OnStop: func(context.Context) error { pool.Close(); return nil },
	})
	return store, nil
}

func newKafka(cfg Config) (*kafka.Client, error) { return kafka.New(cfg.KafkaBrokers) }

// stores holds deep storage and staging.
type stores struct {
	fx.Out
	Deep    *storage.Local `name:"deep"`
	Staging *storage.Local `name:"staging"`
}

func newStorage(cfg Config) (stores, error) {
	deep, err := storage.NewLocal(cfg.DeepStorage)
	if err != nil {
		return stores{}, fmt.Errorf("deep storage: %w", err)
	}
	staging, err := storage.NewLocal(cfg.StagingDir)
	if err != nil {
		return stores{}, fmt.Errorf("staging: %w", err)
	}
	return stores{Deep: deep, Staging: staging}, nil
}

// newTemporalClient creates a lazy client and checks the server at start.
func newTemporalClient(lc fx.Lifecycle, cfg Config, log *slog.Logger) (client.Client, error) {
	c, err := client.NewLazyClient(client.Options{
		HostPort: cfg.TemporalAddress, Namespace: cfg.TemporalNamespace,
		Logger: tlog.NewStructuredLogger(log),
	})
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

type activityDeps struct {
	fx.In
	Kafka    *kafka.Client
	Store    *pgstore.Store
	Deep     *storage.Local `name:"deep"`
	Staging  *storage.Local `name:"staging"`
	Temporal client.Client
	Log      *slog.Logger
}

func newActivities(d activityDeps) *activities.Activities {
	return &activities.Activities{
		Kafka: d.Kafka, Store: d.Store, Deep: d.Deep, Staging: d.Staging, Temporal: d.Temporal, Log: d.Log,
	}
}

// startTemporalWorker polls the task queue from start until stop; stopping
// waits for running activities, so a graceful shutdown loses nothing.
func startTemporalWorker(lc fx.Lifecycle, c client.Client, acts *activities.Activities, log *slog.Logger) {
	w := worker.New(c, workflows.TaskQueue, worker.Options{})
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
