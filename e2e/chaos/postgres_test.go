package chaos

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/pgcluster"
	"handoff/internal/protocol"
	"handoff/internal/testenv"
)

// pgServer is a Postgres cluster of the scenario's own, on a fixed port, that
// it can stop and start again on the same data directory.
type pgServer struct {
	t       *testing.T
	dir     string
	port    int
	cluster *pgcluster.Cluster
}

func newPGServer(t *testing.T) *pgServer {
	t.Helper()
	if os.Getenv(testenv.PostgresURLEnv) != "" {
		t.Skipf("restarts a Postgres cluster of its own; %s points at a shared server", testenv.PostgresURLEnv)
	}
	// Not t.TempDir: its parent is 0700, out of reach of the postgres user.
	dir, err := os.MkdirTemp("", "handoff-chaos-pg-")
	require.NoError(t, err)
	s := &pgServer{t: t, dir: dir, port: freePort(t)}
	s.start()
	t.Cleanup(func() {
		if s.cluster != nil {
			_ = s.cluster.Stop()
		}
		os.RemoveAll(dir)
	})
	return s
}

func (s *pgServer) start() {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := pgcluster.Start(ctx, pgcluster.Options{Dir: s.dir, Port: s.port})
	require.NoError(s.t, err, "start postgres on port %d", s.port)
	s.cluster = c
}

func (s *pgServer) stop() {
	s.t.Helper()
	require.NoError(s.t, s.cluster.Stop(), "stop postgres")
	s.cluster = nil
}

func (s *pgServer) database(name string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	u, err := s.cluster.CreateDatabase(ctx, name)
	require.NoError(s.t, err)
	return u
}

// TestPostgresRestartedDuringPublishes stops Postgres (fast shutdown: open
// transactions roll back, connections drop) while a publish runs, and
// starts it again on the same data directory a moment later; several
// times in the long form.
func TestPostgresRestartedDuringPublishes(t *testing.T) {
	t.Parallel()
	pg := newPGServer(t)
	e := newEnv(t, envOptions{partitions: 4, dbURL: pg.database("chaos")})
	spec := e.spec(2)
	p := e.producer(103)
	restarts := pick(1, 4)

	w := e.startWorker("a", true)
	require.NoError(t, p.produce(2000, 0))
	run := e.startSupervisor(spec)
	producing := p.background(int64(restarts)*4000, 400)
	e.waitPublished(spec, 0, time.Minute)
	for range restarts {
		e.waitActivity(spec, w, protocol.ActivityPublish, 20*time.Second)
		on := startedOn(e.startedActivities(spec), w.identityPrefix())
		pg.stop()
		t.Logf("stopped postgres while the worker ran %v", on)
		e.report.fault("postgres-restart")
		time.Sleep(time.Second)
		pg.start()
		before := e.publishedSequences(spec)
		e.waitPublished(spec, before, 2*time.Minute) // publishing again
	}
	require.NoError(t, <-producing)
	e.waitCaughtUp(spec, 3*time.Minute)
	e.stopAndWait(spec, run, 3*time.Minute)
	e.verify(spec, p.gen.RunID, p.produced())
}

// TestPostgresUnreachable cuts the workers off Postgres (connections
// closed, new ones refused) for 30s (short form: 7s) while they publish.
func TestPostgresUnreachable(t *testing.T) {
	t.Parallel()
	outage := pick(7*time.Second, 30*time.Second)
	dbURL := testenv.Postgres(t)
	target := hostOf(t, dbURL)
	px := newProxy(t, target)
	e := newEnv(t, envOptions{partitions: 4, dbURL: dbURL, workerDB: strings.Replace(dbURL, target, px.addr(), 1)})
	spec := e.spec(2)
	p := e.producer(104)

	w := e.startWorker("a", true)
	require.NoError(t, p.produce(2000, 0))
	run := e.startSupervisor(spec)
	producing := p.background(int64(outage/time.Second)*400+4000, 400)
	e.waitPublished(spec, 0, time.Minute)
	e.waitActivity(spec, w, protocol.ActivityPublish, 20*time.Second)
	on := startedOn(e.startedActivities(spec), w.identityPrefix())
	px.Cut()
	t.Logf("cut postgres off for %v while the worker ran %v", outage, on)
	e.report.fault(fmt.Sprintf("postgres-unreachable-%ds", int(outage/time.Second)))
	// A commit whose bytes reached Postgres before the cut still lands:
	// count from a second after it.
	time.Sleep(time.Second)
	before := e.publishedSequences(spec)
	time.Sleep(outage - time.Second)
	require.Equal(t, before, e.publishedSequences(spec), "nothing can commit while Postgres is unreachable")
	px.Restore()
	e.waitPublished(spec, before, 3*time.Minute)

	require.NoError(t, <-producing)
	e.waitCaughtUp(spec, 3*time.Minute)
	e.stopAndWait(spec, run, 3*time.Minute)
	e.verify(spec, p.gen.RunID, p.produced())
}

// hostOf returns the host:port of a postgres:// URL.
func hostOf(t *testing.T, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	require.NotEmpty(t, u.Host, "no host in the database URL")
	return u.Host
}
