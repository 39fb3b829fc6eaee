package restcatalog_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"handoff/internal/lake"
	"handoff/internal/lake/laketest"
	"handoff/internal/pgstore"
	"handoff/internal/restcatalog"
	"handoff/internal/storage"
	"handoff/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The tokens every test server accepts.
const (
	goodToken    = "good-token-0123456789abcdef"
	expiredToken = "expired-token-0123456789abcdef"
)

// env is a metadata database, local deep storage, the tables over them
// and a catalog server on a real HTTP listener.
type env struct {
	t     *testing.T
	pool  *pgxpool.Pool
	store *pgstore.Store
	deep  storage.Store
	lake  *lake.Lake
	srv   *httptest.Server
	log   *syncBuffer
}

// newEnv starts a server; tune, when given, changes its configuration.
func newEnv(t *testing.T, tune ...func(*restcatalog.Config)) *env {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, testenv.Postgres(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	store := pgstore.New(pool)
	require.NoError(t, store.Migrate(ctx))
	deep, err := storage.NewLocal(t.TempDir())
	require.NoError(t, err)
	e := &env{t: t, pool: pool, store: store, deep: deep, lake: lake.New(pool, deep, lake.Config{}), log: &syncBuffer{}}
	cfg := restcatalog.Config{
		Tokens: []restcatalog.Token{
			{Name: "reader", Secret: goodToken},
			{Name: "old", Secret: expiredToken, Expires: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)},
		},
		Log: slog.New(slog.NewTextHandler(e.log, nil)),
	}
	for _, f := range tune {
		f(&cfg)
	}
	s, err := restcatalog.New(lake.NewCatalogRows(pool, lake.DefaultCatalog), deep, cfg)
	require.NoError(t, err)
	e.srv = httptest.NewServer(s)
	t.Cleanup(e.srv.Close)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", e.log.String())
		}
	})
	return e
}

// publisher commits publications to ds through the real publish path.
func (e *env) publisher(ds string) *laketest.Publisher {
	return &laketest.Publisher{Store: e.store, Lake: e.lake, Deep: e.deep, DataSource: ds, Scratch: e.t.TempDir()}
}

// publish commits n publications of rows rows to ds and returns the ids.
func (e *env) publish(p *laketest.Publisher, n, rows int) []string {
	e.t.Helper()
	var ids []string
	for range n {
		got, err := p.Publish(context.Background(), rows)
		require.NoError(e.t, err)
		ids = append(ids, got...)
	}
	return ids
}

// pointer is the table's committed metadata location, read as the JDBC
// catalog reads it.
func (e *env) pointer(ds string) string {
	e.t.Helper()
	loc, err := lake.NewCatalogRows(e.pool, lake.DefaultCatalog).MetadataLocation(context.Background(), lake.DefaultNamespace, ds)
	require.NoError(e.t, err)
	return loc
}

// do sends a request with token (none when "") and returns the status,
// the headers and the body.
func (e *env) do(method, path, token string, body io.Reader, headers ...string) (int, http.Header, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, body)
	require.NoError(e.t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.srv.Client().Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	return resp.StatusCode, resp.Header, string(b)
}

// syncBuffer is a log sink tests read while the server writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) contains(sub string) bool { return strings.Contains(s.String(), sub) }

// file reads the file at a deep storage URI.
func (e *env) file(uri string) string {
	e.t.Helper()
	key, err := storage.KeyOf(e.deep, uri)
	require.NoError(e.t, err)
	rc, err := e.deep.Open(context.Background(), key)
	require.NoError(e.t, err)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	require.NoError(e.t, err)
	return string(b)
}
