package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	"go.uber.org/fx"

	"handoff/internal/liveness"
	"handoff/internal/metrics"
	"handoff/internal/pgstore"
	"handoff/workflows"
)

// self is who this worker process is: its lease's id, unique per start,
// and the Temporal identity its client gives the server (pid@host@ and the
// lease's first characters, so an operator matches the two).
type self struct {
	WorkerID string
	Identity string
}

func newSelf() self {
	id := uuid.NewString()
	host, err := os.Hostname()
	if err != nil {
		host = "unknown-host"
	}
	return self{WorkerID: id, Identity: fmt.Sprintf("%d@%s@%s", os.Getpid(), host, id[:8])}
}

// newLiveness keeps this worker's lease and takes over dead workers'
// activities (internal/liveness), from start until stop. Its hooks run
// before the Temporal worker's start and after its stop, so the lease
// lives as long as this worker may run an activity.
func newLiveness(lc fx.Lifecycle, cfg Config, me self, store *pgstore.Store, c client.Client, m *metrics.Metrics, log *slog.Logger) (*liveness.Registry, *liveness.Holder, error) {
	reg := liveness.NewRegistry()
	takeOver := func(ctx context.Context, lost liveness.Lost) (liveness.Takeover, error) {
		t, err := liveness.TakeOver(ctx, c, lost)
		m.TakenOver(len(t.Failed))
		return t, err
	}
	h, err := liveness.NewHolder(store.Pool(), liveness.Config{
		WorkerID: me.WorkerID, Identity: me.Identity, Namespace: cfg.TemporalNamespace, TaskQueue: workflows.TaskQueue,
		TTL: cfg.LeaseTTL, Renew: cfg.LeaseRenew,
	}, reg, takeOver, log)
	if err != nil {
		return nil, nil, err
	}
	var cancel context.CancelFunc
	done := make(chan struct{})
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error {
			// Before the Temporal worker polls (its hook comes after this
			// one): an activity that starts at once is listed.
			if err := h.Register(ctx); err != nil {
				return fmt.Errorf("worker lease: %w", err)
			}
			var run context.Context
			run, cancel = context.WithCancel(context.Background())
			go func() { defer close(done); h.Run(run) }()
			return nil
		},
		OnStop: func(context.Context) error {
			cancel()
			<-done
			return nil
		},
	})
	return reg, h, nil
}
