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
	var watch bool
	var interval time.Duration
	var brokers []string
	cmd := &cobra.Command{
		Use:   "status ID [--watch [--interval D]]",
		Short: "Show a supervisor's state, offsets, lag and task groups",
		Long: `status queries the supervisor for its state: per-partition committed, current
and latest offsets, lag and unpublished records, task groups with their
sequences, read and publish totals and recent errors. It also works on a
stopped supervisor while a worker runs.

LAG is latest − current: records in Kafka not read yet (Druid's lag).
UNPUBLISHED is current − committed: records read, not published yet. The
supervisor hears of offsets only now and then, so status reads the latest
offsets from Kafka (--brokers) when asked, and takes as current the furthest
of the supervisor's and those the groups' running consumes last heartbeat;
it says when each was read. When Kafka does not answer it shows the
supervisor's latest offsets with their age; a latest offset read before its
group got past it is shown at current, marked *.

With --watch it queries again every --interval until Ctrl-C. On a terminal it
redraws a compact table in place: state, lag, rows read per second (from the
change in read rows since the previous refresh; "-" on the first), open
sequences (count and rows), rows published and when the last publish was
("12s ago"), each partition's lag and the latest errors. Otherwise (a pipe,
a file) it prints one line per refresh,
"<time> STATE lag=N rows/s=R published=M rows, last 12s ago". With -o json it
prints one status object per refresh, with its time and rowsPerSecond.`,
		Example: `  starter status orders
  starter status orders -o json | jq '{aggregateLag, aggregateUnpublished, latestFrom}'
  starter status orders --watch --interval 5s`,
		Args: exactlyOneID,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("interval") && !watch {
				return usageErrorf("--interval needs --watch")
			}
			if interval <= 0 {
				return usageErrorf("--interval %s: want a positive duration, e.g. 2s", interval)
			}
			k := a.kafkaFor(brokers)
			defer k.close()
			c, err := a.temporal(cmd.Context())
			if err != nil {
				return err
			}
			if watch {
				return a.watchStatus(cmd.Context(), c, k, args[0], interval)
			}
			st, err := queryStatus(cmd.Context(), c, args[0], queryTimeout)
			if err != nil {
				return err
			}
			return a.out.print(statusResult{freshen(cmd.Context(), c, k, st, a.now().UTC())})
		}),
	}
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "query again every --interval until Ctrl-C")
	cmd.Flags().DurationVar(&interval, "interval", 2*time.Second, "time between refreshes of --watch")
	cmd.Flags().StringSliceVar(&brokers, "brokers", []string{"localhost:9092"}, "comma-separated Kafka bootstrap brokers, to read the latest offsets from")
	bindEnv(cmd.Flags(), "brokers", "KAFKA_BROKERS")
	return cmd
}

func queryStatus(ctx context.Context, c client.Client, id string, timeout time.Duration) (workflows.SupervisorStatus, error) {
	var st workflows.SupervisorStatus
	wid := workflows.SupervisorWorkflowID(id)
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := c.QueryWorkflow(qctx, wid, "", workflows.QueryStatus)
	var deadline *serviceerror.DeadlineExceeded
	switch {
	case isNotFound(err):
		return st, supervisorNotFound(ctx, c, id)
	case ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || errors.As(err, &deadline)):
		return st, noAnswer(ctx, c, workflows.TaskQueue, "query "+workflows.QueryStatus, wid, timeout, err)
	case err != nil:
		return st, fmt.Errorf("query %s of %s: %w", workflows.QueryStatus, wid, err)
	}
	if err := v.Get(&st); err != nil {
		return st, fmt.Errorf("decode %s of %s: %w", workflows.QueryStatus, wid, err)
	}
	return st, nil
}

// statusResult prints as workflows.SupervisorStatus, with its freshened
// offsets and where they came from, in json mode.
type statusResult struct {
	freshStatus
}

func (r statusResult) writeText(w io.Writer) error { return writeStatus(w, r.freshStatus) }
