package workflows

import (
	"fmt"
	"time"

	"handoff/internal/domain"
)

// TaskQueue is the one task queue that workers poll and starters target.
const TaskQueue = "handoff"

// Workflow type names, registered by the worker and started by the CLI.
const (
	SupervisorWorkflowName = "Supervisor"
	TaskGroupWorkflowName  = "TaskGroup"
)

// SupervisorWorkflowID is the workflow id of a supervisor.
func SupervisorWorkflowID(supervisorID string) string { return "supervisor/" + supervisorID }

// TaskGroupWorkflowID is the workflow id of one of a supervisor's groups.
func TaskGroupWorkflowID(supervisorID string, group int) string {
	return fmt.Sprintf("supervisor/%s/group-%d", supervisorID, group)
}

// Signals users send to a supervisor.
const (
	// SignalCheckpoint (CheckpointSignal) closes the open sequence of every
	// listed group (all when none are listed) and publishes it.
	SignalCheckpoint = "checkpoint"
	// SignalStop (StopSignal) closes and publishes every open sequence, then
	// completes the supervisor.
	SignalStop = "stop"
)

// Signals task groups send to their supervisor.
const (
	SignalCheckpointRequest = "checkpoint-request" // CheckpointRequest
	SignalSequencePublished = "sequence-published" // SequencePublished
	SignalGroupFinished     = "group-finished"     // GroupFinished
)

// Signals a supervisor sends to a task group.
const (
	SignalGroupCheckpoint = "checkpoint"      // GroupCheckpoint
	SignalGroupStop       = "stop"            // no payload
	SignalSetEndOffsets   = "set-end-offsets" // SetEndOffsets
)

// QueryStatus returns a supervisor's SupervisorStatus, or a task group's
// TaskGroupStatus.
const QueryStatus = "status"

// TaskGroupStatus is a task group's answer to QueryStatus.
type TaskGroupStatus struct {
	Group      int `json:"group"`
	Generation int `json:"generation"`
	// Position is the next offset the group reads per partition.
	Position  domain.Offsets   `json:"position"`
	Sequences []SequenceStatus `json:"sequences"`
	Stopping  bool             `json:"stopping"`
}

// SequenceStatus is one sequence as its group sees it.
type SequenceStatus struct {
	domain.Sequence
	Rows   int64 `json:"rows"`
	Chunks int   `json:"chunks"`
}

// CheckpointSignal asks for a checkpoint of some groups (nil: all).
type CheckpointSignal struct {
	Groups []int `json:"groups,omitempty"`
}

// StopSignal asks a supervisor to stop gracefully.
type StopSignal struct{}

// Reasons a group asks to close its open sequence.
const (
	ReasonUser             = "user"
	ReasonStop             = "stop"
	ReasonMaxRows          = "maxRowsPerSegment"
	ReasonMaxTotalRows     = "maxTotalRows"
	ReasonMaxSequenceBytes = "maxSequenceBytes"
	ReasonTaskDuration     = "taskDuration"
	ReasonHandoff          = "intermediateHandoffPeriod"
)

// CheckpointRequest is a group's ask to close SequenceID at Offsets.
type CheckpointRequest struct {
	Group      int            `json:"group"`
	Generation int            `json:"generation"`
	SequenceID int            `json:"sequenceId"`
	Offsets    domain.Offsets `json:"offsets"`
	Reason     string         `json:"reason"`
	// NextSequenceID proposes the id of the next sequence, which the group
	// already reads into (0: none proposed; taskgroup_early.go).
	NextSequenceID int `json:"nextSequenceId,omitempty"`
	// Progress is the group's progress report, sent with the request
	// instead of as a signal of its own (nil from an older group).
	Progress *GroupProgress `json:"progress,omitempty"`
	// ClosedByGroup are the sequences before SequenceID that the group
	// closed by itself and has not published yet, oldest first
	// (taskgroup_selfclose.go): the supervisor records them first.
	ClosedByGroup []domain.Sequence `json:"closedByGroup,omitempty"`
}

