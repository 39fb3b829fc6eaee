package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"handoff/internal/domain"
	"handoff/workflows"
)

func (a *app) updateCommand() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "update -f SPEC",
		Short: "Validate a spec and give it to its running supervisor",
		Long: `update validates the spec (like validate; a bad spec changes nothing) and sends
it to the running supervisor named by its id, which says whether it changed
anything. A changed spec applies once the task groups have published their
open sequences; the supervisor refuses changes it cannot apply.`,
		Example: `  starter update -f spec.json
  starter update -f spec.json -o json`,
		Args: cobra.NoArgs,
		RunE: a.action(func(cmd *cobra.Command, _ []string) error {
			spec, err := a.readSpec(file)
			if err != nil {
				return err
			}
			c, err := a.temporal(cmd.Context())
			if err != nil {
				return err
			}
			res, err := updateSpec(cmd.Context(), c, spec)
			if err != nil {
				return err
			}
			return a.out.print(res)
		}),
	}
	addSpecFlag(cmd, &file)
	return cmd
}

func updateSpec(ctx context.Context, c client.Client, spec domain.Spec) (specUpdateResult, error) {
	res := specUpdateResult{SupervisorID: spec.ID, WorkflowID: workflows.SupervisorWorkflowID(spec.ID)}
	_, err := updateSupervisor(ctx, c, spec.ID, workflows.UpdateSpec, workflows.UpdateSpecRequest{Spec: spec}, &res.UpdateSpecResult)
	return res, err
}

type specUpdateResult struct {
	SupervisorID string `json:"supervisorId"`
	WorkflowID   string `json:"workflowId"`
	workflows.UpdateSpecResult
	// State is the last state start --wait saw.
	State string `json:"state,omitempty"`
}

func (r specUpdateResult) writeText(w io.Writer) error {
	var err error
	switch {
	case !r.Changed:
		_, err = fmt.Fprintf(w, "supervisor %s is already running with this spec: nothing to do\n", r.SupervisorID)
	case r.Message != "":
		_, err = fmt.Fprintf(w, "supervisor %s: spec updated: %s\n", r.SupervisorID, r.Message)
	default:
		_, err = fmt.Fprintf(w, "supervisor %s: spec updated\n", r.SupervisorID)
	}
	if err == nil && r.State != "" {
		_, err = fmt.Fprintf(w, "supervisor %s is %s\n", r.SupervisorID, r.State)
	}
	return err
}
