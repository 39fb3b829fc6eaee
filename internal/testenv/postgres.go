package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"handoff/internal/pgcluster"
)

// PostgresURLEnv names a server URL (any database on it) under which
// Postgres creates its databases instead of starting a cluster.
const PostgresURLEnv = "HANDOFF_TEST_PG_URL"

var pg struct {
	once    sync.Once
	server  string // URL of the maintenance database
	cluster *pgcluster.Cluster
	dir     string
	err     error
}

// Postgres returns the URL of a new, empty database, unique to this call.
// The database is dropped when the test ends, unless it failed and lives on
// the server of HANDOFF_TEST_PG_URL.
func Postgres(t testing.TB) string {
	t.Helper()
	pg.once.Do(startPostgres)
	if pg.err != nil {
		t.Fatalf("testenv: postgres: %v", pg.err)
	}
	name := dbName(t.Name())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := pgcluster.CreateDatabase(ctx, pg.server, name); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	u := withDatabase(pg.server, name)
	t.Cleanup(func() {
		if t.Failed() {
			if pg.cluster == nil { // our own cluster goes away at exit anyway
				t.Logf("testenv: kept database %s", u)
			}
			return
		}
		if err := dropDatabase(pg.server, name); err != nil {
			t.Logf("testenv: %v", err)
		}
	})
	return u
}

func startPostgres() {
	if s := os.Getenv(PostgresURLEnv); s != "" {
		if u, err := url.Parse(s); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			pg.err = fmt.Errorf("%s must be a postgres:// URL, got %q", PostgresURLEnv, s)
			return
		}
		pg.server = s
		return
	}
	// Not t.TempDir: its parent is 0700, out of reach of the postgres user.
	dir, err := os.MkdirTemp("", "handoff-pg-")
	if err != nil {
		pg.err = fmt.Errorf("temp dir: %w", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := pgcluster.Start(ctx, pgcluster.Options{Dir: dir})
	if err != nil {
		os.RemoveAll(dir)
		pg.err = err
		return
	}
	pg.cluster, pg.dir, pg.server = c, dir, c.URL("postgres")
}

func stopPostgres() error {
	if pg.cluster == nil {
		return nil
	}
	err := pg.cluster.Stop()
	if rmErr := os.RemoveAll(pg.dir); err == nil {
		err = rmErr
	}
	return err
}

// dbName is a valid, unique identifier that still says which test made it.
func dbName(test string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(test) {
		if b.Len() >= 40 {
			break
		}
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	var suffix [4]byte
	rand.Read(suffix[:])
	return "t_" + b.String() + "_" + hex.EncodeToString(suffix[:])
}

func withDatabase(server, db string) string {
	u, _ := url.Parse(server) // validated in startPostgres or built by pgcluster
	u.Path = "/" + db
	u.RawPath = ""
	return u.String()
}

func dropDatabase(server, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	defer conn.Close(ctx)
	// FORCE: a test that leaked a pool must not leave the database behind.
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}
