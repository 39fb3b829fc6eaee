package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"handoff/workflows"
)

// queryTimeout bounds a status query: with no worker polling, the server
// would otherwise hold it until the RPC deadline.
const queryTimeout = 10 * time.Second

func (a *app) statusCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "status ID",
		Short: "Show a supervisor's state, offsets, lag and task groups",
		Long: `status queries the supervisor for its state: per-partition committed and
latest offsets and lag, task groups with their sequences, publish totals and
recent errors. It also works on a stopped supervisor while a worker runs.`,
		Example: `  starter status orders
  starter status orders -o json | jq .aggregateLag`,
		Args: exactlyOneID,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			c, err := a.temporal(cmd.Context())
			if err != nil {
				return err
			}
			st, err := queryStatus(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			return a.out.print(statusResult{st})
		}),
	}
}

func queryStatus(ctx context.Context, c client.Client, id string) (workflows.SupervisorStatus, error) {
	var st workflows.SupervisorStatus
	wid := workflows.SupervisorWorkflowID(id)
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	v, err := c.QueryWorkflow(ctx, wid, "", workflows.QueryStatus)
	var deadline *serviceerror.DeadlineExceeded
	switch {
	case isNotFound(err):
		return st, supervisorNotFound(id)
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &deadline):
		return st, fmt.Errorf("query %s of %s: no answer within %s: is a worker polling task queue %q? (%w)",
			workflows.QueryStatus, wid, queryTimeout, workflows.TaskQueue, err)
	case err != nil:
		return st, fmt.Errorf("query %s of %s: %w", workflows.QueryStatus, wid, err)
	}
	if err := v.Get(&st); err != nil {
		return st, fmt.Errorf("decode %s of %s: %w", workflows.QueryStatus, wid, err)
	}
	return st, nil
}

// statusResult prints as workflows.SupervisorStatus in json mode.
type statusResult struct {
	workflows.SupervisorStatus
}

func (r statusResult) writeText(w io.Writer) error { return writeStatus(w, r.SupervisorStatus) }
