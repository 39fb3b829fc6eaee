package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// maxSavedMessage bounds the bytes of one saved message.
const maxSavedMessage = 64 << 10

// ParseError is one unparseable message and where it was read.
type ParseError struct {
	SupervisorID string
	DataSource   string
	Topic        string
	Partition    int32
	Offset       int64
	Error        string
	Message      []byte
	Truncated    bool
	CreatedAt    time.Time
}

// SaveParseErrors stores errs and keeps only the latest keep of the
// supervisor's rows. Saving the same message twice (a retried chunk) keeps
// one row.
func (s *Store) SaveParseErrors(ctx context.Context, supervisorID string, errs []ParseError, keep int) error {
	if len(errs) == 0 || keep <= 0 {
		return nil
	}
	if len(errs) > keep {
		errs = errs[len(errs)-keep:]
	}
	batch := &pgx.Batch{}
	for _, e := range errs {
		msg, truncated := e.Message, false
		if len(msg) > maxSavedMessage {
			msg, truncated = msg[:maxSavedMessage], true
		}
		batch.Queue(`INSERT INTO parse_errors (supervisor_id, datasource, topic, partition, "offset", error, message, truncated)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
			supervisorID, e.DataSource, e.Topic, e.Partition, e.Offset, e.Error, msg, truncated)
	}
	batch.Queue(`DELETE FROM parse_errors WHERE supervisor_id = $1 AND id < (
		SELECT min(id) FROM (SELECT id FROM parse_errors WHERE supervisor_id = $1 ORDER BY id DESC LIMIT $2) AS latest)`,
		supervisorID, keep)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return tx.SendBatch(ctx, batch).Close() })
	if err != nil {
		return fmt.Errorf("save parse errors of supervisor %q: %w", supervisorID, err)
	}
	return nil
}

// ParseErrors lists a supervisor's saved parse errors, latest first.
func (s *Store) ParseErrors(ctx context.Context, supervisorID string) ([]ParseError, error) {
	rows, err := s.pool.Query(ctx, `SELECT supervisor_id, datasource, topic, partition, "offset", error, message, truncated, created_at
		FROM parse_errors WHERE supervisor_id = $1 ORDER BY id DESC`, supervisorID)
	if err != nil {
		return nil, fmt.Errorf("list parse errors of supervisor %q: %w", supervisorID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ParseError, error) {
		var e ParseError
		err := r.Scan(&e.SupervisorID, &e.DataSource, &e.Topic, &e.Partition, &e.Offset, &e.Error, &e.Message, &e.Truncated, &e.CreatedAt)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("list parse errors of supervisor %q: %w", supervisorID, err)
	}
	return out, nil
}
