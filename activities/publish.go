package activities

import (
	"context"
	"log/slog"
	"time"

	"handoff/internal/domain"
	"handoff/internal/pgstore"
	"handoff/internal/protocol"
	"handoff/internal/workload"
)

// mergeFanIn bounds the staging files a publish holds open at once; more
// chunks are merged in several passes. An open run holds one block (256
// KiB raw) and its decoded rows, about 1 MiB, so 32 cover a 3,200,000-row
// sequence of 100,000-row chunks in one pass; see
// TestPublishOfTwoMillionRowsStaysInBoundedMemory for the peak heap.
const mergeFanIn = 32

// Publish merges the sequence's staging files (sorted, rolled up again
// across chunks), writes one segment per segment-granularity interval to
// deep storage, and commits the segments, the new offsets and the sequence
// record in one transaction. Then it deletes the staging files and, when
// asked (in.Notify), tells the supervisor. Every step is safe to repeat.
func (a *Activities) Publish(ctx context.Context, in protocol.PublishInput) (res protocol.PublishResult, err error) {
	start := time.Now()
	name := domain.SequenceName(in.Spec.ID, in.Group, in.SequenceID)
	run, err := a.begin(ctx, workload.Work{
		Kind: workload.Publish, Supervisor: in.Spec.ID, Group: in.Group,
		Partitions: in.Start.Partitions(), Sequence: name, Offsets: in.End,
	})
	if err != nil {
		return protocol.PublishResult{}, err
	}
	defer func() { run.end(err) }()
	run.state(workload.StateMerging)
	if rec, ok, err := a.Store.PublishedSequence(ctx, name); err != nil {
		return protocol.PublishResult{}, err
	} else if ok {
		// Committed by an earlier attempt; its staging files may be gone.
		a.deleteStaging(ctx, run.log, in.Spec.ID, name)
		if err := a.notify(ctx, run.log, in.Notify, len(rec.SegmentIDs), rec.Rows); err != nil {
			return protocol.PublishResult{}, err
		}
		return protocol.PublishResult{SegmentIDs: rec.SegmentIDs, Rows: rec.Rows, AlreadyPublished: true}, nil
	}
	iw, err := a.writeSegments(ctx, in, name, run)
	if err != nil {
		return protocol.PublishResult{}, classify(err)
	}
	segs, rows := iw.out, iw.rows
	run.state(workload.StateCommitting)
	pub := pgstore.Publication{
		SequenceName: name, SupervisorID: in.Spec.ID, DataSource: in.Spec.DataSchema.DataSource,
		Topic: in.Spec.IOConfig.Topic, Pattern: in.Spec.IOConfig.TopicPattern, Group: in.Group, SequenceID: in.SequenceID,
		Start: in.Start, End: in.End, Segments: segs, Rows: rows,
	}
	switch {
	case iw.ids != nil:
		pub.Table = a.tableCommit(in, name, iw.files)
	case iw.tableAwaited:
		pub.Table = a.tableAwaited(pub.DataSource)
	}
	already, err := a.Store.Publish(ctx, pub)
	if err != nil {
		return protocol.PublishResult{}, classify(err)
	}
	if iw.ids != nil && !already {
		a.maintainTable(ctx, run.log, pub.DataSource)
	}
	if f := a.Faults.AfterPublishCommit; f != nil {
		if err := f(name); err != nil {
			return protocol.PublishResult{}, err
		}
	}
	a.deleteStaging(ctx, run.log, in.Spec.ID, name)
	ids := make([]string, len(segs))
	var bytes int64
	for i, s := range segs {
		ids[i], bytes = s.ID, bytes+s.Bytes
	}
	if a.Metrics != nil && !already {
		var handoff time.Duration
		if !in.ClosedAt.IsZero() {
			handoff = time.Since(in.ClosedAt)
		}
		a.Metrics.Published(in.Spec.ID, rows, int64(len(segs)), bytes, time.Since(start), handoff)
	}
	if err := a.notify(ctx, run.log, in.Notify, len(segs), rows); err != nil {
		return protocol.PublishResult{}, err
	}
	return protocol.PublishResult{SegmentIDs: ids, Rows: rows, AlreadyPublished: already}, nil
}

// deleteStaging removes a committed sequence's staging directory, which
// holds every chunk named in keys (stagingKey puts them there) and what
// no key names: a worker's write cut short by a kill, the chunks of an
// earlier generation that read the sequence with other boundaries before
// it failed. Nothing writes there once the sequence is committed: its
// offsets are behind every group's.
func (a *Activities) deleteStaging(ctx context.Context, log *slog.Logger, supervisorID, sequenceName string) {
	dir := stagingDir(supervisorID, sequenceName)
	if err := a.Staging.DeleteDir(ctx, dir); err != nil {
		// The sequence is committed; leftover staging files cost disk, not
		// correctness.
		log.Warn("delete staging directory", "dir", dir, "error", err)
	}
}
