package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"handoff/internal/lake"
	"handoff/internal/restcatalog"
	"handoff/internal/storage"
)

// restLoadMillis is the median of loads loadTable answers of the growth
// table through the Iceberg REST catalog server (internal/restcatalog, in
// this process, on loopback), the whole answer read; each server new, so
// the first load of each reads the metadata file from deep storage.
func restLoadMillis(ctx context.Context, pool *pgxpool.Pool, deep storage.Store, cfg lake.Config, loads int) (float64, error) {
	cfg = lake.New(nil, nil, cfg).Config() // the defaults filled in
	var times []time.Duration
	for range loads {
		s, err := restcatalog.New(lake.NewCatalogRows(pool, cfg.Catalog), deep, restcatalog.Config{
			Catalog: cfg.Catalog, Namespace: cfg.Namespace, Tokens: []restcatalog.Token{{Name: "bench", Secret: catalogToken}}})
		if err != nil {
			return 0, err
		}
		srv := httptest.NewServer(s)
		d, err := timedGet(ctx, http.DefaultClient, srv.URL+"/v1/"+cfg.Catalog+"/namespaces/"+cfg.Namespace+"/tables/"+growthDataSource, catalogToken)
		srv.Close()
		if err != nil {
			return 0, err
		}
		times = append(times, d)
	}
	slices.Sort(times)
	return millis(percentile(times, 0.5)), nil
}
