package protocol

import (
	"encoding/json"
	"time"

	"handoff/internal/domain"
)

// DiscoverInput names the topic to look at; with SupervisorID and
// DataSource set, Discover also reports the committed and latest offsets
// to the worker's metrics (lag and unpublished). Runs that record
// watchVersion use Watch instead.
type DiscoverInput struct {
	Topic string
	// TopicPattern, when set instead of Topic, looks at every topic whose
	// name matches it (domain.IOConfig.TopicPattern).
	TopicPattern string `json:",omitempty"`
	SupervisorID string
	DataSource   string
}

// DiscoverResult lists the topic's partitions and their offset bounds.
type DiscoverResult struct {
	Partitions []domain.Partition
	Earliest   domain.Offsets
	Latest     domain.Offsets
}

// StartOffsetsInput asks where a supervisor's groups must start reading.
type StartOffsetsInput struct {
	SupervisorID      string
	DataSource        string
	Topic             string
	TopicPattern      string `json:",omitempty"`
	UseEarliestOffset bool
	// DropStaging deletes the supervisor's staging first: its groups are
	// laid out afresh, none holds a sequence (activities/staging_drop.go).
	DropStaging bool `json:",omitempty"`
}

// StartOffsetsResult has a start offset for every partition of the topic and
// the next unused sequence id of every group that ever published.
type StartOffsetsResult struct {
	Offsets domain.Offsets
	// Committed holds the offsets that came from Postgres; the others came
	// from Kafka (earliest or latest) because nothing was published yet.
	Committed       domain.Offsets
	NextSequenceIDs map[int]int
}

// ConsumeInput is one chunk to read: [From, Until) per partition, bounded by
// the spec's maxRecordsPerChunk and chunkPeriod.
type ConsumeInput struct {
	Spec         domain.Spec
	Group        int
	SequenceName string
	From         domain.Offsets
	// Until, when set, is the exclusive end per partition (the end offsets
	// of a closed sequence); nothing at or past it is read.
	Until domain.Offsets
	// ParseExceptions counts the unparseable rows the group met before
	// this chunk, against tuningConfig.maxParseExceptions.
	ParseExceptions int64
}

// ConsumeResult says how far the chunk read and where its rows are.
type ConsumeResult struct {
	To          domain.Offsets
	Records     int64
	Rows        int64 // after rollup
	Unparseable int64
	ThrownAway  int64 // late, early or filtered out
	// NoValue counts the records thrown away for a null value (a tombstone)
	// or an empty one (ThrownAway includes them); Markers and Aborted the
	// transaction markers passed and the records of aborted transactions
	// left out, which are neither rows nor thrown away.
	NoValue int64 `json:",omitempty"`
	Markers int64 `json:",omitempty"`
	Aborted int64 `json:",omitempty"`
	// StagingKey names the chunk's staging file; "" when it holds no rows.
	StagingKey string
	Bytes      int64
}

// PublishInput is one closed sequence and the staging files of its chunks.
type PublishInput struct {
	Spec        domain.Spec
	Group       int
	SequenceID  int
	Start       domain.Offsets
	End         domain.Offsets
	StagingKeys []string
	// ClosedAt is when the sequence's end was recorded, for the
	// checkpoint-to-commit latency. Zero when unknown.
	ClosedAt time.Time
	// Notify, when set, asks Publish to tell the supervisor itself once the
	// sequence has committed (nil: the task group tells it).
	Notify *PublishNotify `json:",omitempty"`
}

// PublishNotify is the signal a Publish sends once its sequence has
// committed, whether by this attempt or an earlier one. Notice is the
// signal's payload, a JSON object the workflow wrote; Publish sets its
// "segments" and "rows" members to what the sequence published and leaves
// the rest as it is. A workflow that no longer runs is not told, and the
// publish still succeeds: what it would have learned, a newer run reads
// from the committed offsets.
type PublishNotify struct {
	WorkflowID string
	Signal     string
	Notice     json.RawMessage
}

// PublishResult says what the sequence published.
type PublishResult struct {
	SegmentIDs []string
	Rows       int64
	// AlreadyPublished: the sequence had committed before (a retry whose
	// earlier answer was lost); nothing was written again.
	AlreadyPublished bool
}

// GroupStatesInput lists task-group workflow ids to check.
type GroupStatesInput struct {
	WorkflowIDs []string
}

// GroupStatesResult tells, per workflow id, whether its latest run is
// running. A workflow that never ran counts as not running.
type GroupStatesResult struct {
	Running map[string]bool
	// Closed describes the latest run of each workflow that is not running:
	// how it ended and, when it failed, why.
	Closed map[string]GroupClosed
}

// GroupClosed is how a task group's latest run ended.
type GroupClosed struct {
	Status  string // Completed, Failed, Terminated, TimedOut, Canceled, NotFound
	Failure string // the failure's message, with its error type when it has one
}

// ResetOffsetsInput moves a datasource's stored offsets. Targets maps a
// partition to "earliest", "latest" or a decimal offset.
type ResetOffsetsInput struct {
	DataSource   string
	Topic        string
	TopicPattern string `json:",omitempty"`
	Targets      map[domain.Partition]string
}

// ResetOffsetsResult holds the offsets now stored for the reset partitions.
type ResetOffsetsResult struct {
	Offsets domain.Offsets
}

// ChangedByAutoscaler marks a spec the supervisor's autoscaler made.
const ChangedByAutoscaler = "autoscaler"

// RecordSpecInput appends a spec to a supervisor's history.
type RecordSpecInput struct {
	SupervisorID string
	Spec         domain.Spec
	// ChangedBy is "" (a user) or ChangedByAutoscaler; Reason says why.
	ChangedBy string `json:",omitempty"`
	Reason    string `json:",omitempty"`
	// Direction is the autoscaler's "out" or "in", counted once recorded.
	Direction string `json:",omitempty"`
}

// RecordSpecResult says whether the spec was appended (false: it equals the
// latest recorded one).
type RecordSpecResult struct {
	Recorded bool
	Version  int
}

// TerminateGroupsInput names task-group workflows to end at once.
type TerminateGroupsInput struct {
	WorkflowIDs []string
	Reason      string
}

// TerminateGroupsResult is empty: the workflows are gone.
type TerminateGroupsResult struct{}
