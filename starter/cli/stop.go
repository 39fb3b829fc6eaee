package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"handoff/workflows"
)

func (a *app) stopCommand() *cobra.Command {
	var wait, now bool
	var brokers []string
	cmd := &cobra.Command{
		Use:   "stop ID [--wait | --now]",
		Short: "Stop a supervisor: gracefully, publishing every open sequence, or --now",
		Long: `stop asks the supervisor to close and publish every open sequence and then
complete, and prints its answer. With --wait it then blocks until the
workflow completes and prints its final state. Stopping a supervisor that is
no longer running is not an error.

stop --now ends at once without publishing: it terminates the supervisor
workflow and every task-group workflow. Committed offsets are unchanged, so
what was read but not published is read again by the next start.`,
		Example: `  starter stop orders
  starter stop orders --wait -o json
  starter stop orders --now`,
		Args: exactlyOneID,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			ctx, id := cmd.Context(), args[0]
			c, err := a.temporal(ctx)
			if err != nil {
				return err
			}
			if now {
				res, err := stopNow(ctx, c, id, a.log)
				if err != nil {
					return err
				}
				return a.out.print(res)
			}
			res := stopResult{SupervisorID: id, WorkflowID: workflows.SupervisorWorkflowID(id)}
			var op workflows.OperationResult
			d, err := updateSupervisor(ctx, c, id, workflows.UpdateStop, workflows.StopSignal{}, &op)
			switch {
			case d != nil: // not running: already stopped, or ended otherwise
				res.AlreadyStopped = true
			case err != nil:
				return err
			case !wait:
				res.Operation = &op
				return a.out.print(res)
			default:
				res.Operation = &op
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
				if st, err := queryStatus(ctx, c, id, queryTimeout); err != nil {
					a.log.Warn("final status unavailable", "workflow", res.WorkflowID, "err", err)
				} else {
					// Lag from Kafka's latest offsets now, not the
					// supervisor's last look: a stop that left records
					// unread says how many.
					k := a.kafkaFor(brokers)
					defer k.close()
					f := freshen(ctx, c, k, st, a.now().UTC())
					res.Final, res.LatestFrom, res.KafkaError = &f.SupervisorStatus, f.LatestFrom, f.KafkaError
					res.finalAt = f.Time
				}
			}
			return a.out.print(res)
		}),
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "wait for the supervisor to complete and print its final state")
	cmd.Flags().BoolVar(&now, "now", false, "terminate the supervisor and its task groups at once, publishing nothing")
	cmd.Flags().StringSliceVar(&brokers, "brokers", []string{"localhost:9092"}, "comma-separated Kafka bootstrap brokers, to read the latest offsets of the final report from")
	bindEnv(cmd.Flags(), "brokers", "KAFKA_BROKERS")
	cmd.MarkFlagsMutuallyExclusive("wait", "now")
	return cmd
}

type stopResult struct {
	SupervisorID   string `json:"supervisorId"`
	WorkflowID     string `json:"workflowId"`
	AlreadyStopped bool   `json:"alreadyStopped"`
	// Operation is the supervisor's answer to the stop update.
	Operation *workflows.OperationResult `json:"operation,omitempty"`
	// WorkflowStatus is how the workflow ended (Completed, Terminated, ...),
	// known once it has.
	WorkflowStatus string                      `json:"workflowStatus,omitempty"`
	Final          *workflows.SupervisorStatus `json:"final,omitempty"`
	// LatestFrom and KafkaError say where the final report's latest
	// offsets (and so its lag) come from, as in status.
	LatestFrom string `json:"latestFrom,omitempty"`
	KafkaError string `json:"kafkaError,omitempty"`
	finalAt    time.Time
	// Now and TerminatedGroups describe a stop --now.
	Now              bool     `json:"now,omitempty"`
	TerminatedGroups []string `json:"terminatedGroups,omitempty"`
}

func (r stopResult) writeText(w io.Writer) error {
	if r.Now {
		return r.writeNowText(w)
	}
	var err error
	switch {
	case r.AlreadyStopped:
		_, err = fmt.Fprintf(w, "supervisor %s is not running (workflow %s %s)\n", r.SupervisorID, r.WorkflowID, r.WorkflowStatus)
	case r.WorkflowStatus == "":
		_, err = fmt.Fprintf(w, "stop requested for supervisor %s: %s; wait with `starter stop %s --wait`\n",
			r.SupervisorID, operationText(r.Operation), r.SupervisorID)
	default:
		_, err = fmt.Fprintf(w, "supervisor %s stopped (workflow %s %s)\n", r.SupervisorID, r.WorkflowID, r.WorkflowStatus)
	}
	if err != nil || r.Final == nil {
		return err
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	from := r.LatestFrom
	if from == "" {
		from = latestFromSupervisor
	}
	f := freshStatus{Time: r.finalAt, SupervisorStatus: *r.Final, LatestFrom: from, KafkaError: r.KafkaError}
	if f.LatestFrom == latestFromKafka {
		f.LatestAt = r.finalAt
	}
	return writeStatus(w, f)
}

func (r stopResult) writeNowText(w io.Writer) error {
	verb := "terminated supervisor " + r.SupervisorID
	if r.AlreadyStopped {
		verb = fmt.Sprintf("supervisor %s was not running (workflow %s %s)", r.SupervisorID, r.WorkflowID, r.WorkflowStatus)
	}
	groups := "no task group was running"
	if len(r.TerminatedGroups) > 0 {
		groups = "terminated task groups " + strings.Join(r.TerminatedGroups, ", ")
	}
	_, err := fmt.Fprintf(w, "%s; %s\ncommitted offsets are unchanged: reads not yet published will be read again by the next start\n", verb, groups)
	return err
}

// operationText renders an OperationResult as "message (state S)".
func operationText(op *workflows.OperationResult) string {
	if op == nil {
		return "no answer"
	}
	switch {
	case op.Message == "":
		return "state " + op.State
	case op.State == "":
		return op.Message
	}
	return fmt.Sprintf("%s (state %s)", op.Message, op.State)
}
