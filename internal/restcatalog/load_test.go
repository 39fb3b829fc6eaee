package restcatalog_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"handoff/internal/lake"
	"handoff/internal/lake/laketest"
)

// iceberg-go's REST client, which handoff did not write, loads the table
// through the server and scans its current snapshot: every row published
// once, the summary's offsets those stored, the metadata location the
// committed one, and the same table as iceberg-go's SQL catalog reads.
func TestIcebergGoLoadsAndScansTheTable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ids := e.publish(e.publisher("wiki"), 3, 500)

	cat, err := laketest.RESTCatalog(ctx, e.srv.URL, goodToken)
	require.NoError(t, err)
	defer cat.Close()
	nss, err := cat.ListNamespaces(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, []table.Identifier{{"handoff"}}, nss)
	var tables []table.Identifier
	for id, err := range cat.ListTables(ctx, table.Identifier{"handoff"}) {
		require.NoError(t, err)
		tables = append(tables, id)
	}
	require.Equal(t, []table.Identifier{{"handoff", "wiki"}}, tables)
	exists, err := cat.CheckTableExists(ctx, table.Identifier{"handoff", "wiki"})
	require.NoError(t, err)
	require.True(t, exists)
	exists, err = cat.CheckTableExists(ctx, table.Identifier{"handoff", "nope"})
	require.NoError(t, err)
	require.False(t, exists)
	props, err := cat.LoadNamespaceProperties(ctx, table.Identifier{"handoff"})
	require.NoError(t, err)
	require.Equal(t, "true", props["exists"])

	tbl, err := cat.LoadTable(ctx, table.Identifier{"handoff", "wiki"})
	require.NoError(t, err)
	require.Equal(t, e.pointer("wiki"), tbl.MetadataLocation())
	stored, err := e.store.Offsets(ctx, "wiki", "wiki")
	require.NoError(t, err)
	scan, err := laketest.ReadTable(ctx, tbl, "id")
	require.NoError(t, err)
	require.EqualValues(t, len(ids), scan.Rows)
	for _, id := range ids {
		require.Equal(t, 1, scan.IDs[id], "row %s", id)
	}
	require.Len(t, scan.IDs, len(ids))
	require.True(t, scan.Offsets.Equal(stored), "summary %s %v, stored %v", lake.SummaryOffsets, scan.Offsets, stored)

	viaSQL, err := laketest.Load(ctx, e.pool, lake.Config{}, "wiki")
	require.NoError(t, err)
	require.Equal(t, viaSQL.MetadataLocation(), tbl.MetadataLocation())
	require.Equal(t, viaSQL.CurrentSnapshot().SnapshotID, tbl.CurrentSnapshot().SnapshotID)
	require.Equal(t, len(viaSQL.Metadata().Snapshots()), len(tbl.Metadata().Snapshots()))

	_, err = cat.LoadTable(ctx, table.Identifier{"handoff", "nope"})
	require.ErrorIs(t, err, catalog.ErrNoSuchTable)
	_, err = cat.LoadTable(ctx, table.Identifier{"other", "wiki"})
	require.ErrorIs(t, err, catalog.ErrNoSuchTable)
}

