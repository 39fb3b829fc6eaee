package chaos

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"handoff/internal/searchattr"
	"handoff/internal/testenv"
)

// temporalServer is a Temporal dev server of the scenario's own, on fixed
// ports and a persistent SQLite database, so that it can be killed and
// started again where it left off.
type temporalServer struct {
	t        *testing.T
	bin      string
	args     []string
	logDir   string
	hostPort string
	p        *proc
	starts   int
}

func newTemporalServer(t *testing.T) *temporalServer {
	t.Helper()
	bin, err := testenv.TemporalBinary()
	require.NoError(t, err)
	dir := t.TempDir()
	port := freePort(t)
	s := &temporalServer{t: t, bin: bin, logDir: dir, hostPort: "127.0.0.1:" + strconv.Itoa(port)}
	s.args = append([]string{"server", "start-dev",
		"--db-filename", filepath.Join(dir, "temporal.db"),
		"--ip", "127.0.0.1", "--port", strconv.Itoa(port),
		"--http-port", strconv.Itoa(freePort(t)), "--metrics-port", strconv.Itoa(freePort(t)),
		"--headless", "--log-level", "warn",
	}, searchattr.DevServerArgs()...)
	s.start()
	return s
}

// start runs the server and waits until its frontend answers.
func (s *temporalServer) start() {
	s.t.Helper()
	s.starts++
	s.p = startProc(s.t, s.logDir, "temporal-"+strconv.Itoa(s.starts), s.bin, s.args, nil)
	started := time.Now()
	err := retry(time.Minute, func() error {
		if s.p.exited() {
			return retryStop{errExited}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, err := client.DialContext(ctx, client.Options{HostPort: s.hostPort, Logger: quietLog})
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
		return err
	})
	require.NoError(s.t, err, "temporal dev server on %s not ready:\n%s", s.hostPort, s.p.logTail(8192))
	s.t.Logf("temporal dev server (pid %d) ready on %s after %v", s.p.pid(), s.hostPort, time.Since(started).Round(time.Millisecond))
}

// kill SIGKILLs the server.
func (s *temporalServer) kill() {
	s.t.Helper()
	s.p.kill()
	require.True(s.t, s.p.exited(), "temporal dev server survived SIGKILL")
}

type exitedError struct{}

func (exitedError) Error() string { return "the server process exited" }

var errExited = exitedError{}
