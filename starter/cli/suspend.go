package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"handoff/workflows"
)

func (a *app) suspendCommand() *cobra.Command {
	return a.operationCommand(workflows.UpdateSuspend, &cobra.Command{
		Use:   "suspend ID",
		Short: "Pause a supervisor's ingestion until resume",
		Long: `suspend asks the supervisor to pause ingestion and prints its answer (its
state and a message). The supervisor workflow keeps running and answers
status; resume starts ingestion again. reset needs a suspended supervisor
(or --force).`,
		Example: `  starter suspend orders
  starter suspend orders -o json`,
	})
}

func (a *app) resumeCommand() *cobra.Command {
	return a.operationCommand(workflows.UpdateResume, &cobra.Command{
		Use:   "resume ID",
		Short: "Resume a suspended supervisor",
		Long: `resume asks a suspended supervisor to ingest again and prints its answer
(its state and a message).`,
		Example: `  starter resume orders`,
	})
}

// operationCommand makes cmd send the argument-less update to the supervisor
// named by its one argument and print the OperationResult.
func (a *app) operationCommand(update string, cmd *cobra.Command) *cobra.Command {
	cmd.Args = exactlyOneID
	cmd.RunE = a.action(func(cmd *cobra.Command, args []string) error {
		c, err := a.temporal(cmd.Context())
		if err != nil {
			return err
		}
		res := operationResult{SupervisorID: args[0], Operation: update}
		if _, err := updateSupervisor(cmd.Context(), c, res.SupervisorID, update, nil, &res.OperationResult); err != nil {
			return err
		}
		return a.out.print(res)
	})
	return cmd
}

type operationResult struct {
	SupervisorID string `json:"supervisorId"`
	Operation    string `json:"operation"`
	workflows.OperationResult
}

func (r operationResult) writeText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%s supervisor %s: %s\n", r.Operation, r.SupervisorID, operationText(&r.OperationResult))
	return err
}
