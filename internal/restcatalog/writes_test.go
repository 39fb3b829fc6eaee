package restcatalog_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every write of the spec is refused with 403 ForbiddenException and a
// message that says why, whatever its body, and changes nothing: the
// catalog rows are as before.
func TestWritesAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(e.publisher("wiki"), 2, 10)
	before := catalogRows(t, e)
	body := `{"name":"x","schema":{"type":"struct","fields":[]},"namespace":["x"],"requirements":[],"updates":[]}`
	for _, w := range []struct{ method, path, want string }{
		{http.MethodPost, "/v1/handoff/namespaces", "createNamespace refused"},
		{http.MethodDelete, "/v1/handoff/namespaces/handoff", "dropNamespace refused"},
		{http.MethodPost, "/v1/handoff/namespaces/handoff/properties", "updateProperties refused"},
		{http.MethodPost, "/v1/handoff/namespaces/handoff/tables", "createTable refused"},
		{http.MethodPost, "/v1/handoff/namespaces/handoff/tables/wiki", "table handoff.wiki is owned by its handoff supervisor"},
		{http.MethodDelete, "/v1/handoff/namespaces/handoff/tables/wiki", "dropTable refused: table handoff.wiki is owned by its handoff supervisor"},
		{http.MethodDelete, "/v1/handoff/namespaces/handoff/tables/wiki?purgeRequested=true", "dropTable refused"},
		{http.MethodPost, "/v1/handoff/namespaces/handoff/register", "registerTable refused"},
		{http.MethodPost, "/v1/handoff/tables/rename", "renameTable refused"},
		{http.MethodPost, "/v1/handoff/transactions/commit", "commitTransaction refused"},
		{http.MethodPost, "/v1/handoff/namespaces/other/tables/x", "updateTable refused"},
	} {
		code, _, got := e.do(w.method, w.path, goodToken, strings.NewReader(body), "Content-Type", "application/json")
		requireError(t, code, got, http.StatusForbidden, "ForbiddenException")
		require.Contains(t, got, w.want, "%s %s", w.method, w.path)
	}
	require.Equal(t, before, catalogRows(t, e), "a refused write changed the catalog")
}

// catalogRows is every row of both catalog tables, as text.
func catalogRows(t *testing.T, e *env) []string {
	t.Helper()
	rows, err := e.pool.Query(context.Background(), `SELECT catalog_name || '|' || table_namespace || '|' || table_name || '|' || coalesce(metadata_location, '') || '|' || coalesce(iceberg_type, '')
		FROM iceberg_tables UNION ALL SELECT catalog_name || '|' || namespace || '|' || property_key || '|' || coalesce(property_value, '')
		FROM iceberg_namespace_properties ORDER BY 1`)
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	require.NotEmpty(t, out)
	return out
}
