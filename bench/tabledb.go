package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5/pgxpool"

	"handoff/internal/pgstore"
	"handoff/internal/storage"
)

// tableDB is what a phase that publishes to a table without a worker
// needs: a migrated database of its own, and a local deep storage and a
// scratch directory under the run's directory.
type tableDB struct {
	url     string
	pool    *pgxpool.Pool
	store   *pgstore.Store
	dir     string // the phase's directory: deep/ and scratch/
	scratch string
	deep    *storage.Local
}

// newTableDB makes database db and directory s.dir/name; close ends the
// pool.
func newTableDB(ctx context.Context, s *stack, db, name string) (*tableDB, error) {
	url, err := s.database(ctx, db)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, err
	}
	t := &tableDB{url: url, pool: pool, store: pgstore.New(pool), dir: filepath.Join(s.dir, name)}
	t.scratch = filepath.Join(t.dir, "scratch")
	if err = t.store.Migrate(ctx); err == nil {
		err = os.MkdirAll(t.scratch, 0o755)
	}
	if err == nil {
		t.deep, err = storage.NewLocal(filepath.Join(t.dir, "deep"))
	}
	if err != nil {
		pool.Close()
		return nil, err
	}
	return t, nil
}

func (t *tableDB) close() { t.pool.Close() }
