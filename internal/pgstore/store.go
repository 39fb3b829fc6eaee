// Package pgstore is handoff's metadata store in Postgres: the publish
// transaction that commits segments together with the offsets they cover,
// offset resets, the history of accepted specs, and the reads of stored
// offsets, sequences and segments. Callers see the project's own errors,
// never pgx's.
package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"handoff/migrations"
)

// Store reads and writes the metadata tables.
type Store struct {
	pool *pgxpool.Pool
}

// New wraps a pool.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Pool returns the underlying pool.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Migrate applies pending migrations through the pool.
func (s *Store) Migrate(ctx context.Context) error {
	db := stdlib.OpenDBFromPool(s.pool)
	defer db.Close()
	_, err := migrations.Up(ctx, db)
	return err
}

// Ping checks that Postgres answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("ping postgres: %w", err)
	}
	return nil
}

// ErrSequenceConflict: the sequence name is recorded with other offsets.
var ErrSequenceConflict = errors.New("sequence recorded with other offsets")

// MismatchError: the stored offsets are not where the sequence starts.
type MismatchError struct {
	DataSource string
	Topic      string
	Partition  int32
	Stored     int64
	Start      int64
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("offsets of datasource %q topic %q partition %d are at %d, but the sequence starts at %d",
		e.DataSource, e.Topic, e.Partition, e.Stored, e.Start)
}
