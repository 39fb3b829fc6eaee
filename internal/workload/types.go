package workload

import (
	"time"

	"handoff/internal/domain"
)

// Kind is the kind of activity a slot is for.
type Kind string

// Kinds of bounded work.
const (
	Consume Kind = "consume"
	Publish Kind = "publish"
	// Compact: a compaction of one interval, with slots of its own so that
	// ingestion never waits for compaction.
	Compact Kind = "compact"
)

// States an activity reports.
const (
	StateWaitingForSlot   = "waiting for a slot"
	StateWaitingForMemory = "waiting for memory"
	StateStarted          = "started" // holds its slot
	StateReading          = "reading"
	StateWritingChunk     = "writing chunk"
	StateMerging          = "merging"
	StateCommitting       = "committing"
)

// Limits bound the work of one worker. In JSON CheckEvery is a string
// such as "250ms" (see json.go).
type Limits struct {
	// Consume is how many consume activities run at once. Default 4.
	Consume int `json:"consume"`
	// Publish is how many publish activities run at once. Default 2.
	Publish int `json:"publish"`
	// Compact is how many compactions run at once. Default 1.
	Compact int `json:"compact"`
	// CompactShare: while ingestion makes progress on this worker (a
	// consume or publish reported rows within IngestBusyWindow), a
	// compaction works at most this share of its time and sleeps the
	// rest, so that the worker's cores go to ingestion first. Default
	// 0.5; 1 never paces.
	CompactShare float64 `json:"compactShare"`
	// MemoryLimit is the heap size push-back is measured against (bytes);
	// 0 takes the Go runtime's limit (GOMEMLIMIT / debug.SetMemoryLimit)
	// when set, else disables push-back. Default 0.
	MemoryLimit int64 `json:"memoryLimit"`
	// PushBackFraction: new consume work waits while the heap is above this
	// fraction of MemoryLimit. Default 0.8.
	PushBackFraction float64 `json:"pushBackFraction"`
	// CheckEvery is how often the memory monitor samples the heap. Default
	// 250ms.
	CheckEvery time.Duration `json:"checkEvery"`
}

// Work describes one running activity.
type Work struct {
	ID         string             `json:"id"` // workflow id / activity id
	Kind       Kind               `json:"kind"`
	Supervisor string             `json:"supervisor"`
	Group      int                `json:"group"`
	Partitions []domain.Partition `json:"partitions"`
	Sequence   string             `json:"sequence"`
	State      string             `json:"state"`
	StartedAt  time.Time          `json:"startedAt"`
	StateSince time.Time          `json:"stateSince"`
	Offsets    domain.Offsets     `json:"offsets,omitempty"` // progress: next offset per partition
	Rows       int64              `json:"rows"`
	Bytes      int64              `json:"bytes"` // held in memory now
	Attempt    int32              `json:"attempt"`
}

// Failure is one recent failed activity.
type Failure struct {
	Time  time.Time `json:"time"`
	Work  Work      `json:"work"`
	Error string    `json:"error"`
}

// Memory is the monitor's last reading. In JSON PushBackTotal is a string
// such as "1.5s" (see json.go).
type Memory struct {
	HeapBytes     uint64        `json:"heapBytes"`
	Limit         int64         `json:"limit"`         // 0: push-back disabled
	Threshold     int64         `json:"threshold"`     // push-back above this
	PushingBack   bool          `json:"pushingBack"`   // new consume work waits
	PushBackSince time.Time     `json:"pushBackSince"` // zero when not
	PushBackTotal time.Duration `json:"pushBackTotal"` // time spent pushing back
}

// Snapshot is the tracker's state at one moment.
type Snapshot struct {
	Time           time.Time `json:"time"`
	Active         []Work    `json:"active"` // sorted by StartedAt
	Limits         Limits    `json:"limits"`
	InFlightBytes  int64     `json:"inFlightBytes"`
	Memory         Memory    `json:"memory"`
	RecentFailures []Failure `json:"recentFailures"` // latest last, at most 20
}
