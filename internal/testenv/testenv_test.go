package testenv_test

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/client"

	"handoff/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestPostgres(t *testing.T) {
	t.Parallel()
	a, b := testenv.Postgres(t), testenv.Postgres(t)
	t.Log("databases:", a, b)
	if dbOf(t, a) == dbOf(t, b) {
		t.Fatalf("two calls returned the same database %s", a)
	}
	ctx := context.Background()
	for _, u := range []string{a, b} {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		err = conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&n)
		conn.Close(ctx)
		if err != nil || n != 0 {
			t.Fatalf("%s: %d public tables, %v; want an empty database", u, n, err)
		}
	}
}

// TestPostgresFromEnv reruns TestPostgres in a child process pointed at this
// process's server through HANDOFF_TEST_PG_URL.
func TestPostgresFromEnv(t *testing.T) {
	t.Parallel()
	server := testenv.Postgres(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestPostgres$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), testenv.PostgresURLEnv+"="+server)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	host, _ := url.Parse(server)
	if !strings.Contains(string(out), "@"+host.Host+"/") {
		t.Fatalf("child did not use %s:\n%s", host.Host, out)
	}
}

func TestTemporal(t *testing.T) {
	t.Parallel()
	start := time.Now()
	hostPort := testenv.Temporal(t)
	t.Logf("temporal at %s after %v", hostPort, time.Since(start))

	ns, err := client.NewNamespaceClient(client.Options{HostPort: hostPort})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := ns.Describe(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetNamespaceInfo().GetName(); got != "default" {
		t.Fatalf("namespace %q", got)
	}
}

func TestTemporalBinaryMissing(t *testing.T) {
	t.Setenv(testenv.TemporalBinEnv, "/nonexistent/temporal")
	_, err := testenv.TemporalBinary()
	if err == nil || !strings.Contains(err.Error(), "make tools") {
		t.Fatalf("err = %v, want advice to run make tools", err)
	}
}

func dbOf(t *testing.T, s string) string {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path
}
