package restcatalog_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"handoff/internal/lake"
	"handoff/internal/lake/laketest"
	"handoff/internal/restcatalog"
	"handoff/internal/storage"
)

// A load answers with an ETag; the same tag in If-None-Match gets 304
// until the table moves, then the new metadata.
func TestETagAndNotModified(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.publisher("wiki")
	e.publish(p, 1, 10)
	const path = "/v1/handoff/namespaces/handoff/tables/wiki"
	code, h, _ := e.do(http.MethodGet, path, goodToken, nil)
	require.Equal(t, http.StatusOK, code)
	tag := h.Get("ETag")
	require.NotEmpty(t, tag)
	code, _, body := e.do(http.MethodGet, path, goodToken, nil, "If-None-Match", tag)
	require.Equal(t, http.StatusNotModified, code)
	require.Empty(t, body)
	code, h2, _ := e.do(http.MethodGet, path, goodToken, nil, "X-Iceberg-Access-Delegation", "vended-credentials")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, tag, h2.Get("ETag"), "without vended credentials configured, the answer is the same")

	e.publish(p, 1, 10)
	code, h, body = e.do(http.MethodGet, path, goodToken, nil, "If-None-Match", tag)
	require.Equal(t, http.StatusOK, code, "the table moved")
	require.NotEqual(t, tag, h.Get("ETag"))
	require.Contains(t, body, e.pointer("wiki"))
}

// Tables list whole without pageToken, and in pages with it.
func TestListTablesInPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	names := []string{"a1", "b2", "c3", "d4", "e5"}
	for _, ds := range names {
		e.publish(e.publisher(ds), 1, 1)
	}
	type page struct {
		Identifiers []struct {
			Namespace []string `json:"namespace"`
			Name      string   `json:"name"`
		} `json:"identifiers"`
		Next *string `json:"next-page-token"`
	}
	get := func(query string) page {
		code, _, body := e.do(http.MethodGet, "/v1/handoff/namespaces/handoff/tables"+query, goodToken, nil)
		require.Equal(t, http.StatusOK, code, body)
		var p page
		require.NoError(t, json.Unmarshal([]byte(body), &p))
		return p
	}
	all := get("")
	require.Len(t, all.Identifiers, 5)
	require.Nil(t, all.Next)
	var got []string
	token := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 3)
		p := get("?pageSize=2&pageToken=" + token)
		for _, id := range p.Identifiers {
			require.Equal(t, []string{"handoff"}, id.Namespace)
			got = append(got, id.Name)
		}
		if p.Next == nil {
			break
		}
		token = *p.Next
	}
	require.Equal(t, names, got)

	cat, err := laketest.RESTCatalog(context.Background(), e.srv.URL, goodToken)
	require.NoError(t, err)
	defer cat.Close()
	ctx := cat.SetPageSize(context.Background(), 2)
	var viaClient []string
	for id, err := range cat.ListTables(ctx, table.Identifier{"handoff"}) {
		require.NoError(t, err)
		viaClient = append(viaClient, id[1])
	}
	require.Equal(t, names, viaClient, "iceberg-go's client pages through them")
}

// Clients get the storage settings always, and credentials only when
// configured to vend them and asked for; the credentials never reach the
// server's log.
func TestVendedCredentials(t *testing.T) {
	t.Parallel()
	const secret = "vended-secret-key-0123456789"
	e := newEnv(t, func(c *restcatalog.Config) {
		c.Storage = restcatalog.ClientStorage{
			Properties: map[string]string{"s3.endpoint": "http://localhost:9000", "s3.path-style-access": "true", "client.region": "us-east-1"},
			Vended:     map[string]string{"s3.access-key-id": "reader", "s3.secret-access-key": secret},
		}
	})
	e.publish(e.publisher("wiki"), 1, 1)
	type result struct {
		Config map[string]string `json:"config"`
		Creds  []struct {
			Prefix string            `json:"prefix"`
			Config map[string]string `json:"config"`
		} `json:"storage-credentials"`
	}
	load := func(headers ...string) result {
		code, _, body := e.do(http.MethodGet, "/v1/handoff/namespaces/handoff/tables/wiki", goodToken, nil, headers...)
		require.Equal(t, http.StatusOK, code, body)
		var r result
		require.NoError(t, json.Unmarshal([]byte(body), &r))
		return r
	}
	plain := load()
	require.Equal(t, "http://localhost:9000", plain.Config["s3.endpoint"])
	require.Equal(t, "us-east-1", plain.Config["client.region"])
	require.NotContains(t, plain.Config, "s3.secret-access-key")
	require.Empty(t, plain.Creds)

	vended := load("X-Iceberg-Access-Delegation", "remote-signing, vended-credentials")
	require.Equal(t, secret, vended.Config["s3.secret-access-key"])
	require.Len(t, vended.Creds, 1)
	require.Equal(t, strings.TrimSuffix(e.deep.URI(""), "/"), vended.Creds[0].Prefix)
	require.Equal(t, "reader", vended.Creds[0].Config["s3.access-key-id"])

	code, _, body := e.do(http.MethodGet, "/v1/handoff/namespaces/handoff/tables/wiki/credentials", goodToken, nil)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, secret)
	code, _, body = e.do(http.MethodGet, "/v1/handoff/namespaces/handoff/tables/nope/credentials", goodToken, nil)
	requireError(t, code, body, http.StatusNotFound, "NoSuchTableException")
	require.False(t, e.log.contains(secret), "a vended secret reached the log")
	require.NotContains(t, restcatalog.ClientStorage{Vended: map[string]string{"s3.secret-access-key": secret}}.String(), secret)

	_, err := restcatalog.New(nil, e.deep, restcatalog.Config{Tokens: []restcatalog.Token{{Name: "a", Secret: goodToken}},
		Storage: restcatalog.ClientStorage{Properties: map[string]string{"s3.secret-access-key": secret}}})
	require.ErrorContains(t, err, "is a credential")
}

