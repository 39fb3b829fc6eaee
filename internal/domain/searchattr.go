package domain

// Search attributes a supervisor keeps up to date, so the Temporal UI can
// filter on them (e.g. SupervisorState = "RUNNING"), all of type Keyword.
// They are here, not in workflows/, because the worker registers them
// (internal/searchattr) and the CLI reads them, below the workflows.
const (
	SearchAttributeSupervisor = "Supervisor"
	SearchAttributeDataSource = "DataSource"
	SearchAttributeTopic      = "Topic"
	SearchAttributeState      = "SupervisorState"
)
