package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"handoff/internal/domain"
	"handoff/workflows"
)

func (a *app) resetCommand() *cobra.Command {
	var partitions []string
	var to string
	var force bool
	cmd := &cobra.Command{
		Use:   "reset ID (--partition P=earliest|latest|OFFSET)... | --to earliest|latest [--force]",
		Short: "Move a supervisor's stored offsets",
		Long: `reset moves the stored offsets the supervisor reads from next: of the listed
partitions (--partition, repeatable: to the earliest or latest offset Kafka
holds, or to an offset), or of every partition (--to). Give exactly one of
the two. The supervisor refuses unless it is suspended (see suspend: its
groups publish what they read first), or --force is given: then the groups
reading those partitions end at once, and what they read but did not publish
is dropped (read again from the new offsets). It prints the new offsets.
A supervisor reading by ioConfig.topicPattern names a partition TOPIC:P.`,
		Example: `  starter suspend orders && starter reset orders --to latest && starter resume orders
  starter reset orders --partition 0=earliest --partition 3=1200 --force
  starter reset all-orders --partition orders.eu:3=earliest --force`,
		Args: exactlyOneID,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			req, err := resetRequest(partitions, to, force)
			if err != nil {
				return err
			}
			c, err := a.temporal(cmd.Context())
			if err != nil {
				return err
			}
			res := resetResult{SupervisorID: args[0]}
			if _, err := updateSupervisor(cmd.Context(), c, res.SupervisorID, workflows.UpdateReset, req, &res.ResetResult); err != nil {
				return err
			}
			return a.out.print(res)
		}),
	}
	cmd.Flags().StringArrayVar(&partitions, "partition", nil, "P=earliest|latest|OFFSET: move partition P; repeat for several")
	cmd.Flags().StringVar(&to, "to", "", "earliest|latest: move every partition")
	cmd.Flags().BoolVar(&force, "force", false, "reset even though the supervisor is not suspended")
	return cmd
}

// resetRequest checks the flags of reset before anything is sent.
func resetRequest(partitions []string, to string, force bool) (workflows.ResetRequest, error) {
	req := workflows.ResetRequest{All: to, Force: force}
	switch {
	case len(partitions) > 0 && to != "":
		return req, usageErrorf("give either --partition or --to, not both")
	case len(partitions) == 0 && to == "":
		return req, usageErrorf("give --partition P=earliest|latest|OFFSET (repeatable) or --to earliest|latest")
	case to != "" && to != workflows.ResetEarliest && to != workflows.ResetLatest:
		return req, usageErrorf("--to %q: want earliest or latest", to)
	case to != "":
		return req, nil
	}
	req.Partitions = make(map[domain.Partition]string, len(partitions))
	for _, arg := range partitions {
		p, target, err := parsePartitionReset(arg)
		if err != nil {
			return req, err
		}
		if _, dup := req.Partitions[p]; dup {
			return req, usageErrorf("--partition %q: partition %s is given twice", arg, p)
		}
		req.Partitions[p] = target
	}
	return req, nil
}

// parsePartitionReset parses "P=earliest", "P=latest" or "P=OFFSET"; an
// offset comes back in canonical decimal, as ResetRequest wants.
// P is a partition number, or TOPIC:N for a topicPattern supervisor.
func parsePartitionReset(arg string) (domain.Partition, string, error) {
	ps, target, ok := strings.Cut(arg, "=")
	if !ok {
		return domain.Partition{}, "", usageErrorf("--partition %q: want P=earliest|latest|OFFSET, e.g. 0=earliest or 3=1200 (TOPIC:P=... with a topicPattern)", arg)
	}
	p, err := domain.ParsePartition(strings.TrimSpace(ps))
	if err != nil {
		return domain.Partition{}, "", usageErrorf("--partition %q: partition %q is not a partition number (0 or more) or TOPIC:NUMBER", arg, ps)
	}
	target = strings.TrimSpace(target)
	switch target {
	case workflows.ResetEarliest, workflows.ResetLatest:
		return p, target, nil
	}
	off, err := strconv.ParseInt(target, 10, 64)
	if err != nil || off < 0 {
		return domain.Partition{}, "", usageErrorf("--partition %q: %q is not earliest, latest or an offset (0 or more)", arg, target)
	}
	return p, strconv.FormatInt(off, 10), nil
}

type resetResult struct {
	SupervisorID string `json:"supervisorId"`
	workflows.ResetResult
}

func (r resetResult) writeText(w io.Writer) error {
	fmt.Fprintf(w, "reset supervisor %s", r.SupervisorID)
	if r.Message != "" {
		fmt.Fprintf(w, ": %s", r.Message)
	}
	fmt.Fprintln(w)
	if r.DroppedSequences > 0 {
		fmt.Fprintf(w, "dropped %s that had not been published\n", plural(r.DroppedSequences, "sequence"))
	}
	if len(r.Offsets) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "\nPARTITION\tOFFSET")
	for _, p := range r.Offsets.Partitions() {
		fmt.Fprintf(tw, "%s\t%d\n", p, r.Offsets[p])
	}
	return tw.Flush()
}
