package lake

// Snapshot summary keys a publication's snapshot carries, so the table
// says what it holds, as the Kafka Connect sink's kafka.connect.offsets
// does. Offsets are JSON objects from partition to offset.
const (
	SummarySupervisor   = "handoff.supervisor"
	SummarySequence     = "handoff.sequence"
	SummaryTaskGroup    = "handoff.task-group"
	SummaryTopic        = "handoff.topic"
	SummaryStartOffsets = "handoff.start-offsets" // the sequence's start
	SummaryEndOffsets   = "handoff.end-offsets"   // the sequence's end
	// SummaryOffsets is every partition's next offset once the snapshot is
	// committed: what datasource_offsets holds for the topic.
	SummaryOffsets = "handoff.offsets"
)
