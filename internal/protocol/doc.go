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
