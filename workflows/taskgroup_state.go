package workflows

import (
	"time"

	"handoff/internal/domain"
)

// TaskGroupInput starts (or continues) one task group.
type TaskGroupInput struct {
	Spec       domain.Spec        `json:"spec"`
	Group      int                `json:"group"`
	Generation int                `json:"generation"`
	Partitions []domain.Partition `json:"partitions"`
	// Sequences are the group's recorded sequences in order: closed ones
	// (End set) still to be read and published, and at most one open one,
	// last.
	Sequences []domain.Sequence `json:"sequences"`
	// Stopping starts the group already stopping: it reads and publishes
	// its closed sequences, then completes.
	Stopping bool `json:"stopping,omitempty"`
	// NextSequenceID is the id the supervisor gives the group's next
	// sequence (0 from an older supervisor).
	NextSequenceID int `json:"nextSequenceId,omitempty"`
	// Carry is nil on first start; it holds the state carried across
	// continue-as-new.
	Carry *TaskGroupCarry `json:"carry,omitempty"`
}

// TaskGroupCarry is a task group's state carried across continue-as-new.
type TaskGroupCarry struct {
	Sequences []groupSequence `json:"sequences"`
	Position  domain.Offsets  `json:"position"`
	WantClose string          `json:"wantClose,omitempty"`
	Requested bool            `json:"requested,omitempty"`
	Stopping  bool            `json:"stopping,omitempty"`
	// ParseExceptions counts unparseable rows met by this generation.
	ParseExceptions int64 `json:"parseExceptions,omitempty"`
	// Unreported is what the run read since its last progress report: the
	// next run reports it first, so no read count is lost at the boundary.
	Unreported ReadTotals `json:"unreported,omitzero"`
	// NextSequenceID is the id the supervisor gives the next sequence.
	NextSequenceID int `json:"nextSequenceId,omitempty"`
}

// groupSequence is a sequence as its group tracks it: the staging files of
// the chunks read into it so far, and its row count.
type groupSequence struct {
	domain.Sequence
	Chunks   []string  `json:"chunks,omitempty"`
	Rows     int64     `json:"rows"`
	Bytes    int64     `json:"bytes,omitempty"` // of its staged chunks
	OpenedAt time.Time `json:"openedAt"`
	ClosedAt time.Time `json:"closedAt,omitzero"`
	// FirstReadAt is when the group first saw the sequence's position move
	// (zero: not yet): its handoff by age counts from there.
	FirstReadAt time.Time `json:"firstReadAt,omitzero"`
}
