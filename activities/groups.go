package activities

import (
	"context"
	"errors"
	"fmt"
	"handoff/internal/protocol"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
)

// GroupStates asks Temporal whether each task-group workflow still runs, so
// a supervisor finds groups that failed, also those started by an earlier
// run of itself before a continue-as-new.
func (a *Activities) GroupStates(ctx context.Context, in protocol.GroupStatesInput) (protocol.GroupStatesResult, error) {
	out := protocol.GroupStatesResult{Running: map[string]bool{}}
	for _, id := range in.WorkflowIDs {
		d, err := a.Temporal.DescribeWorkflowExecution(ctx, id, "")
		var nf *serviceerror.NotFound
		switch {
		case errors.As(err, &nf):
			out.Running[id] = false
		case err != nil:
			return protocol.GroupStatesResult{}, fmt.Errorf("describe workflow %s: %w", id, err)
		default:
			out.Running[id] = d.GetWorkflowExecutionInfo().GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_RUNNING
		}
	}
	return out, nil
}
