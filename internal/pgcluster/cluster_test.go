package pgcluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// tempDir is a directory the postgres OS user can reach; t.TempDir's parent
// is 0700 and owned by the test's user.
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pgcluster-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func start(t *testing.T, o Options) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	return c
}

func selectOne(t *testing.T, url string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "select 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("select 1 = %d, %v", n, err)
	}
}

func TestStartCreateStop(t *testing.T) {
	dir := tempDir(t)
	c := start(t, Options{Dir: dir})
	selectOne(t, c.URL("postgres"))
	pid := postmasterPID(t, dir)
	if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid {
		t.Errorf("postmaster %d in process group %d (%v), want its own", pid, pgid, err)
	}

	ctx := context.Background()
	url, err := c.CreateDatabase(ctx, "Mixed-Case db")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := c.CreateDatabase(ctx, "Mixed-Case db"); err != nil || again != url {
		t.Fatalf("second CreateDatabase = %q, %v; want %q", again, err, url)
	}
	selectOne(t, url)

	if err := c.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := pgx.Connect(ctx, c.URL("postgres")); err == nil {
		t.Fatal("connected after Stop")
	}
}

func TestFixedPortAndLog(t *testing.T) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	c := start(t, Options{Dir: tempDir(t), Port: port, Log: &syncWriter{b: &log}})
	if c.Port() != port || !strings.Contains(c.URL("x"), ":"+itoa(port)+"/x?") {
		t.Fatalf("port %d, URL %s; want port %d", c.Port(), c.URL("x"), port)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "ready to accept connections") {
		t.Fatalf("log lacks startup line:\n%s", log.String())
	}
}

// TestStalePIDFile starts a cluster whose postmaster.pid names a live
// process of the postgres user, as after a crash and PID reuse.
func TestStalePIDFile(t *testing.T) {
	dir := tempDir(t)
	c := start(t, Options{Dir: dir})
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	impostor := sleeper(t)
	pidFile := filepath.Join(dataDir(dir), "postmaster.pid")
	stale := itoa(impostor) + "\n" + dataDir(dir) + "\n"
	if err := os.WriteFile(pidFile, []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	c = start(t, Options{Dir: dir})
	selectOne(t, c.URL("postgres"))
}

func TestUnreachableDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root hands the directory to another user")
	}
	_, err := Start(context.Background(), Options{Dir: filepath.Join(t.TempDir(), "pg")})
	if err == nil || !strings.Contains(err.Error(), "cannot reach") {
		t.Fatalf("err = %v, want a 'cannot reach' error", err)
	}
}

func TestMissingBinaries(t *testing.T) {
	_, err := Start(context.Background(), Options{Dir: tempDir(t), BinDir: "/nonexistent"})
	if err == nil || !strings.Contains(err.Error(), "initdb") {
		t.Fatalf("err = %v, want an initdb error", err)
	}
}
