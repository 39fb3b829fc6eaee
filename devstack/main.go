// Command devstack runs handoff's whole dev stack with one command, from the
// repository root: a throwaway Postgres, the Temporal dev server, an
// in-process Kafka (kfake), the worker, the Iceberg REST catalog, the example
// supervisor and an event generator. Ctrl-C stops everything in reverse order.
//
// kfake keeps Kafka in memory, so every start wipes the state that would
// point into the old topic (Postgres, Temporal's db, segments, staging).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "devstack:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := &stack{cfg: cfg, out: stdout, errw: stderr, stopSignals: stop}
	if err := s.run(ctx); err != nil {
		fmt.Fprintln(stderr, "devstack:", err)
		return 1
	}
	return 0
}
