package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Replacement is what one compaction commits: the segments it read become
// unused and the ones it wrote become used, together or not at all.
type Replacement struct {
	DataSource string
	// Name identifies the compaction; every new segment carries it as its
	// sequence_name, and every replaced one as compacted_by.
	Name     string
	Replaced []string // ids of the segments read
	New      []Segment
	// Table, when set, runs inside the transaction after the check passed
	// and before anything is written, holding the datasource's lock: the
	// table commit that must happen with the used-set change or not at all.
	Table func(ctx context.Context, tx pgx.Tx) error
}

// ErrReplacedChanged: a segment a compaction read is no longer used (a
// retention drop, another compaction). Nothing is committed.
var ErrReplacedChanged = errors.New("segments read by the compaction are no longer all used")

// Replace commits r in one transaction under the datasource's lock, the
// one publishes take, so it waits for at most one publish's commit and no
// publish waits for more than its own: it marks exactly r.Replaced unused
// (compare-and-swap on that set: if one of them is unused already, it
// returns ErrReplacedChanged) and inserts r.New as used. Segments appended
// to the interval meanwhile are not in r.Replaced and stay used. A retry of
// a replacement that committed (its answer lost) commits nothing and
// reports alreadyDone.
func (s *Store) Replace(ctx context.Context, r Replacement) (alreadyDone bool, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('handoff.datasource:' || $1, 0))`, r.DataSource); err != nil {
			return fmt.Errorf("lock datasource %q: %w", r.DataSource, err)
		}
		done, err := replaced(ctx, tx, r.DataSource, r.Name)
		if err != nil {
			return err
		}
		if done {
			alreadyDone = true
			return nil
		}
		var used int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM segments WHERE datasource = $1 AND id = ANY($2) AND used`,
			r.DataSource, r.Replaced).Scan(&used); err != nil {
			return fmt.Errorf("check the segments read: %w", err)
		}
		if used != len(r.Replaced) {
			return fmt.Errorf("%w: %d of %d are used", ErrReplacedChanged, used, len(r.Replaced))
		}
		if r.Table != nil {
			if err := r.Table(ctx, tx); err != nil {
				return err
			}
		}
		batch := &pgx.Batch{}
		batch.Queue(`UPDATE segments SET used = false, compacted_by = $3, unused_at = now() WHERE datasource = $1 AND id = ANY($2)`,
			r.DataSource, r.Replaced, r.Name)
		for _, seg := range r.New {
			queueInsertSegment(batch, seg)
		}
		if err := tx.SendBatch(ctx, batch).Close(); err != nil {
			return fmt.Errorf("swap the used segments: %w", err)
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("commit compaction %s: %w", r.Name, err)
	}
	return alreadyDone, nil
}

// Replaced reports whether the compaction named name committed.
func (s *Store) Replaced(ctx context.Context, dataSource, name string) (bool, error) {
	return replaced(ctx, s.pool, dataSource, name)
}

func replaced(ctx context.Context, q interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}, dataSource, name string) (bool, error) {
	var done bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM segments WHERE datasource = $1 AND compacted_by = $2)
		OR EXISTS (SELECT 1 FROM segments WHERE datasource = $1 AND sequence_name = $2)`, dataSource, name).Scan(&done)
	if err != nil {
		return false, fmt.Errorf("read compaction %s: %w", name, err)
	}
	return done, nil
}
