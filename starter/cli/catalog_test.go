package cli

import (
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"handoff/internal/lake"
	"handoff/internal/lake/laketest"
	"handoff/internal/pgstore"
	"handoff/internal/storage"
	"handoff/internal/testenv"
)

const (
	fileToken = "file-token-0123456789abcdef"
	envToken  = "env-token-0123456789abcdef"
)

// catalogDB is a metadata database and local deep storage holding the
// table of datasource wiki, 2 publications of 10 rows.
func catalogDB(t *testing.T) (url, deep, pointer string) {
	t.Helper()
	ctx := context.Background()
	url, deep = testenv.Postgres(t), t.TempDir()
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	store := pgstore.New(pool)
	require.NoError(t, store.Migrate(ctx))
	st, err := storage.NewLocal(deep)
	require.NoError(t, err)
	p := &laketest.Publisher{Store: store, Lake: lake.New(pool, st, lake.Config{}), Deep: st, DataSource: "wiki", Scratch: t.TempDir()}
	for range 2 {
		_, err := p.Publish(ctx, 10)
		require.NoError(t, err)
	}
	pointer, err = lake.NewCatalogRows(pool, lake.DefaultCatalog).MetadataLocation(ctx, lake.DefaultNamespace, "wiki")
	require.NoError(t, err)
	return url, deep, pointer
}

