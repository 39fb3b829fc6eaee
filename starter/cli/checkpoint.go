package cli

import (
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"handoff/workflows"
)

func (a *app) checkpointCommand() *cobra.Command {
	var groups []int
	cmd := &cobra.Command{
		Use:   "checkpoint ID [--group N]...",
		Short: "Close the open sequences of a supervisor's task groups now and publish them",
		Long: `checkpoint asks the supervisor to close the open sequence of each listed task
group (every group when none is listed) and waits for its answer: per group,
the sequence boundary it recorded (that sequence now publishes), or that the
group had read nothing since its last boundary (empty), was not running, or
did not answer in time. Any of these outcomes exits 0; see them with -o json.`,
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
			res := checkpointResult{SupervisorID: args[0]}
			if _, err := updateSupervisor(cmd.Context(), c, res.SupervisorID, workflows.UpdateCheckpoint,
				workflows.CheckpointSignal{Groups: groups}, &res.CheckpointResult); err != nil {
				return err
			}
			return a.out.print(res)
		}),
	}
	cmd.Flags().IntSliceVar(&groups, "group", nil, "task group to checkpoint; repeat for several (default all)")
	return cmd
}

type checkpointResult struct {
	SupervisorID string `json:"supervisorId"`
	workflows.CheckpointResult
}

func (r checkpointResult) writeText(w io.Writer) error {
	if len(r.Groups) == 0 {
		_, err := fmt.Fprintf(w, "supervisor %s has no task groups to checkpoint\n", r.SupervisorID)
		return err
	}
	for _, g := range r.Groups {
		var err error
		switch g.Outcome {
		case workflows.CheckpointRecorded:
			_, err = fmt.Fprintf(w, "group %d: sequence %d closed at %s — publishing\n", g.Group, g.SequenceID, g.End)
		case workflows.CheckpointEmpty:
			_, err = fmt.Fprintf(w, "group %d: empty — nothing read since the last boundary, nothing to publish\n", g.Group)
		case workflows.CheckpointNotRunning:
			_, err = fmt.Fprintf(w, "group %d: not running — see `starter status %s`\n", g.Group, r.SupervisorID)
		case workflows.CheckpointTimedOut:
			_, err = fmt.Fprintf(w, "group %d: timed out — the group did not answer in time; see `starter status %s`\n", g.Group, r.SupervisorID)
		default:
			_, err = fmt.Fprintf(w, "group %d: %s\n", g.Group, g.Outcome)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
