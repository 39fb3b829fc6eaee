// Package pgcluster launches a throwaway PostgreSQL cluster from the server
// binaries installed on the machine, for tests and the dev stack. It needs no
// Docker and no system service: initdb and postgres run as child processes,
// as the "postgres" OS user when the caller is root.
package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"handoff/internal/logtail"
)

// Options configures Start.
type Options struct {
	// Dir holds the data directory (Dir/data), the unix socket and the
	// default log file. It is created if missing, and a cluster already
	// initialized there is reused. Required.
	Dir string
	// Port is the TCP port on 127.0.0.1. Default: 0, a free port.
	Port int
	// BinDir holds initdb and postgres. Default: the newest
	// /usr/lib/postgresql/*/bin.
	BinDir string
	// Log receives the server log. Default: nil, Dir/postgres.log.
	Log io.Writer
}

// Cluster is a running postgres server started by Start.
type Cluster struct {
	dir    string
	port   int
	cmd    *exec.Cmd
	logf   *os.File // the default log file, closed by Stop
	tail   *logtail.Buffer
	exited chan struct{} // closed when cmd.Wait returns
	err    error         // cmd.Wait's result, set before exited closes

	stopOnce sync.Once
	stopErr  error
}

// Start initializes the cluster in o.Dir if needed, starts postgres and
// waits until it accepts connections.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	if o.Dir == "" {
		return nil, errors.New("pgcluster: Options.Dir is required")
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("pgcluster dir: %w", err)
	}
	bin := o.BinDir
	if bin == "" {
		if bin, err = findBinDir(); err != nil {
			return nil, err
		}
	}
	port := o.Port
	if port == 0 {
		if port, err = freePort(); err != nil {
			return nil, err
		}
	}
	if err := checkSocketPath(dir, port); err != nil {
		return nil, err
	}
	run, err := currentRunAs()
	if err != nil {
		return nil, err
	}
	if err := prepareDir(dir, run); err != nil {
		return nil, err
	}
	if err := initdb(ctx, bin, dir, run); err != nil {
		return nil, err
	}
	if err := clearStale(dir); err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, port: port, tail: &logtail.Buffer{}, exited: make(chan struct{})}
	if err := c.launch(bin, run, o.Log); err != nil {
		return nil, err
	}
	if err := c.waitReady(ctx); err != nil {
		_ = c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) launch(bin string, run runAs, log io.Writer) error {
	if log == nil {
		f, err := os.OpenFile(filepath.Join(c.dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("open postgres log: %w", err)
		}
		c.logf, log = f, f
	}
	c.cmd = exec.Command(filepath.Join(bin, "postgres"),
		"-D", dataDir(c.dir),
		"-p", strconv.Itoa(c.port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories="+c.dir,
		// Throwaway cluster: durability against OS crashes buys nothing.
		"-c", "fsync=off",
		"-c", "synchronous_commit=off",
		"-c", "full_page_writes=off",
		"-c", "max_connections=200",
	)
	c.cmd.Dir = c.dir
	c.cmd.Stdout = io.MultiWriter(log, c.tail)
	c.cmd.Stderr = c.cmd.Stdout
	c.cmd.SysProcAttr = run.sysProcAttr()
	// SIGQUIT is postgres's immediate shutdown: if our process dies, nothing
	// will connect again, so there is nothing to wait for. Pdeathsig follows
	// the OS thread that forked, which Go keeps alive unless a goroutine
	// exits while locked to it.
	c.cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
	// Its own process group keeps a terminal's Ctrl-C away from postgres,
	// so the owner decides when it stops (after its clients, via Stop).
	c.cmd.SysProcAttr.Setpgid = true
	if err := c.cmd.Start(); err != nil {
		c.closeLog()
		return fmt.Errorf("start postgres: %w", err)
	}
	go func() {
		c.err = c.cmd.Wait()
		close(c.exited)
	}()
	return nil
}

// waitReady polls until the server accepts a connection, it exits, or ctx
// (capped at one minute) ends.
func (c *Cluster) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-c.exited:
			return fmt.Errorf("postgres exited during startup (%v); log:\n%s", c.err, c.tail)
		case <-ctx.Done():
			return fmt.Errorf("postgres on port %d not ready: %w; last error: %v; log:\n%s", c.port, ctx.Err(), err, c.tail)
		case <-tick.C:
		}
	}
}

// URL returns the connection URL of database db over TCP.
func (c *Cluster) URL(db string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User("postgres"),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)),
		Path:     "/" + db,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Port returns the TCP port the server listens on.
func (c *Cluster) Port() int { return c.port }

// CreateDatabase creates database name unless it exists and returns its URL.
func (c *Cluster) CreateDatabase(ctx context.Context, name string) (string, error) {
	if err := CreateDatabase(ctx, c.URL("postgres"), name); err != nil {
		return "", err
	}
	return c.URL(name), nil
}

// CreateDatabase creates database name on the server that serverURL points
// at, unless it exists. It works on any server, not only a Cluster's.
func CreateDatabase(ctx context.Context, serverURL, name string) error {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return fmt.Errorf("create database %s: connect: %w", name, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var exists bool
	err = conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists)
	if err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // duplicate_database: lost a race
		return nil
	}
	if err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// Stop shuts the server down fast (rolling back open transactions) and
// waits for it to exit. It is safe to call more than once.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() { c.stopErr = c.stop() })
	return c.stopErr
}

func (c *Cluster) stop() error {
	defer c.closeLog()
	select {
	case <-c.exited:
		return fmt.Errorf("postgres had already exited: %v", c.err)
	default:
	}
	// SIGINT is fast shutdown; escalate to immediate, then kill.
	for _, step := range []struct {
		sig  os.Signal
		wait time.Duration
	}{{syscall.SIGINT, 30 * time.Second}, {syscall.SIGQUIT, 10 * time.Second}, {os.Kill, 10 * time.Second}} {
		if err := c.cmd.Process.Signal(step.sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("signal postgres: %w", err)
		}
		select {
		case <-c.exited:
			if c.err != nil {
				return fmt.Errorf("postgres shutdown: %w", c.err)
			}
			return nil
		case <-time.After(step.wait):
		}
	}
	return errors.New("postgres did not exit after SIGKILL")
}

func (c *Cluster) closeLog() {
	if c.logf != nil {
		_ = c.logf.Close()
	}
}