// SetEndOffsets is the supervisor's answer to a CheckpointRequest: the
// sequence ends at End and the next one, NextSequenceID, starts there.
type SetEndOffsets struct {
	SequenceID     int            `json:"sequenceId"`
	End            domain.Offsets `json:"end"`
	NextSequenceID int            `json:"nextSequenceId"`
}

// GroupCheckpoint asks a group to close its open sequence now.
type GroupCheckpoint struct {
	Reason string `json:"reason"`
}

// SequencePublished tells the supervisor that a sequence committed.
type SequencePublished struct {
	Group      int            `json:"group"`
	Generation int            `json:"generation"`
	SequenceID int            `json:"sequenceId"`
	End        domain.Offsets `json:"end"`
	Segments   int            `json:"segments"`
	Rows       int64          `json:"rows"`
	// Closed is set on the notice a Publish sends for a group whose run
	// records selfCloseVersion: the group closed the sequence at End by
	// itself, and the supervisor records that boundary if it has not yet
	// (taskgroup_selfclose.go).
	Closed *ClosedByGroup `json:"closed,omitempty"`
	// Progress is the group's progress report, sent with that notice.
	Progress *GroupProgress `json:"progress,omitempty"`
}

// ClosedByGroup says what followed a sequence its group closed by itself.
type ClosedByGroup struct {
	// NextSequenceID is the sequence the group read on into, starting at
	// the closed one's end (0: none).
	NextSequenceID int `json:"nextSequenceId,omitempty"`
}

// GroupFinished tells the supervisor a group completed after a stop.
type GroupFinished struct {
	Group      int `json:"group"`
	Generation int `json:"generation"`
}

// Supervisor states, as Druid names them.
const (
	StatePending             = "PENDING"
	StateRunning             = "RUNNING"
	StateIdle                = "IDLE"
	StateSuspended           = "SUSPENDED"
	StateStopping            = "STOPPING"
	StateStopped             = "STOPPED"
	StateUnhealthySupervisor = "UNHEALTHY_SUPERVISOR"
	StateUnhealthyTasks      = "UNHEALTHY_TASKS"
)

// SupervisorStatus is the answer to QueryStatus.
type SupervisorStatus struct {
	ID         string `json:"id"`
	DataSource string `json:"dataSource"`
	// Topic is the spec's topic, or its topicPattern between slashes.
	Topic string `json:"topic"`
	// Topics, with a topicPattern, are the matching topics read now;
	// DeletedTopics are those that were deleted (supervisor_topics.go).
	Topics        []string       `json:"topics,omitempty"`
	DeletedTopics []DeletedTopic `json:"deletedTopics,omitempty"`
	State         string         `json:"state"`
	// DetailedState says more: e.g. LOST_CONTACT_WITH_STREAM, SUSPENDING,
	// APPLYING_SPEC.
	DetailedState string             `json:"detailedState"`
	Spec          domain.Spec        `json:"spec"`
	PendingSpec   bool               `json:"pendingSpec,omitempty"`
	Partitions    []domain.Partition `json:"partitions"`
	Groups        []GroupStatus      `json:"groups"`
	Committed     domain.Offsets     `json:"committedOffsets"`
	// Current is how far the groups have read (not all of it published);
	// a partition nothing was read from yet is at its committed offset.
	Current domain.Offsets `json:"currentOffsets"`
	// Latest is each partition's log end as last read from Kafka, at
	// LatestAt (zero: not known), never below Current: a partition whose
	// latest was read before its group got past it shows Current and is
	// listed in LatestRaised.
	Latest       domain.Offsets     `json:"latestOffsets"`
	LatestAt     time.Time          `json:"latestAt,omitzero"`
	LatestRaised []domain.Partition `json:"latestRaised,omitempty"`
	// PartitionLag is latest − current: records in Kafka not read yet
	// (Druid's lag); Lag sums it. Figures of internal/lagview.
	PartitionLag map[domain.Partition]int64 `json:"partitionLag"`
	Lag          int64                      `json:"aggregateLag"`
	// PartitionUnpublished is current − committed (before a partition's
	// first publish, − where reading began): records read, not published
	// yet; Unpublished sums it.
	PartitionUnpublished map[domain.Partition]int64 `json:"partitionUnpublished"`
	Unpublished          int64                      `json:"aggregateUnpublished"`
	Read                 ReadTotals                 `json:"read"`
	Published            PublishTotals              `json:"published"`
	RecentErrors         []ErrorRecord              `json:"recentErrors"`
	// OffsetResets are the latest automatic resets of out-of-range
	// offsets (ioConfig.resetOffsetAutomatically), oldest first.
	OffsetResets []OffsetResetRecord `json:"offsetResets,omitempty"`
	// Autoscaler is the lag-based autoscaler's figures, when it is on.
	Autoscaler *AutoscalerStatus `json:"autoscaler,omitempty"`
	// IsolationLevel is what the groups read at: read_committed (the
	// default) or read_uncommitted (ioConfig.consumerProperties).
	IsolationLevel string `json:"isolationLevel"`
	// Held are the partitions an open transaction has held for at least
	// protocol.HeldReportAfter: read to their last stable offset while
	// their log goes on.
	Held []domain.HeldPartition `json:"heldByOpenTransaction,omitempty"`
}