// A burst of concurrent loads of one table is served from one read of its
// metadata file, and every load gets the whole file.
func TestConcurrentLoadsShareOneRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(e.publisher("wiki"), 3, 10)
	counting := &countingStore{Store: e.deep}
	s, err := restcatalog.New(lake.NewCatalogRows(e.pool, lake.DefaultCatalog), counting,
		restcatalog.Config{Tokens: []restcatalog.Token{{Name: "a", Secret: goodToken}}})
	require.NoError(t, err)
	srv := httptest.NewServer(s)
	defer srv.Close()
	want := e.file(e.pointer("wiki"))

	const loads = 200
	var wg sync.WaitGroup
	errs := make(chan error, loads)
	for range loads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/handoff/namespaces/handoff/tables/wiki", nil)
			req.Header.Set("Authorization", "Bearer "+goodToken)
			resp, err := srv.Client().Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			var res struct {
				Metadata json.RawMessage `json:"metadata"`
			}
			b, err := io.ReadAll(resp.Body)
			if err == nil {
				err = json.Unmarshal(b, &res)
			}
			if err == nil && (resp.StatusCode != http.StatusOK || string(res.Metadata) != want) {
				err = io.ErrUnexpectedEOF
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.EqualValues(t, 1, counting.opens.Load(), "one read of the metadata file for %d loads", loads)
}

// countingStore counts the files opened.
type countingStore struct {
	storage.Store
	opens atomic.Int64
}

func (c *countingStore) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	c.opens.Add(1)
	return c.Store.Open(ctx, key)
}

// A row that points at something that is not a metadata file of deep
// storage (another engine's, a damaged file, none) is a 500 whose message
// names no path, and the server's log says which; nothing panics.
func TestBrokenRowsAnswer500(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(e.publisher("wiki"), 1, 1)
	ctx := context.Background()
	require.NoError(t, e.deep.Put(ctx, "bad/metadata/00000-x.metadata.json", func(w io.Writer) error {
		_, err := w.Write([]byte("not json"))
		return err
	}))
	for name, loc := range map[string]*string{
		"bad":        ptr(e.deep.URI("bad/metadata/00000-x.metadata.json")),
		"gone":       ptr(e.deep.URI("gone/metadata/00000-y.metadata.json")),
		"elsewhere":  ptr("s3://another-bucket/t/metadata/00000-z.metadata.json"),
		"nolocation": nil,
	} {
		_, err := e.pool.Exec(ctx, `INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, iceberg_type)
			VALUES ('handoff', 'handoff', $1, $2, 'TABLE')`, name, loc)
		require.NoError(t, err)
		code, _, body := e.do(http.MethodGet, "/v1/handoff/namespaces/handoff/tables/"+name, goodToken, nil)
		requireError(t, code, body, http.StatusInternalServerError, "InternalServerError")
		require.NotContains(t, body, "metadata.json", name)
	}
	require.True(t, e.log.contains("not a JSON object"))
	require.True(t, e.log.contains("is not in storage"))
	code, _, body := e.do(http.MethodGet, "/v1/handoff/namespaces/handoff/tables/wiki", goodToken, nil)
	require.Equal(t, http.StatusOK, code, body)
}

func ptr(s string) *string { return &s }

// A catalog database out of reach is a 503 with Retry-After, which a
// client may retry; /readyz says so too, and /healthz does not.
func TestDatabaseOutOfReachIs503(t *testing.T) {
	t.Parallel()
	pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=1")
	require.NoError(t, err)
	defer pool.Close()
	deep, err := storage.NewLocal(t.TempDir())
	require.NoError(t, err)
	s, err := restcatalog.New(lake.NewCatalogRows(pool, lake.DefaultCatalog), deep,
		restcatalog.Config{Tokens: []restcatalog.Token{{Name: "a", Secret: goodToken}}})
	require.NoError(t, err)
	srv := httptest.NewServer(s)
	defer srv.Close()
	e := &env{t: t, srv: srv}
	code, h, body := e.do(http.MethodGet, "/v1/handoff/namespaces/handoff/tables/wiki", goodToken, nil)
	requireError(t, code, body, http.StatusServiceUnavailable, "ServiceUnavailableException")
	require.Equal(t, "1", h.Get("Retry-After"))
	require.NotContains(t, body, "127.0.0.1:1")
	code, _, _ = e.do(http.MethodGet, "/readyz", "", nil)
	require.Equal(t, http.StatusServiceUnavailable, code)
	code, _, _ = e.do(http.MethodGet, "/healthz", "", nil)
	require.Equal(t, http.StatusOK, code)
}
