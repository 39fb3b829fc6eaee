package cli

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"handoff/workflows"
)

func (a *app) checkpointCommand() *cobra.Command {
	var groups []int
	cmd := &cobra.Command{
		Use:   "checkpoint ID [--group N]...",
		Short: "Ask a supervisor to close and publish its open sequences now",
		Long: `checkpoint signals the supervisor to close the open sequence of each listed
task group (every group when none is listed) and publish it. The signal is
asynchronous: follow the result with status.`,
		Example: `  starter checkpoint orders
  starter checkpoint orders --group 0 --group 2`,
		Args: exactlyOneID,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			for _, g := range groups {
				if g < 0 {
					return usageErrorf("--group %d: want a task group number, 0 or more", g)
				}
			}
			slices.Sort(groups)
			groups = slices.Compact(groups)
			c, err := a.temporal(cmd.Context())
			if err != nil {
				return err
			}
			id := args[0]
			if _, err := signalSupervisor(cmd.Context(), c, id, workflows.SignalCheckpoint, workflows.CheckpointSignal{Groups: groups}); err != nil {
				return err
			}
			return a.out.print(checkpointResult{SupervisorID: id, WorkflowID: workflows.SupervisorWorkflowID(id), Groups: groups})
		}),
	}
	cmd.Flags().IntSliceVar(&groups, "group", nil, "task group to checkpoint; repeat for several (default all)")
	return cmd
}

type checkpointResult struct {
	SupervisorID string `json:"supervisorId"`
	WorkflowID   string `json:"workflowId"`
	Groups       []int  `json:"groups,omitempty"` // absent: all groups
}

func (r checkpointResult) writeText(w io.Writer) error {
	which := "all groups"
	if len(r.Groups) > 0 {
		s := make([]string, len(r.Groups))
		for i, g := range r.Groups {
			s[i] = strconv.Itoa(g)
		}
		which = "groups " + strings.Join(s, ", ")
	}
	_, err := fmt.Fprintf(w, "checkpoint requested for supervisor %s (%s); see `starter status %s`\n", r.SupervisorID, which, r.SupervisorID)
	return err
}