// GroupStatus describes one task group.
type GroupStatus struct {
	Group      int                `json:"group"`
	WorkflowID string             `json:"workflowId"`
	Generation int                `json:"generation"`
	Partitions []domain.Partition `json:"partitions"`
	// Sequences are the open sequence and those publishing, with the rows
	// read into each as last reported.
	Sequences []SequenceStatus `json:"sequences"`
	Running   bool             `json:"running"`
	Failures  int              `json:"failures"`
	// OutOfRange: the group stopped on an offset its partition no longer
	// holds; its Error() says what to run.
	OutOfRange *domain.OutOfRange `json:"outOfRange,omitempty"`
}

// ReadTotals counts what the groups have read.
type ReadTotals struct {
	Records     int64 `json:"records"`
	Rows        int64 `json:"rows"`
	Unparseable int64 `json:"unparseable"`
	ThrownAway  int64 `json:"thrownAway"`
	// NoValue counts the records thrown away for having a null value (a
	// tombstone) or an empty one; ThrownAway includes them.
	NoValue int64 `json:"noValue,omitempty"`
	// Markers and Aborted count what a read passed without a row or a
	// record: transaction markers, and under read committed the records of
	// aborted transactions.
	Markers int64 `json:"transactionMarkers,omitempty"`
	Aborted int64 `json:"abortedRecords,omitempty"`
}

// Add adds o to t.
func (t *ReadTotals) Add(o ReadTotals) {
	t.Records += o.Records
	t.Rows += o.Rows
	t.Unparseable += o.Unparseable
	t.ThrownAway += o.ThrownAway
	t.NoValue += o.NoValue
	t.Markers += o.Markers
	t.Aborted += o.Aborted
}

// PublishTotals counts what a supervisor has published.
type PublishTotals struct {
	Sequences int   `json:"sequences"`
	Segments  int   `json:"segments"`
	Rows      int64 `json:"rows"`
	// LastAt is when the last sequence committed, as the supervisor heard.
	LastAt time.Time `json:"lastAt,omitzero"`
}

// ErrorRecord is one entry of a supervisor's recent errors.
type ErrorRecord struct {
	Time    time.Time `json:"time"`
	Message string    `json:"message"`
}

// SupervisorInput starts a supervisor. Carry is nil on first start and holds
// the state carried across continue-as-new.
type SupervisorInput struct {
	Spec  domain.Spec      `json:"spec"`
	Carry *SupervisorCarry `json:"carry,omitempty"`
}

