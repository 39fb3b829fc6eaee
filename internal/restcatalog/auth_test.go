package restcatalog_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"handoff/internal/lake/laketest"
	"handoff/internal/restcatalog"
)

// No token, a wrong one, a malformed header and an expired token are
// each refused with 401 on every route, reads and writes alike, with a
// WWW-Authenticate challenge; health checks need none. No token reaches
// the log or an answer.
func TestAuthRefusesWithout401(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(e.publisher("wiki"), 1, 10)
	routes := []struct{ method, path string }{
		{http.MethodGet, "/v1/config"},
		{http.MethodGet, "/v1/handoff/namespaces"},
		{http.MethodGet, "/v1/handoff/namespaces/handoff"},
		{http.MethodHead, "/v1/handoff/namespaces/handoff"},
		{http.MethodGet, "/v1/handoff/namespaces/handoff/tables"},
		{http.MethodGet, "/v1/handoff/namespaces/handoff/tables/wiki"},
		{http.MethodHead, "/v1/handoff/namespaces/handoff/tables/wiki"},
		{http.MethodPost, "/v1/handoff/namespaces/handoff/tables/wiki"},
		{http.MethodDelete, "/v1/handoff/namespaces/handoff/tables/wiki"},
		{http.MethodGet, "/v1/nope/anything"},
	}
	wrong := "wrong-token-0123456789abcdef"
	cases := []struct {
		name, header, message string
	}{
		{"no token", "", "no bearer token"},
		{"wrong token", "Bearer " + wrong, "not valid"},
		{"token of another scheme", "Basic " + goodToken, "not a bearer token"},
		{"bearer without a token", "Bearer", "not a bearer token"},
		{"expired token", "Bearer " + expiredToken, "expired at 2020-01-01T00:00:00Z"},
		{"good token with a suffix", "Bearer " + goodToken + "x", "not valid"},
		{"good token's prefix", "Bearer " + goodToken[:len(goodToken)-1], "not valid"},
	}
	for _, c := range cases {
		for _, r := range routes {
			var headers []string
			if c.header != "" {
				headers = []string{"Authorization", c.header}
			}
			code, h, body := e.do(r.method, r.path, "", nil, headers...)
			require.Equal(t, http.StatusUnauthorized, code, "%s: %s %s: %s", c.name, r.method, r.path, body)
			require.Equal(t, `Bearer realm="handoff"`, h.Get("WWW-Authenticate"))
			if r.method != http.MethodHead {
				requireError(t, code, body, http.StatusUnauthorized, "NotAuthorizedException")
				require.Contains(t, body, c.message, c.name)
				require.NotContains(t, body, goodToken)
				require.NotContains(t, body, wrong)
				require.NotContains(t, body, expiredToken)
			}
		}
	}
	code, _, body := e.do(http.MethodGet, "/v1/handoff/namespaces/handoff/tables/wiki", goodToken, nil)
	require.Equal(t, http.StatusOK, code, body)
	code, _, _ = e.do(http.MethodGet, "/v1/handoff/namespaces/handoff/tables/wiki", "", nil, "Authorization", "bearer  "+goodToken+" ")
	require.Equal(t, http.StatusOK, code, "the scheme is case-insensitive, spaces around the token do not count")
	for _, p := range []string{"/healthz", "/readyz"} {
		code, _, body := e.do(http.MethodGet, p, "", nil)
		require.Equal(t, http.StatusOK, code, "%s: %s", p, body)
	}

	log := e.log.String()
	require.Contains(t, log, "token=reader", "requests are logged with the token's name")
	for _, secret := range []string{goodToken, wrong, expiredToken} {
		require.NotContains(t, log, secret)
	}
}

// iceberg-go's client sees the same: a wrong or expired token is
// ErrUnauthorized when it opens the catalog.
func TestIcebergGoWithABadToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	for _, tok := range []string{"wrong-token-0123456789abcdef", expiredToken} {
		_, err := laketest.RESTCatalog(ctx, e.srv.URL, tok)
		require.ErrorIs(t, err, rest.ErrUnauthorized)
	}
}

