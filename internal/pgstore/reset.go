package pgstore

import (
	"cmp"
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"handoff/internal/domain"
)

// ResetOffsets stores offsets as the next offsets of exactly those
// partitions of the datasource's topic (or, for partitions that name their
// topic, of theirs); other partitions keep theirs. It
// holds the datasource's publish lock, so a reset and a publish never
// interleave: a publish after the reset is checked against the new offsets.
func (s *Store) ResetOffsets(ctx context.Context, dataSource, topic string, offsets domain.Offsets) error {
	if len(offsets) == 0 {
		return nil
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The same lock key as Publish takes.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('handoff.datasource:' || $1, 0))`, dataSource); err != nil {
			return fmt.Errorf("lock datasource: %w", err)
		}
		batch := &pgx.Batch{}
		for _, part := range offsets.Partitions() {
			batch.Queue(`INSERT INTO datasource_offsets (datasource, topic, partition, next_offset) VALUES ($1, $2, $3, $4)
				ON CONFLICT (datasource, topic, partition) DO UPDATE SET next_offset = EXCLUDED.next_offset, updated_at = now()`,
				dataSource, cmp.Or(part.Topic, topic), part.Partition, offsets[part])
		}
		if err := tx.SendBatch(ctx, batch).Close(); err != nil {
			return fmt.Errorf("write offsets: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reset offsets of datasource %q topic %q to %s: %w", dataSource, topic, offsets, err)
	}
	return nil
}
