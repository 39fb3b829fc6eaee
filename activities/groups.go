package activities

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"handoff/internal/protocol"
)

// maxFailureLen bounds a reported failure message, which ends up in the
// supervisor's status and history.
const maxFailureLen = 500

// GroupStates asks Temporal whether each task-group workflow still runs, so
// a supervisor finds groups that failed, also those started by an earlier
// run of itself before a continue-as-new. For each one that does not run it
// reports how the latest run ended and, if it failed, why.
func (a *Activities) GroupStates(ctx context.Context, in protocol.GroupStatesInput) (protocol.GroupStatesResult, error) {
	out := protocol.GroupStatesResult{Running: map[string]bool{}, Closed: map[string]protocol.GroupClosed{}}
	for _, id := range in.WorkflowIDs {
		d, err := a.Temporal.DescribeWorkflowExecution(ctx, id, "")
		var nf *serviceerror.NotFound
		switch {
		case errors.As(err, &nf):
			out.Running[id] = false
			out.Closed[id] = protocol.GroupClosed{Status: "NotFound"}
			continue
		case err != nil:
			return protocol.GroupStatesResult{}, fmt.Errorf("describe workflow %s: %w", id, err)
		}
		info := d.GetWorkflowExecutionInfo()
		status := info.GetStatus()
		// Open in any form: a paused run is still there, and the latest run
		// of an id is never continued-as-new (its successor is).
		if open(status) {
			out.Running[id] = true
			continue
		}
		out.Running[id] = false
		closed := protocol.GroupClosed{Status: status.String()}
		if status == enums.WORKFLOW_EXECUTION_STATUS_FAILED {
			if closed.Failure, err = a.failure(ctx, id, info.GetExecution().GetRunId()); err != nil {
				return protocol.GroupStatesResult{}, err
			}
		}
		out.Closed[id] = closed
	}
	return out, nil
}

// goErrorTypes are the types the SDK names when a workflow returns a
// plain Go error: they say nothing about what went wrong.
var goErrorTypes = map[string]bool{"wrapError": true, "wrapErrors": true, "joinError": true}

func open(s enums.WorkflowExecutionStatus) bool {
	switch s {
	case enums.WORKFLOW_EXECUTION_STATUS_RUNNING, enums.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW,
		enums.WORKFLOW_EXECUTION_STATUS_PAUSED:
		return true
	}
	return false
}

// failure reads why a failed run failed: "Type: Message" of its application
// error, or the error's text. The run id is the described one, so a run
// started since cannot make this wait for its end.
func (a *Activities) failure(ctx context.Context, id, runID string) (string, error) {
	err := a.Temporal.GetWorkflow(ctx, id, runID).Get(ctx, nil)
	if err == nil {
		return "", nil // not failed after all
	}
	var wee *temporal.WorkflowExecutionError
	if !errors.As(err, &wee) {
		// Not the run's failure but a failure to fetch it.
		return "", fmt.Errorf("result of failed workflow %s run %s: %w", id, runID, err)
	}
	msg := err.Error()
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		msg = app.Message()
		if t := app.Type(); t != "" && !goErrorTypes[t] {
			msg = t + ": " + msg
		}
	}
	return truncate(msg, maxFailureLen), nil
}

// truncate cuts s to at most n bytes without splitting a character.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
