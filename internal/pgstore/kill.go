package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Unused is an unused segment whose file is still in deep storage.
type Unused struct {
	ID       string
	URI      string
	Bytes    int64
	UnusedAt time.Time
}

// UnusedBefore lists the datasource's unused, unkilled segments that
// became unused before t, oldest first. Segments made unused before
// unused_at was recorded are not listed: their age is unknown.
func (s *Store) UnusedBefore(ctx context.Context, dataSource string, t time.Time) ([]Unused, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, uri, bytes, unused_at FROM segments
		WHERE datasource = $1 AND NOT used AND killed_at IS NULL AND unused_at < $2 ORDER BY unused_at, id`, dataSource, t)
	if err != nil {
		return nil, fmt.Errorf("list unused segments of datasource %q: %w", dataSource, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Unused, error) {
		var u Unused
		err := r.Scan(&u.ID, &u.URI, &u.Bytes, &u.UnusedAt)
		return u, err
	})
	if err != nil {
		return nil, fmt.Errorf("list unused segments of datasource %q: %w", dataSource, err)
	}
	return out, nil
}

// MarkKilled records that the files of ids are deleted. Only unused
// segments are marked.
func (s *Store) MarkKilled(ctx context.Context, dataSource string, ids []string) error {
	if _, err := s.pool.Exec(ctx, `UPDATE segments SET killed_at = now() WHERE datasource = $1 AND id = ANY($2) AND NOT used AND killed_at IS NULL`,
		dataSource, ids); err != nil {
		return fmt.Errorf("mark segments of datasource %q killed: %w", dataSource, err)
	}
	return nil
}

// SegmentURIs returns the files of every segment row of the datasource
// whose file has not been killed: used ones, and unused ones within their
// grace period.
func (s *Store) SegmentURIs(ctx context.Context, dataSource string) (map[string]bool, error) {
	rows, err := s.pool.Query(ctx, `SELECT uri FROM segments WHERE datasource = $1 AND killed_at IS NULL`, dataSource)
	if err != nil {
		return nil, fmt.Errorf("list segment files of datasource %q: %w", dataSource, err)
	}
	out := map[string]bool{}
	var uri string
	if _, err := pgx.ForEachRow(rows, []any{&uri}, func() error {
		out[uri] = true
		return nil
	}); err != nil {
		return nil, fmt.Errorf("list segment files of datasource %q: %w", dataSource, err)
	}
	return out, nil
}

// SupervisorsOf lists the supervisors that published into the datasource.
func (s *Store) SupervisorsOf(ctx context.Context, dataSource string) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT supervisor_id FROM published_sequences WHERE datasource = $1 ORDER BY supervisor_id`, dataSource)
	if err != nil {
		return nil, fmt.Errorf("list supervisors of datasource %q: %w", dataSource, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list supervisors of datasource %q: %w", dataSource, err)
	}
	return ids, nil
}

// Published returns which of the sequence names have been published.
func (s *Store) Published(ctx context.Context, names []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(names) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT sequence_name FROM published_sequences WHERE sequence_name = ANY($1)`, names)
	if err != nil {
		return nil, fmt.Errorf("look up %d sequences: %w", len(names), err)
	}
	var name string
	if _, err := pgx.ForEachRow(rows, []any{&name}, func() error {
		out[name] = true
		return nil
	}); err != nil {
		return nil, fmt.Errorf("look up %d sequences: %w", len(names), err)
	}
	return out, nil
}
