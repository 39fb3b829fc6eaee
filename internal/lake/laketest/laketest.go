// Package laketest reads a datasource's Iceberg table the way another
// engine would, for tests: through iceberg-go's own SQL catalog over the
// same Postgres (an implementation handoff did not write), planning and
// scanning the current snapshot with iceberg-go's reader.
package laketest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"handoff/internal/domain"
	"handoff/internal/lake"
)

// Scan is what the current snapshot of a table holds.
type Scan struct {
	// IDs counts each value of the column scanned (see Read).
	IDs map[string]int
	// Rows is the number of rows scanned.
	Rows int64
	// Files are the data files the scan planned, as the table names them.
	Files []string
	// SharedFiles are data files more than one live manifest entry names.
	SharedFiles []string
	// Offsets is the current snapshot's handoff.offsets summary.
	Offsets domain.Offsets
	// Summary is the current snapshot's whole summary.
	Summary map[string]string
	// Schema is the table's current schema.
	Schema *iceberg.Schema
}

// Load opens the datasource's table through iceberg-go's SQL catalog.
// props go to the catalog and its file IO (s3.endpoint and the like).
func Load(ctx context.Context, pool *pgxpool.Pool, cfg lake.Config, ds string, props ...iceberg.Properties) (*table.Table, error) {
	cat, err := SQLCatalog(pool, cfg, props...)
	if err != nil {
		return nil, err
	}
	return cat.LoadTable(ctx, table.Identifier{namespace(cfg), ds})
}

// SQLCatalog is iceberg-go's SQL catalog over the tables' rows in pool's
// database (the JDBC catalog's schema).
func SQLCatalog(pool *pgxpool.Pool, cfg lake.Config, props ...iceberg.Properties) (*sqlcat.Catalog, error) {
	if cfg.Catalog == "" {
		cfg.Catalog = lake.DefaultCatalog
	}
	db := stdlib.OpenDBFromPool(pool)
	catProps := iceberg.Properties{"init_catalog_tables": "false"}
	for _, p := range props {
		maps.Copy(catProps, p)
	}
	cat, err := sqlcat.NewCatalog(cfg.Catalog, db, sqlcat.Postgres, catProps)
	if err != nil {
		return nil, fmt.Errorf("open SQL catalog: %w", err)
	}
	return cat, nil
}

func namespace(cfg lake.Config) string {
	if cfg.Namespace == "" {
		return lake.DefaultNamespace
	}
	return cfg.Namespace
}

// Read loads the table and scans its current snapshot, counting the values
// of column idColumn (a string dimension).
func Read(ctx context.Context, pool *pgxpool.Pool, cfg lake.Config, ds, idColumn string, props ...iceberg.Properties) (*Scan, error) {
	t, err := Load(ctx, pool, cfg, ds, props...)
	if err != nil {
		return nil, err
	}
	return ReadTable(ctx, t, idColumn)
}

// ReadTable scans the current snapshot of a table however it was loaded
// (an SQL or a REST catalog), counting the values of column idColumn.
func ReadTable(ctx context.Context, t *table.Table, idColumn string) (*Scan, error) {
	s := &Scan{IDs: map[string]int{}, Schema: t.Schema()}
	snap := t.CurrentSnapshot()
	if snap == nil {
		return s, nil
	}
	if snap.Summary != nil {
		s.Summary = snap.Summary.Properties
		if js := snap.Summary.Properties[lake.SummaryOffsets]; js != "" {
			if err := json.Unmarshal([]byte(js), &s.Offsets); err != nil {
				return nil, fmt.Errorf("summary %s %q: %w", lake.SummaryOffsets, js, err)
			}
		}
	}
	fs, err := t.FS(ctx)
	if err != nil {
		return nil, err
	}
	manifests, err := snap.Manifests(fs)
	if err != nil {
		return nil, err
	}
	entries := map[string]int{}
	for _, m := range manifests {
		es, err := m.FetchEntries(fs, true)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			entries[e.DataFile().FilePath()]++
		}
	}
	for f, n := range entries {
		if n > 1 {
			s.SharedFiles = append(s.SharedFiles, f)
		}
	}
	scan := t.Scan()
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan scan: %w", err)
	}
	for _, task := range tasks {
		s.Files = append(s.Files, task.File.FilePath())
	}
	_, records, err := scan.ReadTasks(ctx, tasks)
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	for rec, err := range records {
		if err != nil {
			return nil, fmt.Errorf("scan: %w", err)
		}
		idx := rec.Schema().FieldIndices(idColumn)
		if len(idx) == 0 {
			rec.Release()
			return nil, fmt.Errorf("scan has no column %q: %s", idColumn, rec.Schema())
		}
		col := rec.Column(idx[0])
		s.Rows += rec.NumRows()
		switch c := col.(type) {
		case *array.String:
			for i := range c.Len() {
				s.IDs[c.Value(i)]++
			}
		case *array.LargeString:
			for i := range c.Len() {
				s.IDs[c.Value(i)]++
			}
		default:
			rec.Release()
			return nil, fmt.Errorf("column %q is %s, want a string", idColumn, col.DataType())
		}
		rec.Release()
	}
	return s, nil
}

// LocalPath turns a file:// data file location into a path.
func LocalPath(uri string) string { return strings.TrimPrefix(uri, "file://") }
