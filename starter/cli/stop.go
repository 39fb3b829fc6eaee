package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"handoff/workflows"
)

func (a *app) stopCommand() *cobra.Command {
	var wait bool
	cmd := &cobra.Command{
		Use:   "stop ID [--wait]",
		Short: "Stop a supervisor gracefully, publishing every open sequence",
		Long: `stop signals the supervisor to close and publish every open sequence and then
complete. Without --wait it returns once the signal is delivered; with --wait
it blocks until the workflow completes and prints its final state. Stopping a
supervisor that is no longer running is not an error.`,
		Example: `  starter stop orders
  starter stop orders --wait -o json`,
		Args: exactlyOneID,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			ctx, id := cmd.Context(), args[0]
			c, err := a.temporal(ctx)
			if err != nil {
				return err
			}
			res := stopResult{SupervisorID: id, WorkflowID: workflows.SupervisorWorkflowID(id)}
			d, err := signalSupervisor(ctx, c, id, workflows.SignalStop, workflows.StopSignal{})
			switch {
			case d != nil: // not running: already stopped, or ended otherwise
				res.AlreadyStopped = true
			case err != nil:
				return err
			case !wait:
				return a.out.print(res)
			default:
				if err := c.GetWorkflow(ctx, res.WorkflowID, "").Get(ctx, nil); err != nil {
					return fmt.Errorf("wait for %s to stop: %w", res.WorkflowID, err)
				}
				if d, err = lastRun(ctx, c, id); err != nil {
					return err
				}
			}
			res.WorkflowStatus = d.Status.String()
			if wait {
				// The final state needs a worker to answer; without one, say so
				// and still report how the workflow ended.
				if st, err := queryStatus(ctx, c, id); err != nil {
					a.log.Warn("final status unavailable", "workflow", res.WorkflowID, "err", err)
				} else {
					res.Final = &st
				}
			}
			return a.out.print(res)
		}),
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "wait for the supervisor to complete and print its final state")
	return cmd
}

type stopResult struct {
	SupervisorID   string `json:"supervisorId"`
	WorkflowID     string `json:"workflowId"`
	AlreadyStopped bool   `json:"alreadyStopped"`
	// WorkflowStatus is how the workflow ended (Completed, Terminated, ...),
	// known once it has.
	WorkflowStatus string                      `json:"workflowStatus,omitempty"`
	Final          *workflows.SupervisorStatus `json:"final,omitempty"`
}

func (r stopResult) writeText(w io.Writer) error {
	var err error
	switch {
	case r.AlreadyStopped:
		_, err = fmt.Fprintf(w, "supervisor %s is not running (workflow %s %s)\n", r.SupervisorID, r.WorkflowID, r.WorkflowStatus)
	case r.WorkflowStatus == "":
		_, err = fmt.Fprintf(w, "stop requested for supervisor %s; wait with `starter stop %s --wait`\n", r.SupervisorID, r.SupervisorID)
	default:
		_, err = fmt.Fprintf(w, "supervisor %s stopped (workflow %s %s)\n", r.SupervisorID, r.WorkflowID, r.WorkflowStatus)
	}
	if err != nil || r.Final == nil {
		return err
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	return writeStatus(w, *r.Final)
}
