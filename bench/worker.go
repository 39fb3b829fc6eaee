package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// workerProc is a worker process started for one phase, so its memory and
// CPU are its own.
type workerProc struct {
	cmd        *exec.Cmd
	logPath    string
	metricsURL string // its Prometheus endpoint
	done       chan struct{}
	err        error
}

// startPhase gives one phase its own database (bench_<name>), a pool on
// it and a worker with its own directories; done stops both.
func startPhase(ctx context.Context, s *stack, o options, name, cpuProfile string) (pool *pgxpool.Pool, w *workerProc, done func(), err error) {
	dbURL, err := s.database(ctx, "bench_"+name)
	if err != nil {
		return nil, nil, nil, err
	}
	if pool, err = pgxpool.New(ctx, dbURL); err != nil {
		return nil, nil, nil, err
	}
	if w, err = startWorker(ctx, s, o, dbURL, filepath.Join(s.dir, name), cpuProfile); err != nil {
		pool.Close()
		return nil, nil, nil, err
	}
	return pool, w, func() { _ = w.stop(); pool.Close() }, nil
}

// startWorker runs bin against the stack with its own database, deep
// storage and staging directory under dir, and waits until it is ready;
// extraEnv (NAME=value) comes last and so wins.
func startWorker(ctx context.Context, s *stack, o options, dbURL, dir, cpuProfile string, extraEnv ...string) (*workerProc, error) {
	for _, d := range []string{"deep", "staging"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "worker.log")
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(o.workerBin)
	cmd.Env = append(os.Environ(),
		"DATABASE_URL="+dbURL,
		"TEMPORAL_ADDRESS="+s.temporal,
		"TEMPORAL_NAMESPACE="+s.namespace,
		"KAFKA_BROKERS="+strings.Join(s.brokers, ","),
		"HANDOFF_DEEP_STORAGE="+filepath.Join(dir, "deep"),
		"HANDOFF_STAGING_DIR="+filepath.Join(dir, "staging"),
		"HANDOFF_HTTP_ADDR="+addr,
		"HANDOFF_LOG_LEVEL=warn",
		"HANDOFF_CPU_PROFILE="+cpuProfile,
	)
	if o.memLimit != "" {
		cmd.Env = append(cmd.Env, "GOMEMLIMIT="+o.memLimit)
	}
	cmd.Env = append(cmd.Env, extraEnv...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start worker %s: %w (run `make build`)", o.workerBin, err)
	}
	w := &workerProc{cmd: cmd, logPath: logPath, metricsURL: "http://" + addr + "/metrics", done: make(chan struct{})}
	go func() { w.err = cmd.Wait(); log.Close(); close(w.done) }()
	if err := w.waitReady(ctx, "http://"+addr+"/readyz"); err != nil {
		_ = w.stop()
		return nil, err
	}
	return w, nil
}

func (w *workerProc) waitReady(ctx context.Context, u string) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-w.done:
			return fmt.Errorf("worker exited (%v); see %s", w.err, w.logPath)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		res, err := http.Get(u)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("worker not ready within a minute; see %s", w.logPath)
}

// stop sends SIGTERM and waits for the exit, which also flushes a CPU
// profile.
func (w *workerProc) stop() error {
	select {
	case <-w.done:
		return w.exitErr()
	default:
	}
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-w.done:
		return w.exitErr()
	case <-time.After(2 * time.Minute):
		_ = w.cmd.Process.Kill()
		<-w.done
		return fmt.Errorf("worker did not stop within 2 minutes of SIGTERM; see %s", w.logPath)
	}
}

func (w *workerProc) exitErr() error {
	if w.err != nil {
		return fmt.Errorf("worker: %w; see %s", w.err, w.logPath)
	}
	return nil
}

func (w *workerProc) pid() int { return w.cmd.Process.Pid }

// alive is nil while the worker runs, else why it exited.
func (w *workerProc) alive() error {
	select {
	case <-w.done:
		return fmt.Errorf("worker exited (%v); see %s", w.err, w.logPath)
	default:
		return nil
	}
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func withDatabase(server, db string) (string, error) {
	u, err := url.Parse(server)
	if err != nil {
		return "", fmt.Errorf("postgres URL: %w", err)
	}
	u.Path, u.RawPath = "/"+db, ""
	return u.String(), nil
}
