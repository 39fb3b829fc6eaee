package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
)

// maxOffsetResets bounds the automatic resets a supervisor keeps.
const maxOffsetResets = 20

// onOffsetOutOfRange handles a group's report that its next offset of a
// partition is gone (expired, or the topic recreated). The group fails
// right after it reports.
//
// With ioConfig.resetOffsetAutomatically off, the report is recorded:
// the supervisor becomes UNHEALTHY_TASKS (OFFSET_OUT_OF_RANGE), the group's
// status and the recent errors say what to run, and the group is restarted
// with the back-off of any failed group (so it neither spins nor needs a
// restart once someone resets).
//
// With it on, the supervisor resets the partition as Druid does: to the
// earliest offset with useEarliestOffset, else the latest. It is the
// `reset` operation, forced, on that one partition (updateReset): the
// group is ended, the ResetOffsets activity stores the new offset under
// the datasource's publish lock (so no publish interleaves, and a publish
// of the old generation still in flight fails its compare-and-swap), the
// group's unpublished sequences are dropped and it restarts from the
// stored offsets. This keeps every offset invariant:
//   - the stored offsets move only by a publish's compare-and-swap or by
//     this reset, never by a consume;
//   - every sequence still starts at the stored offsets: the restarted
//     group opens its first sequence where Postgres says, so its publish
//     matches; no sequence ever ends before it starts, which a skip inside
//     a sequence would need for a recreated topic;
//   - what the dropped sequences read of other partitions is read again
//     from their stored offsets (nothing published, nothing lost); what
//     they read of this partition is no longer in Kafka, which is the skip
//     the reset records.
func (s *supervisor) onOffsetOutOfRange(ctx workflow.Context, m OffsetOutOfRangeReport) {
	rec, ok := s.c.Groups[m.Group]
	if !ok || !rec.knows(m.Generation) {
		return // from a generation that was replaced: it is handled or moot
	}
	if workflow.GetVersion(ctx, outOfRangeChange, workflow.DefaultVersion, outOfRangeVersion) < outOfRangeVersion {
		return
	}
	o := m.OutOfRange
	o.AutoReset, o.UseEarliest = s.spec.IOConfig.ResetOffsetAutomatically, s.spec.IOConfig.UseEarliestOffset
	if !o.AutoReset {
		rec.OutOfRange = &o
		s.recordError(ctx, fmt.Sprintf("group %d (generation %d) stopped: %s: %s", m.Group, m.Generation, domain.ErrOffsetOutOfRange, o.Error()))
		s.poke() // show UNHEALTHY_TASKS now
		return
	}
	key := o.Key(s.spec.IOConfig)
	from := s.resetBase(rec, key, o.Offset)
	target := o.Target()
	res, err := s.updateReset(ctx, ResetRequest{Partitions: map[domain.Partition]string{key: target}, Force: true})
	if err != nil {
		s.recordError(ctx, fmt.Sprintf("group %d: %s; the automatic reset to %s failed: %s (the group restarts from the stored offsets and finds out again)",
			m.Group, o.Error(), target, err))
		return
	}
	rec.RetryAt = time.Time{} // ended on purpose: restart at once
	to := res.Offsets[key]
	r := OffsetResetRecord{
		Time: now(ctx), Group: m.Group, Partition: key, Wanted: o.Offset, From: from, To: to,
		Recreated: o.Recreated() || to < from, DroppedSequences: res.DroppedSequences,
	}
	if r.Recreated {
		r.Skipped = max(to-o.Earliest, 0)
		r.Message = fmt.Sprintf("partition %d reset automatically: offset %d was past the end of topic %q, which was deleted and recreated; the stored offset moved back from %d (old topic) to %d, the new topic's %s offset: %d offset(s) of the new topic skipped, %d unpublished sequence(s) of group %d dropped and read again",
			o.Partition, o.Offset, o.Topic, from, to, target, r.Skipped, r.DroppedSequences, m.Group)
	} else {
		r.Skipped = to - from
		r.Message = fmt.Sprintf("partition %d reset automatically: offset %d of topic %q had expired (the partition starts at %d); the stored offset moved from %d to %d, its %s offset: %d offset(s) skipped, %d unpublished sequence(s) of group %d dropped and read again",
			o.Partition, o.Offset, o.Topic, o.Earliest, from, to, target, r.Skipped, r.DroppedSequences, m.Group)
	}
	s.c.OffsetResets = append(s.c.OffsetResets, r)
	if n := len(s.c.OffsetResets); n > maxOffsetResets {
		s.c.OffsetResets = s.c.OffsetResets[n-maxOffsetResets:]
	}
	s.recordError(ctx, r.Message)
}

// resetBase is where the group's unpublished reading of partition p
// started: the committed offset, else the start of the first sequence
// holding p, else the offset it wanted.
func (s *supervisor) resetBase(rec *groupRecord, p domain.Partition, wanted int64) int64 {
	if o, ok := s.c.Committed[p]; ok {
		return o
	}
	for _, q := range rec.Sequences {
		if o, ok := q.Start[p]; ok {
			return o
		}
	}
	return wanted
}

// outOfRangeGroups counts the groups stopped on an out-of-range offset.
func (s *supervisor) outOfRangeGroups() int {
	n := 0
	for _, g := range s.c.Groups {
		if g.OutOfRange != nil {
			n++
		}
	}
	return n
}
