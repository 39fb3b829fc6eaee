package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Drop is a retention pass's change: the segments its rules drop become
// unused.
type Drop struct {
	DataSource string
	By         string   // the rules' version, recorded as dropped_by
	IDs        []string // segments the rules drop
	// Table, when set, runs inside the transaction before the rows change,
	// holding the datasource's lock, with the URIs of the segments of IDs
	// still used: the table's delete snapshot of exactly those files.
	Table func(ctx context.Context, tx pgx.Tx, uris []string) error
}

// DropSegments marks those of d.IDs still used unused in one transaction
// under the datasource's lock and returns how many it dropped. One that a
// compaction replaced meanwhile is not dropped; the compacted segment of
// the same interval is, at the next pass.
func (s *Store) DropSegments(ctx context.Context, d Drop) (dropped int, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('handoff.datasource:' || $1, 0))`, d.DataSource); err != nil {
			return fmt.Errorf("lock datasource %q: %w", d.DataSource, err)
		}
		rows, err := tx.Query(ctx, `SELECT id, uri FROM segments WHERE datasource = $1 AND used AND id = ANY($2) ORDER BY id`, d.DataSource, d.IDs)
		if err != nil {
			return fmt.Errorf("read the segments to drop: %w", err)
		}
		var ids, uris []string
		var id, uri string
		if _, err := pgx.ForEachRow(rows, []any{&id, &uri}, func() error {
			ids, uris = append(ids, id), append(uris, uri)
			return nil
		}); err != nil {
			return fmt.Errorf("read the segments to drop: %w", err)
		}
		if len(ids) == 0 {
			return nil
		}
		if d.Table != nil {
			if err := d.Table(ctx, tx, uris); err != nil {
				return err
			}
		}
		tag, err := tx.Exec(ctx, `UPDATE segments SET used = false, dropped_by = $3, unused_at = now() WHERE datasource = $1 AND id = ANY($2)`,
			d.DataSource, ids, d.By)
		if err != nil {
			return fmt.Errorf("drop segments: %w", err)
		}
		dropped = int(tag.RowsAffected())
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("retention of datasource %q: %w", d.DataSource, err)
	}
	return dropped, nil
}