// A token expires at its time, not before: the server's clock decides.
func TestTokenExpiresOnTime(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	now := at.Add(-time.Second)
	e := newEnv(t, func(c *restcatalog.Config) {
		c.Tokens = []restcatalog.Token{{Name: "short", Secret: goodToken, Expires: at}}
		c.Now = func() time.Time { return now }
	})
	code, _, body := e.do(http.MethodGet, "/v1/config", goodToken, nil)
	require.Equal(t, http.StatusOK, code, body)
	now = at
	code, _, body = e.do(http.MethodGet, "/v1/config", goodToken, nil)
	requireError(t, code, body, http.StatusUnauthorized, "NotAuthorizedException")
	require.Contains(t, body, "expired")
}

// The tokens file: names, tokens and expiries, and errors that name the
// line and never the token.
func TestParseTokens(t *testing.T) {
	t.Parallel()
	tokens, err := restcatalog.ParseTokens(strings.NewReader(`
# engines
duckdb   duckdb-token-0123456789
trino    trino-token-0123456789   2027-01-31T00:00:00Z
`), "tokens")
	require.NoError(t, err)
	require.Len(t, tokens, 2)
	require.Equal(t, "duckdb", tokens[0].Name)
	require.True(t, tokens[0].Expires.IsZero())
	require.Equal(t, time.Date(2027, 1, 31, 0, 0, 0, 0, time.UTC), tokens[1].Expires)
	require.NotContains(t, tokens[1].String(), "trino-token")

	secret := "secret-token-0123456789"
	for _, c := range []struct{ file, want string }{
		{"a", "line 1: 1 fields"},
		{"a " + secret + " 2027 x", "line 1: 4 fields"},
		{"a short", "line 1: token \"a\": 5 characters: want at least 16"},
		{"../x " + secret, "line 1: token name"},
		{"a " + secret + " tomorrow", "line 1: token \"a\": expiry \"tomorrow\""},
		{"a " + secret + "\na other-token-0123456789", "line 2: token name \"a\" is on line 1 too"},
		{"a " + secret + "\nb " + secret, "line 2: the same token as on line 1"},
		{"a secret-token-é123456789", "not printable ASCII"},
	} {
		_, err := restcatalog.ParseTokens(strings.NewReader(c.file), "tokens")
		require.ErrorContains(t, err, c.want, c.file)
		require.NotContains(t, err.Error(), secret)
	}
}

// A server without a token, or with a weak one, does not start.
func TestServerNeedsTokens(t *testing.T) {
	t.Parallel()
	_, err := restcatalog.New(nil, nil, restcatalog.Config{})
	require.ErrorContains(t, err, "no bearer tokens")
	_, err = restcatalog.New(nil, nil, restcatalog.Config{Tokens: []restcatalog.Token{{Name: "a", Secret: "short"}}})
	require.ErrorContains(t, err, "want at least 16")
	require.NotContains(t, err.Error(), "short\"")
	_, err = restcatalog.New(nil, nil, restcatalog.Config{Catalog: "a/b", Tokens: []restcatalog.Token{{Name: "a", Secret: goodToken}}})
	require.ErrorContains(t, err, `catalog "a/b"`)
}

// A table loaded through the catalog cannot be changed through it.
func TestIcebergGoCannotWrite(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.publish(e.publisher("wiki"), 1, 10)
	before := e.pointer("wiki")
	cat, err := laketest.RESTCatalog(ctx, e.srv.URL, goodToken)
	require.NoError(t, err)
	defer cat.Close()
	tbl, err := cat.LoadTable(ctx, table.Identifier{"handoff", "wiki"})
	require.NoError(t, err)
	txn := tbl.NewTransaction()
	require.NoError(t, txn.SetProperties(map[string]string{"owner": "someone else"}))
	_, err = txn.Commit(ctx)
	require.ErrorIs(t, err, rest.ErrForbidden)
	require.ErrorContains(t, err, "owned by its handoff supervisor")
	require.ErrorIs(t, cat.DropTable(ctx, table.Identifier{"handoff", "wiki"}), rest.ErrForbidden)
	_, err = cat.RenameTable(ctx, table.Identifier{"handoff", "wiki"}, table.Identifier{"handoff", "wiki2"})
	require.ErrorIs(t, err, rest.ErrForbidden)
	require.ErrorIs(t, cat.CreateNamespace(ctx, table.Identifier{"mine"}, nil), rest.ErrForbidden)
	require.ErrorIs(t, cat.DropNamespace(ctx, table.Identifier{"handoff"}), rest.ErrForbidden)
	require.Equal(t, before, e.pointer("wiki"), "the table did not move")
}
