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
	// Grain is the query granularity its rows' times are truncated to
	// (empty: not recorded, taken as none).
	Grain domain.Granularity
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

// Full reports whether a segment is at a target already: it is left alone
// unless it needs a re-rollup.
func Full(s Segment, cfg domain.CompactionConfig) bool {
	return s.Rows >= cfg.TargetRowsPerSegment || s.Bytes >= cfg.TargetBytesPerSegment
}

// NeedsRerollup reports whether the config re-rolls up to a granularity
// the segment's rows are not at yet (a segment at that granularity or a
// coarser one is done: it is not compacted again for it).
func NeedsRerollup(s Segment, cfg domain.CompactionConfig) bool {
	return cfg.QueryGranularity != "" && !s.Grain.Covers(cfg.QueryGranularity)
}

// Grain is the query granularity a task's output rows are at: the
// config's re-rollup granularity, else the one all its inputs share, else
// unknown (empty).
func Grain(inputs []domain.Granularity, cfg domain.CompactionConfig) domain.Granularity {
	if cfg.QueryGranularity != "" {
		return cfg.QueryGranularity
	}
	for _, g := range inputs {
		if g != inputs[0] {
			return ""
		}
	}
	if len(inputs) == 0 {
		return ""
	}
	return inputs[0]
}

// Intervals plans a round over a datasource's used segments at now. An
// interval is worth compacting when it ends at least
// cfg.SkipOffsetFromLatest before now and holds two or more segments below
// the targets, or one that needs a re-rollup (NeedsRerollup); its task
// reads those and leaves the full ones that need none. Intervals in skip
// (by start) are left out: they are being compacted already.
func Intervals(segs []Segment, cfg domain.CompactionConfig, now time.Time, limit int, skip map[time.Time]bool) Plan {
	type key struct{ start, end int64 }
	byInterval := map[key]*Task{}
	reroll := map[key]bool{}
	horizon := now.Add(-cfg.SkipOffsetFromLatest.D())
	for _, s := range segs {
		if s.End.After(horizon) || skip[s.Start.UTC()] {
			continue
		}
		needs := NeedsRerollup(s, cfg)
		if Full(s, cfg) && !needs {
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
		reroll[k] = reroll[k] || needs
	}
	var tasks []Task
	for k, t := range byInterval {
		if len(t.SegmentIDs) < 2 && !reroll[k] {
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