// Updates users send to a supervisor: each answers once it has taken effect
// (or says why it was refused). checkpoint, stop, suspend and resume are
// also accepted as signals of the same names, without an answer.
const (
	UpdateCheckpoint = "checkpoint"  // CheckpointSignal → CheckpointResult
	UpdateStop       = "stop"        // StopSignal → OperationResult
	UpdateSuspend    = "suspend"     // no argument → OperationResult
	UpdateResume     = "resume"      // no argument → OperationResult
	UpdateReset      = "reset"       // ResetRequest → ResetResult
	UpdateSpec       = "update-spec" // UpdateSpecRequest → UpdateSpecResult
)

// More signals users send to a supervisor.
const (
	SignalSuspend = "suspend"
	SignalResume  = "resume"
)

// More signals task groups send to their supervisor.
const (
	SignalCheckpointDeclined = "checkpoint-declined" // CheckpointDeclined
	SignalProgress           = "progress"            // GroupProgress
)

// More signals a supervisor sends to a task group.
const (
	SignalAddPartitions = "add-partitions" // AddPartitions
	SignalRollover      = "rollover"       // Rollover
)

// Outcomes of a checkpoint, per group.
const (
	CheckpointRecorded   = "recorded"    // a sequence boundary was recorded; the sequence publishes
	CheckpointEmpty      = "empty"       // nothing was read since the last boundary: nothing to publish
	CheckpointNotRunning = "not-running" // the group is not running
	CheckpointTimedOut   = "timed-out"   // the group did not answer in time
)

// CheckpointResult answers UpdateCheckpoint.
type CheckpointResult struct {
	Groups []GroupCheckpointResult `json:"groups"`
}

// GroupCheckpointResult is one group's part of a CheckpointResult.
type GroupCheckpointResult struct {
	Group   int    `json:"group"`
	Outcome string `json:"outcome"`
	// SequenceID and End describe the recorded boundary (Outcome recorded).
	SequenceID int            `json:"sequenceId,omitempty"`
	End        domain.Offsets `json:"end,omitempty"`
}

// OperationResult answers stop, suspend and resume.
type OperationResult struct {
	State   string `json:"state"`
	Message string `json:"message"`
}

// Reset targets.
const (
	ResetEarliest = "earliest"
	ResetLatest   = "latest"
)

// ResetRequest moves stored offsets. Partitions maps a partition to
// "earliest", "latest" or an offset in decimal; when empty, every partition
// moves to All ("earliest" or "latest"). Refused unless the supervisor is
// suspended, or Force is set.
type ResetRequest struct {
	Partitions map[domain.Partition]string `json:"partitions,omitempty"`
	All        string                      `json:"all,omitempty"`
	Force      bool                        `json:"force,omitempty"`
}

// ResetResult says where the offsets now are.
type ResetResult struct {
	Offsets          domain.Offsets `json:"offsets"`
	DroppedSequences int            `json:"droppedSequences"`
	Message          string         `json:"message"`
}

// UpdateSpecRequest replaces a supervisor's spec.
type UpdateSpecRequest struct {
	Spec domain.Spec `json:"spec"`
}

// UpdateSpecResult says whether the spec changed. A changed spec applies
// once the groups have published their open sequences.
type UpdateSpecResult struct {
	Changed bool   `json:"changed"`
	Message string `json:"message"`
}

// CheckpointDeclined tells the supervisor a group dropped a checkpoint
// because its open sequence was empty.
type CheckpointDeclined struct {
	Group      int `json:"group"`
	Generation int `json:"generation"`
}

// GroupProgress reports a group's position and what it read since its last
// report.
type GroupProgress struct {
	Group      int            `json:"group"`
	Generation int            `json:"generation"`
	Position   domain.Offsets `json:"position"`
	// Deltas since the previous report.
	ReadTotals
	// SequenceRows are the rows read so far into each unpublished sequence.
	SequenceRows map[int]int64 `json:"sequenceRows,omitempty"`
}

// AddPartitions gives a running group new partitions, read into the
// sequence SequenceID from Offsets.
type AddPartitions struct {
	SequenceID int            `json:"sequenceId"`
	Offsets    domain.Offsets `json:"offsets"`
}

// Rollover asks a group to close its open sequence and go on as
// Generation, publishing the closed sequences in the new run.
type Rollover struct {
	Generation int `json:"generation"`
}
