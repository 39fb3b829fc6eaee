package workflows

import (
	"time"

	"handoff/internal/domain"
)

// SignalOffsetOutOfRange (OffsetOutOfRangeReport): a task group tells its
// supervisor that a consume failed on an offset its partition no longer
// holds; the group fails right after.
const SignalOffsetOutOfRange = "offset-out-of-range"

// DetailOffsetOutOfRange is the detailed state of an UNHEALTHY_TASKS
// supervisor with a group stopped on an out-of-range offset; the group's
// status and the recent errors say what to run.
const DetailOffsetOutOfRange = "OFFSET_OUT_OF_RANGE"

// OffsetOutOfRangeReport is one group's out-of-range offset.
type OffsetOutOfRangeReport struct {
	Group             int `json:"group"`
	Generation        int `json:"generation"`
	domain.OutOfRange `json:"outOfRange"`
}

// OffsetResetRecord is one automatic reset of a partition whose offset was
// out of range (ioConfig.resetOffsetAutomatically).
type OffsetResetRecord struct {
	Time      time.Time        `json:"time"`
	Group     int              `json:"group"`
	Partition domain.Partition `json:"partition"`
	// Wanted is the offset the group could not read.
	Wanted int64 `json:"wanted"`
	// From is the stored offset the reset moved (where the group's
	// unpublished reading started); To is the stored offset now, where the
	// group reads next: the partition's earliest with useEarliestOffset,
	// else its latest.
	From int64 `json:"from"`
	To   int64 `json:"to"`
	// Recreated: the topic was deleted and recreated, so To is an offset of
	// the new topic and the offsets moved backwards.
	Recreated bool `json:"recreated,omitempty"`
	// Skipped counts the offsets never published: To - From when moving
	// forward (records expired); for a recreated topic, the new topic's
	// offsets before To (To - its earliest when found out), the old
	// topic's unpublished rest being gone with it.
	Skipped int64 `json:"skipped"`
	// DroppedSequences: the group's unpublished sequences, dropped; their
	// other partitions are read again from the stored offsets.
	DroppedSequences int    `json:"droppedSequences"`
	Message          string `json:"message"`
}
