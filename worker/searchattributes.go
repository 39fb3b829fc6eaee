package main

import (
	"context"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"
	"go.uber.org/fx"

	"handoff/internal/searchattr"
)

// searchAttributesTimeout bounds the registration at start: two operator
// calls, each answered at once by a healthy server.
const searchAttributesTimeout = 15 * time.Second

// ensureSearchAttributes registers the supervisors' search attributes at
// start, before the worker polls: a supervisor that sets an unregistered
// one fails its workflow tasks.
func ensureSearchAttributes(lc fx.Lifecycle, c client.Client, cfg Config, log *slog.Logger) {
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, searchAttributesTimeout)
			defer cancel()
			added, err := searchattr.Ensure(ctx, c, cfg.TemporalNamespace)
			if err != nil {
				return err
			}
			if len(added) > 0 {
				log.Info("registered search attributes", "namespace", cfg.TemporalNamespace, "added", added)
			}
			return nil
		},
	})
}
