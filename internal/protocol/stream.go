package protocol

import (
	"time"

	"handoff/internal/autoscale"
	"handoff/internal/domain"
)

// ConsumeStreamInput is what one long-running read needs: where to start,
// where to stop (a closed sequence's end), and what closes the open
// sequence, so the stream returns exactly when its group must act.
type ConsumeStreamInput struct {
	Spec         domain.Spec
	Group        int
	SequenceName string
	From         domain.Offsets
	// Until, when set, is the exclusive end per partition (a closed
	// sequence's end offsets); the stream returns once it reached it.
	Until domain.Offsets
	// ParseExceptions counts the unparseable rows the group met before
	// this stream, against tuningConfig.maxParseExceptions.
	ParseExceptions int64
	// WakeKey names this stream for WakeConsume: the group wakes it when
	// it must return (a checkpoint, a stop, new partitions, a rollover).
	WakeKey string
	// Close, set for the open sequence only, holds what the handoff
	// triggers need; the stream returns when one of them holds.
	Close *CloseTriggers
	// MaxRun bounds one stream; past it the stream returns what it read so
	// that a quiet group still records a little history now and then.
	MaxRun time.Duration
	// QuietAfter, when set, makes a stream that read something return once
	// no record arrived for that long and it ran for at least MinRun: the
	// group then records where it is (its status is fresh once a burst is
	// read), at most once per MinRun.
	QuietAfter time.Duration
	MinRun     time.Duration
	// PreviousStopped is when the group's previous stream stopped reading
	// (zero: none known): the gap to this stream's start is the group's
	// read gap (handoff_read_gap_seconds).
	PreviousStopped time.Time `json:",omitzero"`
}

// CloseTriggers is the open sequence as its group knows it when the stream
// starts.
type CloseTriggers struct {
	OpenedAt time.Time
	Rows     int64 // already in the sequence
	Bytes    int64 // of its staged chunks
	// OtherRows are the rows of the group's other unpublished sequences,
	// against maxTotalRows.
	OtherRows int64
	// Progressed: the sequence already holds read records (its handoff
	// period applies even if the stream reads nothing).
	Progressed bool
	// Spread: the group spreads its handoffs by age over the period
	// (domain.HandoffDue). The handoff is due at HandoffAt if the sequence
	// progressed, else on Phase at least half a period after the stream's
	// first record. Without Spread it is due a period after OpenedAt.
	Spread    bool
	HandoffAt time.Time
	Phase     time.Duration
}

// ChunkRef is one staged chunk of a stream.
type ChunkRef struct {
	Key   string
	Rows  int64
	Bytes int64
}

// ConsumeStreamResult is everything the stream read and staged, and why it
// returned. A retried stream resumes from its last heartbeat, which holds
// the same fields.
type ConsumeStreamResult struct {
	To          domain.Offsets
	Chunks      []ChunkRef
	Records     int64
	Rows        int64 // after rollup
	Bytes       int64
	Unparseable int64
	ThrownAway  int64
	// NoValue counts the records thrown away for a null value (a tombstone)
	// or an empty one (ThrownAway includes them); Markers and Aborted the
	// transaction markers passed and the records of aborted transactions
	// left out, which are neither rows nor thrown away.
	NoValue int64 `json:",omitempty"`
	Markers int64 `json:",omitempty"`
	Aborted int64 `json:",omitempty"`
	// FirstRecordAt is when the stream read its first record (zero: none):
	// the sequence's handoff by age counts from there.
	FirstRecordAt time.Time `json:",omitzero"`
	// StoppedAt is when the stream stopped reading.
	StoppedAt time.Time `json:",omitzero"`
	// Reason is why the stream returned: one of the Stream* constants.
	Reason string
}

// Why a stream returned. The first four are handoff triggers.
const (
	StreamMaxRows       = "maxRowsPerSegment"
	StreamMaxBytes      = "maxSequenceBytes"
	StreamMaxTotalRows  = "maxTotalRows"
	StreamHandoffPeriod = "intermediateHandoffPeriod"
	StreamUntil         = "until"       // read to the closed sequence's end
	StreamWoken         = "woken"       // its group asked (WakeConsume)
	StreamCanceled      = "canceled"    // its group cancelled it
	StreamWorkerStop    = "worker-stop" // the worker is shutting down
	StreamMaxRun        = "max-run"     // MaxRun passed
	StreamQuiet         = "quiet"       // read a burst, then nothing for QuietAfter
)

// WakeConsumeInput names the stream to wake.
type WakeConsumeInput struct {
	Key string
}

// WatchInput is what the supervisor knows; Watch returns once what it sees
// differs from it (or MaxRun passed).
type WatchInput struct {
	SupervisorID string
	DataSource   string
	Topic        string
	TopicPattern string `json:",omitempty"`
	// Every is how often Watch looks (ioConfig.period).
	Every  time.Duration
	MaxRun time.Duration
	// FirstLookAfter delays the first look (after a step failed, so a
	// failing supervisor does not spin).
	FirstLookAfter time.Duration
	Known          WatchView
	// Starts is where each partition's first unpublished sequence began:
	// unpublished records count from there before its first publish.
	Starts domain.Offsets
	// AutoScaler, when the spec's autoscaler is on: the watch samples lag
	// and returns with a Scale decision when one is due.
	AutoScaler *WatchAutoScaler `json:",omitempty"`
}

// WatchAutoScaler is what a watch needs to sample lag and judge it.
type WatchAutoScaler struct {
	Config    domain.AutoScalerConfig
	TaskCount int
	// AllowedAt is the earliest time of the next action.
	AllowedAt time.Time
	// Window is the samples taken so far (by earlier watches too).
	Window autoscale.Window
}

// WatchView is one look at a supervisor's world: its topic's partitions,
// whether Kafka answers, which of its groups run, and whether every
// partition has been read to its end.
type WatchView struct {
	Partitions []domain.Partition
	// Problem is why the topic cannot be read ("" when it can), with the
	// error's type (domain.ErrTopicNotFound, or "" for others).
	Problem     string
	ProblemType string
	// Groups maps a task-group workflow id to whether it runs.
	Groups map[string]bool
	// Registry is why a group's read waits for the schema registry (its
	// consume fails with ErrSchemaRegistryUnavailable and is retried), ""
	// when none does.
	Registry string `json:",omitempty"`
	// CaughtUp: every partition's group has read to the latest offset,
	// and no new record arrived, for two looks in a row.
	CaughtUp bool
	// Held are the partitions an open transaction has held for a while,
	// as the groups' streams heartbeat them (activities.HeldReportAfter).
	Held []domain.HeldPartition `json:",omitempty"`
}

// WatchResult is the view that differs from the known one, with what was
// seen at the same look.
type WatchResult struct {
	View WatchView
	// Closed describes each group that was known to run and does not.
	Closed  map[string]GroupClosed
	Latest  domain.Offsets
	Current domain.Offsets // read positions of the groups' running consumes
	// Connected: Kafka answered at least once in this watch.
	Connected bool
	Reason    string // what changed, for logs and tests
	// LagWindow is the autoscaler's samples, the new ones included (nil
	// without an autoscaler).
	LagWindow *autoscale.Window `json:",omitempty"`
	// Scale is the action the samples call for, if one is due.
	Scale *autoscale.Decision `json:",omitempty"`
}
