package restcatalog_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Paths that try to walk out of a directory, smuggle SQL or a separator,
// or are not text at all, are refused with a 4xx in the error model
// before they reach Postgres or deep storage; the server stays up and the
// catalog rows are as before.
func TestHostilePathsAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(e.publisher("wiki"), 1, 10)
	before := catalogRows(t, e)
	const tables = "/v1/handoff/namespaces/handoff/tables/"
	for _, c := range []struct {
		path string
		code int
	}{
		{tables + "..", http.StatusBadRequest},
		{tables + "%2e%2e", http.StatusBadRequest},
		{tables + "..%2F..%2Fetc%2Fpasswd", http.StatusBadRequest},
		{tables + "wiki%2F..%2F..%2Fmetadata", http.StatusBadRequest},
		{tables + "wiki%00", http.StatusBadRequest},
		{tables + "%ff%fe", http.StatusBadRequest},
		{tables + "wiki%27%3B%20DROP%20TABLE%20iceberg_tables%3B--", http.StatusBadRequest},
		{tables + "wiki'%20OR%20'1'='1", http.StatusBadRequest},
		{tables + strings.Repeat("a", 129), http.StatusBadRequest},
		{tables + "%E2%80%AEwiki", http.StatusBadRequest},
		{tables + "wiki/credentials/x", http.StatusNotFound},
		{tables + "wiki/../../..", http.StatusNotFound},
		{tables, http.StatusBadRequest},
		{"/v1/handoff/namespaces/..%2F../tables/wiki", http.StatusBadRequest},
		{"/v1/handoff/namespaces/handoff%1F..%1Fetc/tables/wiki", http.StatusBadRequest},
		{"/v1/handoff/namespaces/handoff.x/tables/wiki", http.StatusBadRequest},
		{"/v1/handoff/namespaces/%1F/tables/wiki", http.StatusBadRequest},
		{"/v1/handoff/namespaces/handoff%1F/tables/wiki", http.StatusBadRequest},
		{"/v1/handoff/namespaces/", http.StatusBadRequest},
		{"/v1/handoff/namespaces?parent=..%2F", http.StatusBadRequest},
		{"/v1/handoff/namespaces?parent=%00", http.StatusBadRequest},
		{"/v1/..%2Fhandoff/namespaces", http.StatusNotFound},
		{"/v1//namespaces", http.StatusBadRequest},
		{"/v1/handoff//namespaces", http.StatusNotFound},
		{"/v1/", http.StatusNotFound},
		{"/v2/handoff/namespaces", http.StatusNotFound},
		{"/", http.StatusNotFound},
		{"/v1/handoff/namespaces/handoff/tables?pageToken=%00%00", http.StatusBadRequest},
		{"/v1/handoff/namespaces/handoff/tables?pageToken=Li4v", http.StatusBadRequest},
		{"/v1/handoff/namespaces/handoff/tables?pageSize=-1", http.StatusBadRequest},
		{"/v1/handoff/namespaces/handoff/tables/wiki/" + strings.Repeat("x/", 1100), http.StatusBadRequest},
	} {
		code, _, body := e.do(http.MethodGet, c.path, goodToken, nil)
		require.Equal(t, c.code, code, "GET %s: %s", c.path, body)
		requireError(t, code, body, c.code, map[int]string{400: "BadRequestException", 404: typeOf(body)}[c.code])
		require.NotContains(t, body, e.deep.URI(""), "an error must not show where deep storage is")
	}
	// Go's HTTP server refuses a request line that is not a URL itself.
	for _, p := range []string{tables + "%", tables + "wiki%zz", tables + "wiki\x00"} {
		code := e.rawGet(p)
		require.Equal(t, http.StatusBadRequest, code, "GET %q", p)
	}
	code, _, body := e.do(http.MethodGet, tables+"wiki", goodToken, nil)
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, before, catalogRows(t, e))
}

// rawGet sends a GET of path as it is, which Go's client would refuse to
// send, and returns the answer's status.
func (e *env) rawGet(path string) int {
	e.t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.srv.URL, "http://"))
	require.NoError(e.t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: catalog\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", path, goodToken)
	require.NoError(e.t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(e.t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// typeOf is the error type of an answer, for the 404s whose type varies.
func typeOf(body string) string {
	const key = `"type":"`
	i := strings.Index(body, key)
	if i < 0 {
		return ""
	}
	rest := body[i+len(key):]
	return rest[:strings.IndexByte(rest, '"')]
}
