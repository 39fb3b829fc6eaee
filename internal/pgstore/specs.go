package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// SpecRecord is one accepted version of a supervisor's spec.
type SpecRecord struct {
	Version   int
	Spec      json.RawMessage
	CreatedAt time.Time
	SpecChange
}

// SpecChange says who made a spec version and why.
type SpecChange struct {
	// ChangedBy is ChangedByUser (start, update) or ChangedByAutoscaler.
	ChangedBy string
	Reason    string
}

// Who changes a spec.
const (
	ChangedByUser       = "user"
	ChangedByAutoscaler = "autoscaler" // protocol.ChangedByAutoscaler
)

// RecordSpec appends spec to the supervisor's history as the next version,
// unless it equals (as jsonb: key order and spacing do not matter) the
// latest recorded spec; then it records nothing and returns the latest
// version. Concurrent calls for one supervisor are serialized.
func (s *Store) RecordSpec(ctx context.Context, supervisorID string, spec json.RawMessage) (recorded bool, version int, err error) {
	return s.RecordSpecChange(ctx, supervisorID, spec, SpecChange{ChangedBy: ChangedByUser})
}

// RecordSpecChange is RecordSpec saying who made the change and why.
func (s *Store) RecordSpecChange(ctx context.Context, supervisorID string, spec json.RawMessage, change SpecChange) (recorded bool, version int, err error) {
	if change.ChangedBy == "" {
		change.ChangedBy = ChangedByUser
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// Without the lock two callers could both read the same latest
		// version; one would then fail on the primary key.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('handoff.supervisor-spec:' || $1, 0))`, supervisorID); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		var latest int
		var same bool
		err := tx.QueryRow(ctx, `SELECT version, spec = $2::jsonb FROM supervisor_specs
			WHERE supervisor_id = $1 ORDER BY version DESC LIMIT 1`, supervisorID, string(spec)).Scan(&latest, &same)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return fmt.Errorf("read latest spec: %w", err)
		case same:
			version = latest
			return nil
		}
		version, recorded = latest+1, true
		if _, err := tx.Exec(ctx, `INSERT INTO supervisor_specs (supervisor_id, version, spec, changed_by, reason) VALUES ($1, $2, $3::jsonb, $4, $5)`,
			supervisorID, version, string(spec), change.ChangedBy, change.Reason); err != nil {
			return fmt.Errorf("append version %d: %w", version, err)
		}
		return nil
	})
	if err != nil {
		return false, 0, fmt.Errorf("record spec of supervisor %q: %w", supervisorID, err)
	}
	return recorded, version, nil
}

// SpecHistory returns every recorded spec of a supervisor, oldest first.
func (s *Store) SpecHistory(ctx context.Context, supervisorID string) ([]SpecRecord, error) {
	rows, err := s.pool.Query(ctx, `SELECT version, spec, created_at, changed_by, reason FROM supervisor_specs
		WHERE supervisor_id = $1 ORDER BY version`, supervisorID)
	if err != nil {
		return nil, fmt.Errorf("read spec history of supervisor %q: %w", supervisorID, err)
	}
	recs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (SpecRecord, error) {
		var rec SpecRecord
		var spec []byte
		err := r.Scan(&rec.Version, &spec, &rec.CreatedAt, &rec.ChangedBy, &rec.Reason)
		rec.Spec = spec
		return rec, err
	})
	if err != nil {
		return nil, fmt.Errorf("read spec history of supervisor %q: %w", supervisorID, err)
	}
	return recs, nil
}
