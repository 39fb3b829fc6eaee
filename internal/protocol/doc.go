// Package protocol is the contract between workflows and activities: the
// registered activity names and each activity's input and result. Workflows
// call activities by these names, so the workflows package needs none of the
// I/O packages that activities import.
package protocol

// Registered activity names.
const (
	ActivityDiscover     = "Discover"
	ActivityStartOffsets = "StartOffsets"
	ActivityConsume      = "Consume"
	ActivityPublish      = "Publish"
	ActivityGroupStates  = "GroupStates"
)

// Activities added for the supervisor's operations.
const (
	ActivityResetOffsets    = "ResetOffsets"
	ActivityRecordSpec      = "RecordSpec"
	ActivityTerminateGroups = "TerminateGroups"
)

// Activities of the long-running design: a task group reads its partitions
// in one ConsumeStream at a time that returns only when something must
// change, woken by WakeConsume (a local activity), and a supervisor learns
// of partitions, group health and lag from one Watch that returns only
// when what it sees differs from what the supervisor knows.
const (
	ActivityConsumeStream = "ConsumeStream"
	ActivityWakeConsume   = "WakeConsume"
	ActivityWatch         = "Watch"
)

// Activities of a datasource's compaction workflow: one plans a round
// (reads the config in force and the used segments), one compacts an
// interval.
const (
	ActivityCompactionPlan  = "CompactionPlan"
	ActivityCompactInterval = "CompactInterval"
)

// The retention pass of a datasource's compaction workflow.
const ActivityApplyRetention = "ApplyRetention"
