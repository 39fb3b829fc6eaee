package process

import (
	"context"
	"strconv"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/lake"
	"handoff/internal/lake/laketest"
)

// catalogToken is the bearer token of the test's catalog server.
const catalogToken = "process-catalog-token-0123456789"

// startCatalog runs the real `starter catalog serve` over the env's
// database and deep storage, as an operator would, and returns its URL.
func (e *env) startCatalog() string {
	e.t.Helper()
	port := freePort(e.t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	env := []string{"DATABASE_URL=" + e.dbURL, "HANDOFF_DEEP_STORAGE=" + e.deepDir, "HANDOFF_CATALOG_TOKEN=" + catalogToken}
	e.startProcess("catalog", "catalog", port, env, starterBin, "catalog", "serve", "--listen", addr)
	return "http://" + addr
}

// requireRESTCommitted loads the datasource's table through the catalog
// at url with iceberg-go's REST client, between two loads of what
// iceberg_tables points at, and checks it is one of those two: a
// committed snapshot, never older than the one committed before the load
// (the other group's publish may commit meanwhile).
func (e *env) requireRESTCommitted(url string, spec domain.Spec) {
	e.t.Helper()
	ctx := context.Background()
	ds := spec.DataSchema.DataSource
	before, err := laketest.Load(ctx, e.pool, lake.Config{}, ds)
	require.NoError(e.t, err)
	viaREST, err := laketest.LoadREST(ctx, url, catalogToken, lake.DefaultNamespace, ds)
	require.NoError(e.t, err, "load %s through the REST catalog", ds)
	after, err := laketest.Load(ctx, e.pool, lake.Config{}, ds)
	require.NoError(e.t, err)
	switch viaREST.MetadataLocation() {
	case before.MetadataLocation():
		require.Equal(e.t, before.CurrentSnapshot().SnapshotID, viaREST.CurrentSnapshot().SnapshotID)
	case after.MetadataLocation():
		require.Equal(e.t, after.CurrentSnapshot().SnapshotID, viaREST.CurrentSnapshot().SnapshotID)
	default:
		e.t.Fatalf("the REST catalog served %s, neither %s (committed before the load) nor %s (after)",
			viaREST.MetadataLocation(), before.MetadataLocation(), after.MetadataLocation())
	}
}

// requireRESTExactlyOnce scans the table loaded through the catalog at
// url: events runID-0 ... runID-(n-1) each once, nothing else, and the
// current snapshot's offsets those stored.
func (e *env) requireRESTExactlyOnce(url string, spec domain.Spec, runID string, n int64) {
	e.t.Helper()
	ctx := context.Background()
	ds := spec.DataSchema.DataSource
	t, err := laketest.LoadREST(ctx, url, catalogToken, lake.DefaultNamespace, ds)
	require.NoError(e.t, err, "load %s through the REST catalog", ds)
	stored, err := e.store.Offsets(ctx, ds, spec.IOConfig.Topic)
	require.NoError(e.t, err)
	r, err := laketest.CheckTable(ctx, t, runID, n, stored)
	if r != nil {
		e.t.Logf("table through the REST catalog: %d rows in %d files, %d distinct ids, offsets %v (stored %v)",
			r.Scan.Rows, len(r.Scan.Files), len(r.Scan.IDs), r.Scan.Offsets, stored)
	}
	require.NoError(e.t, err, "the datasource read through the REST catalog")
}