// serving runs starter catalog serve with args until the test ends, and
// returns its address and what the run printed, once it is over.
func serving(t *testing.T, env map[string]string, args ...string) (addr string, stop func() result) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr = ln.Addr().String()
	require.NoError(t, ln.Close())
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan result, 1)
	go func() {
		done <- runCLI(t, runOpts{ctx: ctx, env: env}, append([]string{"catalog", "serve", "--listen", addr}, args...)...)
	}()
	stopped := false
	var r result
	stop = func() result {
		if !stopped {
			cancel()
			select {
			case r = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("catalog serve did not stop within 20s of its context ending")
			}
			stopped = true
		}
		return r
	}
	t.Cleanup(func() { stop() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case r = <-done:
			stopped = true
			t.Fatalf("catalog serve exited %d before serving:\n%s", r.code, r.stderr)
		default:
		}
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr, stop
		}
		require.True(t, time.Now().Before(deadline), "catalog serve did not listen within 30s")
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCatalogServe: the command serves the table to iceberg-go's REST
// client with the tokens of its file and its environment, logs where it
// is and each request without a token, and stops cleanly.
func TestCatalogServe(t *testing.T) {
	t.Parallel()
	url, deep, pointer := catalogDB(t)
	tokens := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(tokens, []byte("# readers\ncli "+fileToken+"\n"), 0o600))
	env := map[string]string{"DATABASE_URL": url, "HANDOFF_DEEP_STORAGE": deep, "HANDOFF_CATALOG_TOKEN": envToken}
	addr, stop := serving(t, env, "--tokens-file", tokens)
	base := "http://" + addr

	for _, tok := range []string{fileToken, envToken} {
		code, body := get(t, http.DefaultClient, base+"/v1/handoff/namespaces/handoff/tables/wiki", tok)
		require.Equal(t, http.StatusOK, code, body)
		var res struct {
			Location string `json:"metadata-location"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &res))
		assert.Equal(t, pointer, res.Location)
	}
	code, _ := get(t, http.DefaultClient, base+"/v1/config", "")
	assert.Equal(t, http.StatusUnauthorized, code)
	code, _ = get(t, http.DefaultClient, base+"/readyz", "")
	assert.Equal(t, http.StatusOK, code)

	tbl, err := laketest.LoadREST(t.Context(), base, fileToken, "handoff", "wiki")
	require.NoError(t, err)
	scan, err := laketest.ReadTable(t.Context(), tbl, "id")
	require.NoError(t, err)
	assert.EqualValues(t, 20, scan.Rows)
	assert.Len(t, scan.IDs, 20)

	r := stop()
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stderr, "serving the Iceberg REST catalog")
	assert.Contains(t, r.stderr, "url=http://"+addr)
	assert.Contains(t, r.stderr, "tokens=2")
	assert.Contains(t, r.stderr, "token=cli")
	assert.Contains(t, r.stderr, "token=env")
	assert.Contains(t, r.stderr, "stopped serving")
	assert.NotContains(t, r.stderr, fileToken)
	assert.NotContains(t, r.stderr, envToken)
}

// With a certificate it serves TLS; with a client CA it wants a client
// certificate too.
func TestCatalogServeTLS(t *testing.T) {
	t.Parallel()
	url, deep, _ := catalogDB(t)
	certFile, keyFile, caFile := serverCertFiles(t)
	env := map[string]string{"DATABASE_URL": url, "HANDOFF_DEEP_STORAGE": deep, "HANDOFF_CATALOG_TOKEN": envToken,
		"HANDOFF_CATALOG_TLS_CERT_FILE": certFile, "HANDOFF_CATALOG_TLS_KEY_FILE": keyFile}
	addr, stop := serving(t, env)
	ca, err := os.ReadFile(caFile)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(ca))
	tc := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}
	code, body := get(t, client, "https://"+addr+"/v1/config", envToken)
	require.Equal(t, http.StatusOK, code, body)
	code, _ = get(t, http.DefaultClient, "http://"+addr+"/v1/config", envToken)
	require.Equal(t, http.StatusBadRequest, code, "plain HTTP to a TLS listener")
	tbl, err := laketest.LoadREST(t.Context(), "https://"+addr, envToken, "handoff", "wiki", rest.WithTLSConfig(tc))
	require.NoError(t, err)
	assert.NotNil(t, tbl.CurrentSnapshot())
	r := stop()
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stderr, "url=https://"+addr)

	addr, _ = serving(t, env, "--tls-client-ca-file", caFile)
	_, err = client.Get("https://" + addr + "/healthz")
	require.Error(t, err, "mutual TLS: a client without a certificate is refused")
}

func TestCatalogServeUsage(t *testing.T) {
	t.Parallel()
	deep := t.TempDir()
	bad := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(bad, []byte("a "+fileToken+"\nb short\n"), 0o600))
	env := map[string]string{"DATABASE_URL": "postgres://127.0.0.1:1/x", "HANDOFF_DEEP_STORAGE": deep}
	withToken := map[string]string{"DATABASE_URL": "postgres://127.0.0.1:1/x", "HANDOFF_DEEP_STORAGE": deep, "HANDOFF_CATALOG_TOKEN": envToken}
	for _, c := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{env, nil, "no bearer token: give --tokens-file"},
		{env, []string{"--tokens-file", bad}, "line 2: token \"b\": 5 characters: want at least 16"},
		{env, []string{"--tokens-file", filepath.Join(deep, "nope")}, "--tokens-file: open"},
		{map[string]string{"HANDOFF_CATALOG_TOKEN": "short"}, nil, "HANDOFF_CATALOG_TOKEN: 5 characters"},
		{withToken, []string{"--tls-cert-file", "c.pem"}, "give both the certificate and its key file"},
		{withToken, []string{"--tls-client-ca-file", "ca.pem"}, "a client CA (mutual TLS) needs the server's certificate"},
		{withToken, []string{"--log-format", "xml"}, `--log-format "xml"`},
		{withToken, []string{"--metadata-cache-mib", "0"}, "--metadata-cache-mib 0"},
		{map[string]string{"HANDOFF_CATALOG_TOKEN": envToken, "HANDOFF_CATALOG_VENDED_ACCESS_KEY_ID": "k"}, nil, "HANDOFF_CATALOG_VENDED_SECRET_ACCESS_KEY: set both"},
		{withToken, []string{"extra"}, "unknown command"},
	} {
		r := runCLI(t, runOpts{env: c.env}, append([]string{"catalog", "serve"}, c.args...)...)
		assert.Equal(t, ExitUsage, r.code, "%v: %s", c.args, r.stderr)
		assert.Contains(t, r.stderr, c.want, "%v", c.args)
		assert.NotContains(t, r.stderr, envToken)
	}
	r := runCLI(t, runOpts{env: map[string]string{"HANDOFF_CATALOG_TOKEN": envToken, "DATABASE_URL": testenv.Postgres(t),
		"HANDOFF_DEEP_STORAGE": filepath.Join(deep, "missing")}}, "catalog", "serve")
	assert.Equal(t, ExitUsage, r.code, r.stderr)
	assert.Contains(t, r.stderr, "is not a directory here")
}

// TestClientStorage: what clients are told of an S3 deep storage.
func TestClientStorage(t *testing.T) {
	t.Parallel()
	s3 := storage.S3Config{Endpoint: "http://minio:9000", Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s"}
	assert.Nil(t, clientStorage("/data/deep", "", s3))
	assert.Equal(t, map[string]string{"s3.endpoint": "http://minio:9000", "s3.path-style-access": "true", "client.region": "us-east-1"},
		clientStorage("s3://b/p", "", s3))
	assert.Equal(t, "http://localhost:9000", clientStorage("s3://b/p", "http://localhost:9000", s3)["s3.endpoint"])
	assert.Equal(t, map[string]string{"client.region": "eu-west-1"}, clientStorage("s3://b/p", "", storage.S3Config{Region: "eu-west-1"}),
		"AWS S3 itself: no endpoint, virtual-host addressing")
}

// get sends a GET with a bearer token (none when "").
func get(t *testing.T, c *http.Client, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// serverCertFiles writes tlsFiles' certificate for 127.0.0.1 and its key
// as PEM files.
func serverCertFiles(t *testing.T) (certFile, keyFile, caFile string) {
	t.Helper()
	server, caFile := tlsFiles(t)
	cert := server.Certificates[0]
	keyDER, err := x509.MarshalECPrivateKey(cert.PrivateKey.(*ecdsa.PrivateKey))
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
	return certFile, keyFile, caFile
}

// The catalog's sessions cannot write, whatever a statement says.
func TestCatalogPoolIsReadOnly(t *testing.T) {
	t.Parallel()
	url, _, _ := catalogDB(t)
	a := &app{dialTimeout: dialTimeout}
	pool, err := a.openPool(t.Context(), url, readOnly)
	require.NoError(t, err)
	defer pool.Close()
	_, err = pool.Exec(t.Context(), `DELETE FROM iceberg_tables WHERE table_name = $1`, "wiki")
	require.ErrorContains(t, err, "read-only transaction")
	var n int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT count(*) FROM iceberg_tables WHERE table_name = $1`, "wiki").Scan(&n))
	assert.Equal(t, 1, n)
}
