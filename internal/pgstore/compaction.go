package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// VersionedDoc is one version of a datasource's compaction
// config or retention rules.
type VersionedDoc struct {
	Version   int
	Config    json.RawMessage
	CreatedAt time.Time
}

// SetCompactionConfig appends config as the datasource's next version,
// unless it equals the latest (as jsonb); then it records nothing and
// returns the latest version.
func (s *Store) SetCompactionConfig(ctx context.Context, dataSource string, config json.RawMessage) (recorded bool, version int, err error) {
	recorded, version, err = s.appendVersion(ctx, compactionConfigs, dataSource, config)
	if err != nil {
		return false, 0, fmt.Errorf("record compaction config of datasource %q: %w", dataSource, err)
	}
	return recorded, version, nil
}

// CompactionConfig returns the latest compaction config of a datasource;
// ok is false when it has none.
func (s *Store) CompactionConfig(ctx context.Context, dataSource string) (rec VersionedDoc, ok bool, err error) {
	rec, ok, err = s.latestVersion(ctx, compactionConfigs, dataSource)
	if err != nil {
		return rec, false, fmt.Errorf("read compaction config of datasource %q: %w", dataSource, err)
	}
	return rec, ok, nil
}

// SetRetentionRules appends rules as the datasource's next version, as
// SetCompactionConfig does configs.
func (s *Store) SetRetentionRules(ctx context.Context, dataSource string, rules json.RawMessage) (recorded bool, version int, err error) {
	recorded, version, err = s.appendVersion(ctx, retentionRules, dataSource, rules)
	if err != nil {
		return false, 0, fmt.Errorf("record retention rules of datasource %q: %w", dataSource, err)
	}
	return recorded, version, nil
}

// RetentionRules returns the latest retention rules of a datasource; ok is
// false when it has none.
func (s *Store) RetentionRules(ctx context.Context, dataSource string) (rec VersionedDoc, ok bool, err error) {
	rec, ok, err = s.latestVersion(ctx, retentionRules, dataSource)
	if err != nil {
		return rec, false, fmt.Errorf("read retention rules of datasource %q: %w", dataSource, err)
	}
	return rec, ok, nil
}

// versioned is a table of per-datasource document versions (names are
// constants; the SQL quotes them as identifiers).
type versioned struct{ table, column string }

var (
	compactionConfigs = versioned{"compaction_configs", "config"}
	retentionRules    = versioned{"retention_rules", "rules"}
)

// appendVersion appends doc as the datasource's next version in v, unless
// it equals the latest (as jsonb). Concurrent calls are serialized.
func (s *Store) appendVersion(ctx context.Context, v versioned, dataSource string, doc json.RawMessage) (recorded bool, version int, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1 || $2, 0))`, "handoff."+v.table+":", dataSource); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		var latest int
		var same bool
		err := tx.QueryRow(ctx, `SELECT version, `+pgx.Identifier{v.column}.Sanitize()+` = $2::jsonb FROM `+pgx.Identifier{v.table}.Sanitize()+`
			WHERE datasource = $1 ORDER BY version DESC LIMIT 1`, dataSource, string(doc)).Scan(&latest, &same)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return fmt.Errorf("read the latest version: %w", err)
		case same:
			version = latest
			return nil
		}
		version, recorded = latest+1, true
		if _, err := tx.Exec(ctx, `INSERT INTO `+pgx.Identifier{v.table}.Sanitize()+` (datasource, version, `+pgx.Identifier{v.column}.Sanitize()+`) VALUES ($1, $2, $3::jsonb)`,
			dataSource, version, string(doc)); err != nil {
			return fmt.Errorf("append version %d: %w", version, err)
		}
		return nil
	})
	return recorded, version, err
}

func (s *Store) latestVersion(ctx context.Context, v versioned, dataSource string) (rec VersionedDoc, ok bool, err error) {
	var doc []byte
	err = s.pool.QueryRow(ctx, `SELECT version, `+pgx.Identifier{v.column}.Sanitize()+`, created_at FROM `+pgx.Identifier{v.table}.Sanitize()+`
		WHERE datasource = $1 ORDER BY version DESC LIMIT 1`, dataSource).Scan(&rec.Version, &doc, &rec.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return VersionedDoc{}, false, nil
	}
	if err != nil {
		return VersionedDoc{}, false, err
	}
	rec.Config = doc
	return rec, true, nil
}

// LatestSpecOf returns the spec most recently accepted by any supervisor
// that writes into dataSource; ok is false when none does.
func (s *Store) LatestSpecOf(ctx context.Context, dataSource string) (spec json.RawMessage, ok bool, err error) {
	var b []byte
	err = s.pool.QueryRow(ctx, `SELECT spec FROM supervisor_specs
		WHERE spec->'dataSchema'->>'dataSource' = $1 ORDER BY created_at DESC, version DESC LIMIT 1`, dataSource).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read the latest spec of datasource %q: %w", dataSource, err)
	}
	return b, true, nil
}

// UsedSegmentsByID returns those of ids that are used segments of the
// datasource.
func (s *Store) UsedSegmentsByID(ctx context.Context, dataSource string, ids []string) ([]Segment, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, datasource, interval_start, interval_end, version, sequence_name, rows, bytes, uri, checksum, coalesce(query_granularity, '')
		FROM segments WHERE datasource = $1 AND used AND id = ANY($2) ORDER BY id`, dataSource, ids)
	if err != nil {
		return nil, fmt.Errorf("read segments of datasource %q: %w", dataSource, err)
	}
	segs, err := pgx.CollectRows(rows, scanSegment)
	if err != nil {
		return nil, fmt.Errorf("read segments of datasource %q: %w", dataSource, err)
	}
	return segs, nil
}
