package lake

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/jackc/pgx/v5"

	"handoff/internal/domain"
)

// usedSegment is the part of a segments row a backfill needs.
type usedSegment struct {
	URI        string
	Start, End time.Time
}

type rowsQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func usedSegments(ctx context.Context, q rowsQuerier, ds string) ([]usedSegment, error) {
	rows, err := q.Query(ctx, `SELECT uri, interval_start, interval_end FROM segments
		WHERE datasource = $1 AND used ORDER BY interval_start, id`, ds)
	if err != nil {
		return nil, fmt.Errorf("list segments of %q: %w", ds, err)
	}
	segs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (usedSegment, error) {
		var s usedSegment
		err := r.Scan(&s.URI, &s.Start, &s.End)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("list segments of %q: %w", ds, err)
	}
	return segs, nil
}

// storedOffsetsSummary is the summary that says where the datasource's
// offsets stand: SummaryTopic and SummaryOffsets for one topic,
// SummaryTopicOffsets for several.
func storedOffsetsSummary(ctx context.Context, tx pgx.Tx, ds string) (iceberg.Properties, map[string]domain.Offsets, error) {
	rows, err := tx.Query(ctx, `SELECT topic, partition, next_offset FROM datasource_offsets WHERE datasource = $1`, ds)
	if err != nil {
		return nil, nil, fmt.Errorf("read offsets of %q: %w", ds, err)
	}
	byTopic := map[string]domain.Offsets{}
	var topic string
	var part int32
	var next int64
	if _, err := pgx.ForEachRow(rows, []any{&topic, &part, &next}, func() error {
		if byTopic[topic] == nil {
			byTopic[topic] = domain.Offsets{}
		}
		byTopic[topic][domain.P(part)] = next
		return nil
	}); err != nil {
		return nil, nil, fmt.Errorf("read offsets of %q: %w", ds, err)
	}
	summary := iceberg.Properties{}
	switch len(byTopic) {
	case 0:
	case 1:
		for t, o := range byTopic {
			js, err := json.Marshal(o)
			if err != nil {
				return nil, nil, err
			}
			summary[SummaryTopic], summary[SummaryOffsets] = t, string(js)
		}
	default:
		js, err := json.Marshal(byTopic)
		if err != nil {
			return nil, nil, err
		}
		summary[SummaryTopicOffsets] = string(js)
	}
	return summary, byTopic, nil
}
