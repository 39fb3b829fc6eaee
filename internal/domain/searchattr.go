package domain

// Search attributes a supervisor or compaction workflow keeps up to date,
// so the Temporal UI can filter on them (e.g. SupervisorState = "RUNNING",
// CompactionState = "compacting"), all of type Keyword.
// They are here, not in workflows/, because the worker registers them
// (internal/searchattr) and the CLI reads them, below the workflows.
const (
	SearchAttributeSupervisor = "Supervisor"
	SearchAttributeDataSource = "DataSource"
	SearchAttributeTopic      = "Topic"
	SearchAttributeState      = "SupervisorState"
	// SearchAttributeCompactionState is a compaction/<datasource>
	// workflow's state: CompactionStateIdle, CompactionStateCompacting,
	// CompactionStateStopping or CompactionStateNoConfig.
	SearchAttributeCompactionState = "CompactionState"
)

// The values of SearchAttributeCompactionState.
const (
	CompactionStateIdle       = "idle"
	CompactionStateCompacting = "compacting"
	CompactionStateStopping   = "stopping"
	CompactionStateNoConfig   = "no-config"
)
