package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"handoff/internal/domain"
)

// stack starts the services in order and stops them in reverse.
type stack struct {
	cfg         config
	out, errw   io.Writer // the banner; progress and errors
	stopSignals func()    // after the first Ctrl-C, a second one kills devstack
	l           layout
	spec        domain.Spec
	dbURL       string
	kafkaAddrs  []string

	closers     []closer
	temporal    *proc
	worker      *proc
	catalog     *proc
	gen         *generator
	interrupted bool // shutdown began with a signal, not a failure
}

type closer struct {
	name string
	fn   func() error
}

// onStop registers what undoes a step that succeeded.
func (s *stack) onStop(name string, fn func() error) {
	s.closers = append(s.closers, closer{name, fn})
}

func (s *stack) logf(format string, args ...any) {
	fmt.Fprintf(s.errw, "devstack: "+format+"\n", args...)
}

// run starts the stack, waits for Ctrl-C or a failure, and stops it.
func (s *stack) run(ctx context.Context) (err error) {
	defer func() { err = errors.Join(err, s.unwind()) }()
	err = s.start(ctx)
	if err == nil {
		err = s.wait(ctx)
	}
	if ctx.Err() == nil {
		return err
	}
	s.interrupted = true
	s.stopSignals() // a second Ctrl-C kills devstack; Pdeathsig takes the children
	fmt.Fprintln(s.errw, "\ndevstack: shutting down (Ctrl-C again to force)")
	if errors.Is(err, context.Canceled) {
		return nil // Ctrl-C during startup: stop what started, quietly
	}
	return err
}

func (s *stack) start(ctx context.Context) error {
	root, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	s.l = layout{root: root}
	type step struct {
		name string
		fn   func(context.Context) error
	}
	steps := []step{
		{"check the checkout", s.preflight},
		{"prepare .dev", s.prepare},
		{"start postgres", s.startPostgres},
		{"start temporal", s.startTemporal},
		{"start kafka", s.startKafka},
		{"start the worker", s.startWorker},
		{"start the Iceberg REST catalog", s.startCatalog},
		{"start the supervisor", s.startSupervisor},
	}
	if !s.cfg.noGenerator {
		steps = append(steps, step{"start the generator", s.startGenerator})
	}
	for _, st := range steps {
		s.logf("%s...", st.name)
		if err := st.fn(ctx); err != nil {
			return fmt.Errorf("%s: %w", st.name, err)
		}
	}
	s.printBanner()
	return nil
}

// wait blocks until Ctrl-C, or until a service dies on its own.
func (s *stack) wait(ctx context.Context) error {
	var genDone <-chan struct{}
	if s.gen != nil {
		genDone = s.gen.done
	}
	select {
	case <-ctx.Done():
		return nil
	case <-s.temporal.done:
		return s.temporal.exitError()
	case <-s.worker.done:
		return s.worker.exitError()
	case <-s.catalog.done:
		return s.catalog.exitError()
	case <-genDone:
		if s.gen.err == nil {
			return errors.New("generator stopped on its own")
		}
		err := s.gen.err
		s.gen.err = nil // reported here, not again when it stops
		return fmt.Errorf("generator: %w", err)
	}
}

// unwind runs the closers in reverse order and reports every failure.
func (s *stack) unwind() error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		c := s.closers[i]
		start := time.Now()
		if err := c.fn(); err != nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", c.name, err))
			s.logf("stop %s: %v", c.name, err)
			continue
		}
		s.logf("stopped %s (%v)", c.name, time.Since(start).Round(time.Millisecond))
	}
	s.closers = nil
	return errors.Join(errs...)
}
