// Package compact decides what a datasource's compaction does: which
// intervals are worth compacting, which of their segments to read, and how
// many rows each new segment may hold. It does no I/O; the activities read
// the used segments and run what it plans.
package compact

import (
	"cmp"
	"slices"
	"time"

	"handoff/internal/domain"
)

// Segment is one used segment as the planner sees it.
type Segment struct {
	ID    string
	Start time.Time
	End   time.Time
	Rows  int64
	Bytes int64
}

// Task is one interval to compact: exactly the segments to read and
// replace.
type Task struct {
	Start      time.Time
	End        time.Time
	SegmentIDs []string
	Rows       int64
	Bytes      int64
}

// Plan is a round's work: up to the limit of tasks, newest interval first
// (as Druid's compaction policy orders them: recent data is queried most),
// and how many intervals were worth compacting in all.
type Plan struct {
	Tasks   []Task
	Pending int
}

// Full reports whether a segment is at a target already: it is left alone.
func Full(s Segment, cfg domain.CompactionConfig) bool {
	return s.Rows >= cfg.TargetRowsPerSegment || s.Bytes >= cfg.TargetBytesPerSegment
}

// Intervals plans a round over a datasource's used segments at now. An
// interval is worth compacting when it ends at least
// cfg.SkipOffsetFromLatest before now and holds two or more segments below
// the targets; its task reads those and leaves the full ones. Intervals in
// skip (by start) are left out: they are being compacted already.
func Intervals(segs []Segment, cfg domain.CompactionConfig, now time.Time, limit int, skip map[time.Time]bool) Plan {
	type key struct{ start, end int64 }
	byInterval := map[key]*Task{}
	horizon := now.Add(-cfg.SkipOffsetFromLatest.D())
	for _, s := range segs {
		if s.End.After(horizon) || Full(s, cfg) || skip[s.Start.UTC()] {
			continue
		}
		k := key{s.Start.UnixNano(), s.End.UnixNano()}
		t := byInterval[k]
		if t == nil {
			t = &Task{Start: s.Start.UTC(), End: s.End.UTC()}
			byInterval[k] = t
		}
		t.SegmentIDs = append(t.SegmentIDs, s.ID)
		t.Rows += s.Rows
		t.Bytes += s.Bytes
	}
	var tasks []Task
	for _, t := range byInterval {
		if len(t.SegmentIDs) < 2 {
			continue
		}
		slices.Sort(t.SegmentIDs)
		tasks = append(tasks, *t)
	}
	slices.SortFunc(tasks, func(a, b Task) int { return b.Start.Compare(a.Start) })
	p := Plan{Pending: len(tasks)}
	limit = max(limit, 0)
	if limit < len(tasks) {
		tasks = tasks[:limit]
	}
	p.Tasks = tasks
	return p
}

// RowsPerSegment is how many rows each segment a task writes may hold: the
// row target, or fewer when the input's bytes per row say the byte target
// comes first. The compacted interval then holds at most
// ⌈rows / RowsPerSegment⌉ segments.
func RowsPerSegment(t Task, cfg domain.CompactionConfig) int64 {
	n := cfg.TargetRowsPerSegment
	if t.Rows > 0 && t.Bytes > 0 {
		perRow := max(t.Bytes/t.Rows, 1)
		n = min(n, max(cfg.TargetBytesPerSegment/perRow, 1))
	}
	return cmp.Or(n, 1)
}
