package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"handoff/internal/domain"
)

// preflight checks that devstack runs from the repository root with the
// binaries built, and reads the spec.
func (s *stack) preflight(context.Context) error {
	if _, err := os.Stat(s.l.path("go.mod")); err != nil {
		return fmt.Errorf("no go.mod in %s: run devstack from the repository root (`make dev`)", s.l.root)
	}
	for _, b := range []struct{ path, hint string }{
		{s.l.dev("bin", "worker"), "make build"},
		{s.l.dev("bin", "starter"), "make build"},
		{s.l.temporalBin(), "make tools"},
	} {
		if _, err := os.Stat(b.path); err != nil {
			return fmt.Errorf("%s is missing: run `%s` (or `make dev`, which does both)", b.path, b.hint)
		}
	}
	data, err := os.ReadFile(s.cfg.spec)
	if err != nil {
		return fmt.Errorf("read spec: %w", err)
	}
	if s.spec, err = domain.ParseSpec(data); err != nil {
		return fmt.Errorf("spec %s: %w", s.cfg.spec, err)
	}
	return nil
}

// prepare locks .dev against a second devstack, checks the ports, and wipes
// the state that refers to the previous run's Kafka data: kfake's topics die
// with the process, so offsets in Postgres and sequences in Temporal would
// point past the end of the new, empty topic.
func (s *stack) prepare(context.Context) error {
	if err := os.MkdirAll(s.l.dev(), 0o755); err != nil {
		return fmt.Errorf("create .dev: %w", err)
	}
	if err := s.lock(); err != nil {
		return err
	}
	err := checkPortsFree(map[string]int{
		"postgres": pgPort, "temporal": temporalPort, "temporal ui": temporalUIPort,
		"kafka": kafkaPort, "worker http": workerHTTPPort, "iceberg catalog": catalogPort,
	})
	if err != nil {
		return err
	}
	for _, p := range s.l.wiped() {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("wipe the previous run: %w", err)
		}
	}
	for _, d := range []string{s.l.dev("deep"), s.l.dev("staging")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", d, err)
		}
	}
	return nil
}

// lock takes .dev/devstack.lock for the life of the process; the kernel
// drops it if we die.
func (s *stack) lock() error {
	path := s.l.dev("devstack.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return errors.New("another devstack is running from this checkout (it holds .dev/devstack.lock)")
		}
		return fmt.Errorf("lock %s: %w", path, err)
	}
	s.onStop("the .dev lock", f.Close)
	return nil
}
