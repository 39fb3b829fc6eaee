package activities

import (
	"context"
	"fmt"
	"handoff/internal/protocol"
	"io"
	"maps"
	"slices"
	"time"

	"go.temporal.io/sdk/activity"

	"handoff/internal/domain"
	"handoff/internal/pgstore"
	"handoff/internal/segment"
)

// Publish merges the sequence's staging files, writes one segment per
// segment-granularity interval to deep storage, and commits the segments,
// the new offsets and the sequence record in one transaction. Then it
// deletes the staging files. Every step is safe to repeat.
func (a *Activities) Publish(ctx context.Context, in protocol.PublishInput) (protocol.PublishResult, error) {
	name := domain.SequenceName(in.Spec.ID, in.Group, in.SequenceID)
	if rec, ok, err := a.Store.PublishedSequence(ctx, name); err != nil {
		return protocol.PublishResult{}, err
	} else if ok {
		// Committed by an earlier attempt; its staging files may be gone.
		a.deleteStaging(ctx, in.StagingKeys)
		return protocol.PublishResult{SegmentIDs: rec.SegmentIDs, Rows: rec.Rows, AlreadyPublished: true}, nil
	}
	rows, err := a.readStaging(ctx, in.StagingKeys)
	if err != nil {
		return protocol.PublishResult{}, err
	}
	segs, err := a.writeSegments(ctx, in, name, rows)
	if err != nil {
		return protocol.PublishResult{}, err
	}
	pub := pgstore.Publication{
		SequenceName: name, SupervisorID: in.Spec.ID, DataSource: in.Spec.DataSchema.DataSource,
		Topic: in.Spec.IOConfig.Topic, Group: in.Group, SequenceID: in.SequenceID,
		Start: in.Start, End: in.End, Segments: segs, Rows: int64(len(rows)),
	}
	already, err := a.Store.Publish(ctx, pub)
	if err != nil {
		return protocol.PublishResult{}, classify(err)
	}
	if f := a.Faults.AfterPublishCommit; f != nil {
		if err := f(name); err != nil {
			return protocol.PublishResult{}, err
		}
	}
	a.deleteStaging(ctx, in.StagingKeys)
	ids := make([]string, len(segs))
	for i, s := range segs {
		ids[i] = s.ID
	}
	return protocol.PublishResult{SegmentIDs: ids, Rows: pub.Rows, AlreadyPublished: already}, nil
}

func (a *Activities) readStaging(ctx context.Context, keys []string) ([]domain.Row, error) {
	var all []domain.Row
	for _, key := range keys {
		_, rows, err := segment.ReadFile(a.Staging.Path(key))
		if err != nil {
			return nil, fmt.Errorf("read staging file %s: %w", key, err)
		}
		all = append(all, rows...)
		activity.RecordHeartbeat(ctx, key)
	}
	return all, nil
}

// writeSegments writes one Parquet file per interval, rows sorted by time
// then dimensions. Names are deterministic, so a retry overwrites them.
func (a *Activities) writeSegments(ctx context.Context, in protocol.PublishInput, name string, rows []domain.Row) ([]pgstore.Segment, error) {
	gran := in.Spec.DataSchema.GranularitySpec.SegmentGranularity
	ds := in.Spec.DataSchema.DataSource
	dims := in.Spec.DataSchema.DimensionsSpec.Dimensions
	byInterval := map[int64][]domain.Row{}
	for _, r := range rows {
		start := gran.Truncate(time.UnixMilli(r.Time)).UnixMilli()
		byInterval[start] = append(byInterval[start], r)
	}
	var out []pgstore.Segment
	for _, startMs := range slices.Sorted(maps.Keys(byInterval)) {
		part := byInterval[startMs]
		slices.SortFunc(part, compareRows)
		start := time.UnixMilli(startMs).UTC()
		end := gran.Next(start)
		interval := start.Format("20060102T150405Z") + "_" + end.Format("20060102T150405Z")
		key := fmt.Sprintf("%s/%s/%s.parquet", ds, interval, name)
		var info segment.Info
		err := a.Deep.Put(ctx, key, func(w io.Writer) error {
			var err error
			info, err = segment.Write(w, dims, part)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("write segment %s: %w", key, err)
		}
		out = append(out, pgstore.Segment{
			ID: ds + "_" + interval + "_" + name, DataSource: ds, IntervalStart: start, IntervalEnd: end,
			Version: name, SequenceName: name, Rows: info.Rows, Bytes: info.Bytes,
			URI: a.Deep.URI(key), Checksum: info.Checksum,
		})
		activity.RecordHeartbeat(ctx, key)
	}
	return out, nil
}

func (a *Activities) deleteStaging(ctx context.Context, keys []string) {
	for _, key := range keys {
		if err := a.Staging.Delete(ctx, key); err != nil {
			// The sequence is committed; a leftover staging file costs disk,
			// not correctness.
			a.Log.Warn("delete staging file", "key", key, "error", err)
		}
	}
}

func compareRows(x, y domain.Row) int {
	if x.Time != y.Time {
		if x.Time < y.Time {
			return -1
		}
		return 1
	}
	return slices.Compare(x.Dims, y.Dims)
}
