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
	ReasonUser     = "user"
	ReasonStop     = "stop"
	ReasonMaxRows  = "maxRowsPerSegment"
	ReasonHandoff  = "intermediateHandoffPeriod"
	ReasonRestored = "restored"
)

// CheckpointRequest is a group's ask to close SequenceID at Offsets.
type CheckpointRequest struct {
	Group      int            `json:"group"`
	Generation int            `json:"generation"`
	SequenceID int            `json:"sequenceId"`
	Offsets    domain.Offsets `json:"offsets"`
	Reason     string         `json:"reason"`
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
	StateStopping            = "STOPPING"
	StateStopped             = "STOPPED"
	StateUnhealthySupervisor = "UNHEALTHY_SUPERVISOR"
	StateUnhealthyTasks      = "UNHEALTHY_TASKS"
)

// SupervisorStatus is the answer to QueryStatus.
type SupervisorStatus struct {
	ID           string         `json:"id"`
	DataSource   string         `json:"dataSource"`
	Topic        string         `json:"topic"`
	State        string         `json:"state"`
	Partitions   []int32        `json:"partitions"`
	Groups       []GroupStatus  `json:"groups"`
	Committed    domain.Offsets `json:"committedOffsets"`
	Latest       domain.Offsets `json:"latestOffsets"`
	Lag          int64          `json:"aggregateLag"`
	Published    PublishTotals  `json:"published"`
	RecentErrors []ErrorRecord  `json:"recentErrors"`
}

// GroupStatus describes one task group.
type GroupStatus struct {
	Group      int               `json:"group"`
	WorkflowID string            `json:"workflowId"`
	Generation int               `json:"generation"`
	Partitions []int32           `json:"partitions"`
	Sequences  []domain.Sequence `json:"sequences"`
	Running    bool              `json:"running"`
}

// PublishTotals counts what a supervisor has published.
type PublishTotals struct {
	Sequences int   `json:"sequences"`
	Segments  int   `json:"segments"`
	Rows      int64 `json:"rows"`
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
