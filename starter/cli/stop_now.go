package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"

	"handoff/workflows"
)

const (
	// stopNowReason is recorded as the reason of every termination.
	stopNowReason = "stop --now"
	// maxGroupsProbed is how many task-group workflow ids stop --now tries
	// when the supervisor cannot say which groups it runs.
	maxGroupsProbed = 64
	// stopNowQueryTimeout keeps stop --now quick when no worker answers.
	stopNowQueryTimeout = 5 * time.Second
)

// stopNow terminates the supervisor, then its task groups, so that the
// supervisor cannot start a group again after it was terminated. Nothing is
// published: the stored offsets stay where the last publish left them.
func stopNow(ctx context.Context, c client.Client, id string, log *slog.Logger) (stopResult, error) {
	res := stopResult{SupervisorID: id, WorkflowID: workflows.SupervisorWorkflowID(id), Now: true}
	groups, err := groupWorkflowIDs(ctx, c, id)
	var ee *exitError
	switch {
	case errors.As(err, &ee) && ee.code == ExitNotFound:
		return res, err
	case err != nil:
		log.Warn("supervisor status unavailable: trying every task group id",
			"workflow", res.WorkflowID, "groups", fmt.Sprintf("0..%d", maxGroupsProbed-1), "err", err)
		groups = nil
		for n := range maxGroupsProbed {
			groups = append(groups, workflows.TaskGroupWorkflowID(id, n))
		}
	}

	err = c.TerminateWorkflow(ctx, res.WorkflowID, "", stopNowReason)
	switch {
	case isNotFound(err): // not running; there may still be groups to end
		d, err := lastRun(ctx, c, id)
		if err != nil {
			return res, err
		}
		res.AlreadyStopped, res.WorkflowStatus = true, d.Status.String()
	case err != nil:
		return res, fmt.Errorf("terminate %s: %w", res.WorkflowID, err)
	default:
		res.WorkflowStatus = "Terminated"
	}

	var errs []error
	for _, wid := range groups {
		err := c.TerminateWorkflow(ctx, wid, "", stopNowReason)
		switch {
		case isNotFound(err): // already ended, or never existed
		case err != nil:
			errs = append(errs, fmt.Errorf("terminate %s: %w", wid, err))
		default:
			res.TerminatedGroups = append(res.TerminatedGroups, wid)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return res, fmt.Errorf("supervisor %s terminated, but not all of its task groups: %w", id, err)
	}
	return res, nil
}

// groupWorkflowIDs asks the supervisor for its groups' workflow ids.
func groupWorkflowIDs(ctx context.Context, c client.Client, id string) ([]string, error) {
	st, err := queryStatus(ctx, c, id, stopNowQueryTimeout)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(st.Groups))
	for _, g := range st.Groups {
		wid := g.WorkflowID
		if wid == "" {
			wid = workflows.TaskGroupWorkflowID(id, g.Group)
		}
		ids = append(ids, wid)
	}
	return ids, nil
}