// The answers have the spec's shapes: CatalogConfig with the prefix and
// the endpoints, LoadTableResult with metadata-location, metadata and
// config, errors in the error model.
func TestAnswersHaveTheSpecsShapes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(e.publisher("wiki"), 1, 10)

	code, _, body := e.do(http.MethodGet, "/v1/config", goodToken, nil)
	require.Equal(t, http.StatusOK, code, body)
	var cfg struct {
		Defaults  map[string]string `json:"defaults"`
		Overrides map[string]string `json:"overrides"`
		Endpoints []string          `json:"endpoints"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &cfg))
	require.Equal(t, "handoff", cfg.Overrides["prefix"])
	require.NotNil(t, cfg.Defaults)
	require.Contains(t, cfg.Endpoints, "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}")
	for _, wh := range []string{"handoff", e.deep.URI("")} {
		code, _, body = e.do(http.MethodGet, "/v1/config?warehouse="+wh, goodToken, nil)
		require.Equal(t, http.StatusOK, code, "warehouse %s: %s", wh, body)
	}
	code, _, body = e.do(http.MethodGet, "/v1/config?warehouse=elsewhere", goodToken, nil)
	requireError(t, code, body, http.StatusNotFound, "NoSuchWarehouseException")

	code, h, body := e.do(http.MethodGet, "/v1/handoff/namespaces/handoff/tables/wiki", goodToken, nil)
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, "application/json", h.Get("Content-Type"))
	var res struct {
		Location string            `json:"metadata-location"`
		Metadata json.RawMessage   `json:"metadata"`
		Config   map[string]string `json:"config"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &res))
	require.Equal(t, e.pointer("wiki"), res.Location)
	require.Equal(t, e.file(res.Location), string(res.Metadata), "metadata is the committed file as stored, byte for byte")
	require.NotNil(t, res.Config)

	code, _, body = e.do(http.MethodGet, "/v1/handoff/namespaces/handoff/tables/wiki?snapshots=refs", goodToken, nil)
	require.Equal(t, http.StatusOK, code, body)
	code, _, body = e.do(http.MethodGet, "/v1/handoff/namespaces/handoff/tables/wiki?snapshots=some", goodToken, nil)
	requireError(t, code, body, http.StatusBadRequest, "BadRequestException")

	code, _, body = e.do(http.MethodGet, "/v1/handoff/namespaces/handoff/tables/nope", goodToken, nil)
	requireError(t, code, body, http.StatusNotFound, "NoSuchTableException")
	code, _, body = e.do(http.MethodGet, "/v1/handoff/namespaces/elsewhere", goodToken, nil)
	requireError(t, code, body, http.StatusNotFound, "NoSuchNamespaceException")
	code, _, body = e.do(http.MethodGet, "/v1/handoff/namespaces/elsewhere/tables", goodToken, nil)
	requireError(t, code, body, http.StatusNotFound, "NoSuchNamespaceException")
	code, _, _ = e.do(http.MethodHead, "/v1/handoff/namespaces/handoff", goodToken, nil)
	require.Equal(t, http.StatusNoContent, code)
	code, _, _ = e.do(http.MethodHead, "/v1/handoff/namespaces/elsewhere", goodToken, nil)
	require.Equal(t, http.StatusNotFound, code)
	code, _, body = e.do(http.MethodGet, "/v1/handoff/namespaces?parent=elsewhere", goodToken, nil)
	requireError(t, code, body, http.StatusNotFound, "NoSuchNamespaceException")
	code, _, body = e.do(http.MethodGet, "/v1/handoff/namespaces?parent=handoff", goodToken, nil)
	require.Equal(t, http.StatusOK, code, body)
	require.JSONEq(t, `{"namespaces":[],"next-page-token":null}`, body, "handoff has no namespaces under it")
	code, _, body = e.do(http.MethodGet, "/v1/other/namespaces", goodToken, nil)
	requireError(t, code, body, http.StatusNotFound, "NoSuchWarehouseException")
	code, h, body = e.do(http.MethodPut, "/v1/handoff/namespaces/handoff/tables/wiki", goodToken, nil)
	requireError(t, code, body, http.StatusMethodNotAllowed, "UnsupportedOperationException")
	require.Equal(t, "GET, HEAD, POST, DELETE", h.Get("Allow"))
	code, _, body = e.do(http.MethodGet, "/v1/handoff/namespaces/handoff/views", goodToken, nil)
	requireError(t, code, body, http.StatusNotFound, "NotFoundException")
}

// A namespace without tables is not there yet, as the JDBC catalog sees it.
func TestNoTableYet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	code, _, body := e.do(http.MethodGet, "/v1/handoff/namespaces", goodToken, nil)
	require.Equal(t, http.StatusOK, code, body)
	require.JSONEq(t, `{"namespaces":[],"next-page-token":null}`, body)
	code, _, body = e.do(http.MethodGet, "/v1/handoff/namespaces/handoff/tables", goodToken, nil)
	requireError(t, code, body, http.StatusNotFound, "NoSuchNamespaceException")
	require.Contains(t, body, "first publish")
}

// requireError checks an answer in the spec's error model.
func requireError(t *testing.T, code int, body string, wantCode int, wantType string) {
	t.Helper()
	require.Equal(t, wantCode, code, body)
	var e struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    int    `json:"code"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &e), body)
	require.Equal(t, wantType, e.Error.Type, body)
	require.Equal(t, wantCode, e.Error.Code, body)
	require.NotEmpty(t, e.Error.Message)
	require.False(t, slices.Contains([]string{"", "null"}, e.Error.Message))
}
