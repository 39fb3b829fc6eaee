// Command worker is handoff's Temporal worker: it runs the supervisor and
// task-group workflows and their activities, and serves health and metrics.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"go.uber.org/fx"

	"handoff/internal/redact"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run starts the app, waits for SIGINT/SIGTERM, and stops it: the Temporal
// worker stops taking tasks and lets running activities finish first.
func run(args []string) int {
	cfg, err := ParseConfig(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", redact.Error(err))
		return 2
	}
	stopProfile, err := startCPUProfile(os.Getenv(CPUProfileEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	defer func() {
		if err := stopProfile(); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
		}
	}()
	app := fx.New(Modules(cfg), fx.NopLogger, fx.StartTimeout(time.Minute), fx.StopTimeout(cfg.ShutdownGrace+time.Minute))
	startCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := app.Start(startCtx); err != nil {
		fmt.Fprintln(os.Stderr, "worker: start:", redact.Error(err))
		return 1
	}
	<-app.Done()
	// Stopping waits up to the shutdown grace for running activities.
	stopCtx, cancelStop := context.WithTimeout(context.Background(), cfg.ShutdownGrace+time.Minute)
	defer cancelStop()
	if err := app.Stop(stopCtx); err != nil {
		fmt.Fprintln(os.Stderr, "worker: stop:", redact.Error(err))
		return 1
	}
	return 0
}
