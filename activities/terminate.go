package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"

	"handoff/internal/protocol"
)

// TerminateGroups ends task-group workflows at once, without letting them
// publish. One that is gone or already closed is what was asked for; the
// server reports both as NotFound.
func (a *Activities) TerminateGroups(ctx context.Context, in protocol.TerminateGroupsInput) (protocol.TerminateGroupsResult, error) {
	for _, id := range in.WorkflowIDs {
		err := a.Temporal.TerminateWorkflow(ctx, id, "", in.Reason)
		var nf *serviceerror.NotFound
		if err != nil && !errors.As(err, &nf) {
			return protocol.TerminateGroupsResult{}, fmt.Errorf("terminate workflow %s: %w", id, err)
		}
	}
	return protocol.TerminateGroupsResult{}, nil
}
