package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"handoff/internal/domain"
)

// Segment is one row of the segments table.
type Segment struct {
	ID            string
	DataSource    string
	IntervalStart time.Time
	IntervalEnd   time.Time
	Version       string
	SequenceName  string
	Rows          int64
	Bytes         int64
	URI           string
	Checksum      string
	// QueryGranularity is what the rows' times are truncated to; empty
	// when not recorded (segments written before it was).
	QueryGranularity domain.Granularity
}

// scanSegment reads a row of the columns id, datasource, interval_start,
// interval_end, version, sequence_name, rows, bytes, uri, checksum,
// coalesce(query_granularity, ”).
func scanSegment(r pgx.CollectableRow) (Segment, error) {
	var g Segment
	err := r.Scan(&g.ID, &g.DataSource, &g.IntervalStart, &g.IntervalEnd, &g.Version, &g.SequenceName, &g.Rows, &g.Bytes, &g.URI, &g.Checksum, &g.QueryGranularity)
	return g, err
}

// queueInsertSegment adds the insert of a new used segment to batch.
func queueInsertSegment(batch *pgx.Batch, seg Segment) {
	batch.Queue(`INSERT INTO segments (id, datasource, interval_start, interval_end, version, sequence_name, rows, bytes, uri, checksum, query_granularity)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, NULLIF($11, ''))`,
		seg.ID, seg.DataSource, seg.IntervalStart, seg.IntervalEnd, seg.Version, seg.SequenceName, seg.Rows, seg.Bytes, seg.URI, seg.Checksum, string(seg.QueryGranularity))
}

// Publication is everything one publish commits.
type Publication struct {
	SequenceName string
	SupervisorID string
	DataSource   string
	// Topic is the spec's topic; empty with a topicPattern, whose
	// partitions name their topics (Pattern is then recorded instead).
	Topic      string
	Pattern    string
	Group      int
	SequenceID int
	Start      domain.Offsets
	End        domain.Offsets
	Segments   []Segment
	Rows       int64
	// Table, when set, runs inside the transaction after the offsets check
	// passed and before anything is written, holding the datasource's lock:
	// the table commit that must happen with the offsets or not at all.
	// after is every stored offset of the topic once this commits.
	Table func(ctx context.Context, tx pgx.Tx, after domain.Offsets) error
}

// Publish commits the segments, the new offsets and the sequence record in
// one transaction. The stored offsets of every partition must equal the
// sequence's start (a partition with no stored offset accepts any start);
// otherwise it returns a *MismatchError and commits nothing. If the sequence
// is already recorded with the same offsets, it commits nothing and reports
// alreadyPublished: that is the replay of a publish whose answer was lost.
func (s *Store) Publish(ctx context.Context, p Publication) (alreadyPublished bool, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// Publishes of one datasource are serialized, so the offset checks
		// below see every commit before them, including offset rows that do
		// not exist yet.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('handoff.datasource:' || $1, 0))`, p.DataSource); err != nil {
			return fmt.Errorf("lock datasource %q: %w", p.DataSource, err)
		}
		done, err := recorded(ctx, tx, p)
		if err != nil || done {
			alreadyPublished = done
			return err
		}
		stored, err := checkOffsets(ctx, tx, p)
		if err != nil {
			return err
		}
		if p.Table != nil {
			if err := p.Table(ctx, tx, offsetsAfter(p, stored)); err != nil {
				return err
			}
		}
		return commitPublication(ctx, tx, p)
	})
	if err != nil {
		return false, fmt.Errorf("publish sequence %s: %w", p.SequenceName, err)
	}
	return alreadyPublished, nil
}

func recorded(ctx context.Context, tx pgx.Tx, p Publication) (bool, error) {
	var start, end domain.Offsets
	err := tx.QueryRow(ctx, `SELECT start_offsets, end_offsets FROM published_sequences WHERE sequence_name = $1`,
		p.SequenceName).Scan(&start, &end)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read sequence record: %w", err)
	}
	if !start.Equal(p.Start) || !end.Equal(p.End) {
		return false, fmt.Errorf("%w: recorded [%s → %s], this publish [%s → %s]",
			ErrSequenceConflict, start, end, p.Start, p.End)
	}
	return true, nil
}

// topicOf is the topic a partition of the publication is stored under.
func (p Publication) topicOf(part domain.Partition) string {
	if part.Topic != "" {
		return part.Topic
	}
	return p.Topic
}

// keyOf is how a stored (topic, partition) row is named in the
// publication's offsets: by number alone for the spec's own topic.
func (p Publication) keyOf(topic string, part int32) domain.Partition {
	if p.Topic != "" && topic == p.Topic {
		return domain.P(part)
	}
	return domain.TP(topic, part)
}

// recordedTopic is what published_sequences.topic holds: the topic, or
// the pattern between slashes.
func (p Publication) recordedTopic() string {
	if p.Topic == "" && p.Pattern != "" {
		return "/" + p.Pattern + "/"
	}
	return p.Topic
}

// checkOffsets compares the stored offsets of the sequence's partitions
// with its start and returns every stored offset of the topic (with a
// topicPattern: of every topic of the datasource).
func checkOffsets(ctx context.Context, tx pgx.Tx, p Publication) (domain.Offsets, error) {
	rows, err := tx.Query(ctx, `SELECT topic, partition, next_offset FROM datasource_offsets
		WHERE datasource = $1 AND ($2 = '' OR topic = $2) FOR UPDATE`,
		p.DataSource, p.Topic)
	if err != nil {
		return nil, fmt.Errorf("read offsets: %w", err)
	}
	stored := domain.Offsets{}
	var topic string
	var part int32
	var next int64
	if _, err := pgx.ForEachRow(rows, []any{&topic, &part, &next}, func() error {
		stored[p.keyOf(topic, part)] = next
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read offsets: %w", err)
	}
	for _, part := range p.Start.Partitions() {
		if cur, ok := stored[part]; ok && cur != p.Start[part] {
			return nil, &MismatchError{DataSource: p.DataSource, Topic: p.topicOf(part), Partition: part.Partition, Stored: cur, Start: p.Start[part]}
		}
	}
	return stored, nil
}

// offsetsAfter is stored with the sequence's end offsets applied.
func offsetsAfter(p Publication, stored domain.Offsets) domain.Offsets {
	after := domain.Offsets{}
	for part, off := range stored {
		after[part] = off
	}
	for part, off := range p.End {
		after[part] = off
	}
	return after
}

func commitPublication(ctx context.Context, tx pgx.Tx, p Publication) error {
	ids := make([]string, 0, len(p.Segments))
	batch := &pgx.Batch{}
	for _, seg := range p.Segments {
		ids = append(ids, seg.ID)
		queueInsertSegment(batch, seg)
	}
	for _, part := range p.End.Partitions() {
		batch.Queue(`INSERT INTO datasource_offsets (datasource, topic, partition, next_offset) VALUES ($1, $2, $3, $4)
			ON CONFLICT (datasource, topic, partition) DO UPDATE SET next_offset = EXCLUDED.next_offset, updated_at = now()`,
			p.DataSource, p.topicOf(part), part.Partition, p.End[part])
	}
	start, _ := json.Marshal(p.Start)
	end, _ := json.Marshal(p.End)
	batch.Queue(`INSERT INTO published_sequences (sequence_name, supervisor_id, datasource, topic, task_group, sequence_id, start_offsets, end_offsets, segment_ids, rows)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		p.SequenceName, p.SupervisorID, p.DataSource, p.recordedTopic(), p.Group, p.SequenceID, start, end, ids, p.Rows)
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("write segments, offsets and sequence record: %w", err)
	}
	return nil
}
