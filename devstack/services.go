package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"handoff/internal/kafkadev"
	"handoff/internal/pgcluster"
	"handoff/internal/searchattr"
)

func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

func (s *stack) startPostgres(ctx context.Context) error {
	logPath := s.l.dev("postgres.log")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("postgres log: %w", err)
	}
	pg, err := pgcluster.Start(ctx, pgcluster.Options{Dir: s.l.dev("pg"), Port: pgPort, BinDir: s.cfg.pgBinDir, Log: log})
	if err != nil {
		log.Close()
		return err
	}
	s.onStop("postgres", func() error {
		err := pg.Stop()
		log.Close()
		if err != nil && s.interrupted {
			// A terminal's Ctrl-C reaches postgres too (it shares our
			// process group), so it may have shut down already.
			s.logf("postgres: %v (expected after a terminal Ctrl-C)", err)
			return nil
		}
		return err
	})
	s.dbURL, err = pg.CreateDatabase(ctx, databaseName)
	return err
}

func (s *stack) startTemporal(ctx context.Context) error {
	args := append([]string{
		"server", "start-dev",
		"--ip", "127.0.0.1",
		"--port", strconv.Itoa(temporalPort),
		"--ui-port", strconv.Itoa(temporalUIPort),
		"--db-filename", s.l.dev("temporal.db"),
		"--log-level", "warn",
	}, searchattr.DevServerArgs()...)
	p, err := startProc("temporal", s.l.dev("temporal.log"), nil, s.l.temporalBin(), args...)
	if err != nil {
		return err
	}
	s.temporal = p
	s.onStop("temporal", func() error { return p.stop(20 * time.Second) })
	if err := waitTCP(ctx, hostPort(temporalPort), time.Minute, p.done); err != nil {
		return fmt.Errorf("%w; last lines of %s:\n%s", err, p.logPath, tailFile(p.logPath, 20))
	}
	return nil
}

func (s *stack) startKafka(ctx context.Context) error {
	b, err := kafkadev.Start(ctx, hostPort(kafkaPort), map[string]int32{s.spec.IOConfig.Topic: int32(s.cfg.partitions)})
	if err != nil {
		return err
	}
	s.kafkaAddrs = b.Addrs()
	s.onStop("kafka", func() error { b.Close(); return nil })
	return nil
}

func (s *stack) startWorker(ctx context.Context) error {
	env := []string{
		"DATABASE_URL=" + s.dbURL,
		"TEMPORAL_ADDRESS=" + hostPort(temporalPort),
		"TEMPORAL_NAMESPACE=" + temporalNS,
		"KAFKA_BROKERS=" + strings.Join(s.kafkaAddrs, ","),
		"HANDOFF_DEEP_STORAGE=" + s.l.dev("deep"),
		"HANDOFF_STAGING_DIR=" + s.l.dev("staging"),
		"HANDOFF_HTTP_ADDR=:" + strconv.Itoa(workerHTTPPort),
	}
	p, err := startProc("worker", s.l.dev("worker.log"), env, s.l.dev("bin", "worker"))
	if err != nil {
		return err
	}
	s.worker = p
	// The worker may be finishing an activity; Kafka and Temporal stay up
	// until it is done.
	s.onStop("worker", func() error { return p.stop(30 * time.Second) })
	err = waitTCP(ctx, hostPort(workerHTTPPort), time.Minute, p.done)
	select {
	case <-p.done:
		return p.exitError()
	default:
	}
	if err != nil && ctx.Err() == nil {
		// Not fatal: the supervisor can start without it; say so and go on.
		s.logf("worker: %v; continuing, see %s", err, p.logPath)
		return nil
	}
	return err
}
