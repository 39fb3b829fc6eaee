package workflows

import "go.temporal.io/sdk/workflow"

// Registry is the part of a Temporal worker that takes workflows.
type Registry interface {
	RegisterWorkflowWithOptions(w interface{}, options workflow.RegisterOptions)
}

// Register registers every workflow under its type name.
func Register(r Registry) {
	r.RegisterWorkflowWithOptions(SupervisorWorkflow, workflow.RegisterOptions{Name: SupervisorWorkflowName})
	r.RegisterWorkflowWithOptions(TaskGroupWorkflow, workflow.RegisterOptions{Name: TaskGroupWorkflowName})
	r.RegisterWorkflowWithOptions(CompactionWorkflow, workflow.RegisterOptions{Name: CompactionWorkflowName})
}
