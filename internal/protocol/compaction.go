package protocol

import (
	"time"

	"handoff/internal/domain"
)

// CompactionPlanInput asks for a round's work; Running are the starts of
// the intervals being compacted, which the plan leaves out and which take
// slots of the config's maxConcurrentCompactions.
type CompactionPlanInput struct {
	DataSource string
	Running    []time.Time
}

// CompactionPlanResult is the config in force and the intervals to
// compact now. With no config recorded, HasConfig is false and there is
// nothing to do.
type CompactionPlanResult struct {
	HasConfig     bool
	Config        domain.CompactionConfig
	ConfigVersion int
	Tasks         []CompactionTask
	// Pending is how many intervals are worth compacting, Tasks included.
	Pending int
	// UsedSegments is how many used segments the datasource has.
	UsedSegments int
}

// CompactionTask is one interval to compact and exactly the segments to
// replace.
type CompactionTask struct {
	Start      time.Time
	End        time.Time
	SegmentIDs []string
	Rows       int64
	Bytes      int64
}

// CompactIntervalInput is one interval's compaction. Name is unique per
// compaction and the same on every retry: the new segments are named
// after it, so a retry overwrites its own files and a retry of a commit
// that went through is recognised.
type CompactIntervalInput struct {
	DataSource string
	Name       string
	Task       CompactionTask
	Config     domain.CompactionConfig
}

// CompactIntervalResult says what the compaction committed.
type CompactIntervalResult struct {
	SegmentsIn  int
	SegmentsOut int
	RowsIn      int64
	RowsOut     int64
	BytesIn     int64
	BytesOut    int64
	// AlreadyDone: an earlier attempt committed (its answer was lost).
	AlreadyDone bool
}

// ApplyRetentionInput names the datasource whose rules to apply.
type ApplyRetentionInput struct {
	DataSource string
}

// ApplyRetentionResult says which rules were in force, what they dropped,
// which unused segments' files the kill deleted and which orphans the
// sweep deleted.
type ApplyRetentionResult struct {
	HasRules    bool
	Version     int
	Dropped     int
	Killed      int
	KilledBytes int64
	// Swept counts the orphaned files the sweep deleted.
	Swept      int
	SweptBytes int64
}
