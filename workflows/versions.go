package workflows

import "go.temporal.io/sdk/workflow"

// Changes that alter the commands a run issues are gated by
// workflow.GetVersion, so a run started by an older worker replays
// unchanged on a newer one (workflows/replay_test.go checks the recorded
// histories of older runs).
const (
	// asyncSignalsChange: a task group does not wait for each signal to its
	// supervisor to be delivered before it goes on (see signalSupervisor).
	asyncSignalsChange                   = "async-group-signals"
	asyncSignalsVersion workflow.Version = 1

	// parallelCheckpointChange: a supervisor signals every group of a
	// checkpoint at once instead of one delivery after another.
	parallelCheckpointChange                   = "parallel-checkpoint-signals"
	parallelCheckpointVersion workflow.Version = 1

	// outOfRangeChange: a task group whose consume failed with
	// OffsetOutOfRange tells its supervisor (SignalOffsetOutOfRange) before
	// it fails; the supervisor records it and, with
	// ioConfig.resetOffsetAutomatically, resets the partition.
	outOfRangeChange                   = "offset-out-of-range"
	outOfRangeVersion workflow.Version = 1

	// compactionStateChange: a compaction workflow keeps the
	// CompactionState (and DataSource) search attributes current.
	compactionStateChange                   = "compaction-search-attributes"
	compactionStateVersion workflow.Version = 1

	// sortedAddPartitionsChange: a supervisor signals the groups that new
	// partitions join in group order. Before, it went in a map's order,
	// which a replay need not repeat when partitions joined two or more
	// running groups at once (a nondeterminism error).
	sortedAddPartitionsChange                   = "sorted-add-partitions"
	sortedAddPartitionsVersion workflow.Version = 1

	// spreadHandoffChange: a task group hands off by age on its own phase
	// of intermediateHandoffPeriod, counted from its sequence's first
	// record (domain.HandoffDue), instead of a period after the sequence
	// opened.
	spreadHandoffChange                   = "spread-handoffs"
	spreadHandoffVersion workflow.Version = 1

	// earlyNextChange: a task group reads on into the next sequence while
	// its request to close the open one awaits its answer, proposing the
	// next sequence's id (taskgroup_early.go).
	earlyNextChange                   = "early-next-sequence"
	earlyNextVersion workflow.Version = 1

	// progressInRequestChange: a task group sends its progress report with
	// its checkpoint request, not as a signal before it.
	progressInRequestChange                   = "progress-in-request"
	progressInRequestVersion workflow.Version = 1

	// selfCloseChange: a task group closes its open sequence itself at a
	// handoff trigger and reads on into the next; each Publish tells the
	// supervisor, once its sequence has committed, instead of the group
	// (taskgroup_selfclose.go).
	selfCloseChange                   = "self-closed-handoffs"
	selfCloseVersion workflow.Version = 1
)

// The long-running design: orchestration costs history per piece of work,
// not per second.
const (
	// streamConsumeChange: a task group reads with one ConsumeStream at a
	// time, which returns only when the group must act (a handoff trigger,
	// the end of a closed sequence, a wake), instead of one Consume per
	// chunk; it sends progress to its supervisor only with its requests.
	streamConsumeChange                   = "consume-stream"
	streamConsumeVersion workflow.Version = 1

	// watchChange: a supervisor learns of partitions, group health and lag
	// from one Watch that returns only on a change, instead of Discover and
	// GroupStates every period.
	watchChange                   = "supervisor-watch"
	watchVersion workflow.Version = 1
)
