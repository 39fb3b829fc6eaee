package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"handoff/internal/domain"
)

// Offsets returns the stored next offsets of a datasource's topic; missing
// partitions have never been published.
func (s *Store) Offsets(ctx context.Context, dataSource, topic string) (domain.Offsets, error) {
	rows, err := s.pool.Query(ctx, `SELECT partition, next_offset FROM datasource_offsets WHERE datasource = $1 AND topic = $2`,
		dataSource, topic)
	if err != nil {
		return nil, fmt.Errorf("read offsets of datasource %q: %w", dataSource, err)
	}
	out := domain.Offsets{}
	var part int32
	var next int64
	if _, err := pgx.ForEachRow(rows, []any{&part, &next}, func() error {
		out[domain.P(part)] = next
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read offsets of datasource %q: %w", dataSource, err)
	}
	return out, nil
}

// TopicsOffsets returns the stored next offsets of a datasource's
// partitions in topics, each named with its topic (a topicPattern
// supervisor's partitions); missing partitions have never been published.
func (s *Store) TopicsOffsets(ctx context.Context, dataSource string, topics []string) (domain.Offsets, error) {
	rows, err := s.pool.Query(ctx, `SELECT topic, partition, next_offset FROM datasource_offsets WHERE datasource = $1 AND topic = ANY($2)`,
		dataSource, topics)
	if err != nil {
		return nil, fmt.Errorf("read offsets of datasource %q: %w", dataSource, err)
	}
	out := domain.Offsets{}
	var topic string
	var part int32
	var next int64
	if _, err := pgx.ForEachRow(rows, []any{&topic, &part, &next}, func() error {
		out[domain.TP(topic, part)] = next
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read offsets of datasource %q: %w", dataSource, err)
	}
	return out, nil
}

// NextSequenceIDs returns, per task group of a supervisor, one more than the
// highest sequence id ever published, so new sequences never reuse a name.
func (s *Store) NextSequenceIDs(ctx context.Context, supervisorID string) (map[int]int, error) {
	rows, err := s.pool.Query(ctx, `SELECT task_group, max(sequence_id) + 1 FROM published_sequences
		WHERE supervisor_id = $1 GROUP BY task_group`, supervisorID)
	if err != nil {
		return nil, fmt.Errorf("read sequence ids of supervisor %q: %w", supervisorID, err)
	}
	out := map[int]int{}
	var group, next int
	if _, err := pgx.ForEachRow(rows, []any{&group, &next}, func() error {
		out[group] = next
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read sequence ids of supervisor %q: %w", supervisorID, err)
	}
	return out, nil
}

// Segments lists a datasource's used segments by interval.
func (s *Store) Segments(ctx context.Context, dataSource string) ([]Segment, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, datasource, interval_start, interval_end, version, sequence_name, rows, bytes, uri, checksum, coalesce(query_granularity, '')
		FROM segments WHERE datasource = $1 AND used ORDER BY interval_start, id`, dataSource)
	if err != nil {
		return nil, fmt.Errorf("list segments of datasource %q: %w", dataSource, err)
	}
	segs, err := pgx.CollectRows(rows, scanSegment)
	if err != nil {
		return nil, fmt.Errorf("list segments of datasource %q: %w", dataSource, err)
	}
	return segs, nil
}

// SequenceRecord is what a committed publish recorded.
type SequenceRecord struct {
	Start      domain.Offsets
	End        domain.Offsets
	SegmentIDs []string
	Rows       int64
}

// PublishedSequence returns the record of a committed sequence, if any.
func (s *Store) PublishedSequence(ctx context.Context, name string) (SequenceRecord, bool, error) {
	var r SequenceRecord
	err := s.pool.QueryRow(ctx, `SELECT start_offsets, end_offsets, segment_ids, rows FROM published_sequences WHERE sequence_name = $1`,
		name).Scan(&r.Start, &r.End, &r.SegmentIDs, &r.Rows)
	if errors.Is(err, pgx.ErrNoRows) {
		return SequenceRecord{}, false, nil
	}
	if err != nil {
		return SequenceRecord{}, false, fmt.Errorf("read record of sequence %s: %w", name, err)
	}
	return r, true, nil
}
