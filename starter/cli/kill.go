package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"handoff/internal/domain"
	"handoff/internal/lake"
	"handoff/internal/lifecycle"
	"handoff/internal/pgstore"
)

func (a *app) killCommand() *cobra.Command {
	var lf lakeFlags
	var grace string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "kill DS [--dry-run] [--grace P1D]",
		Short: "Delete the files of a datasource's unused segments past the grace period",
		Long: `kill deletes from deep storage the files of the datasource's segments that
became unused (replaced by a compaction, dropped by retention) longer than
the grace period ago, except those a snapshot its Iceberg table keeps still
lists, and marks their rows killed. The workflow compaction/DS does the same
every period with the grace period of the retention rules (killGracePeriod,
default P1D); this command runs it now. --dry-run lists what it would
delete and what it keeps, and why, deleting nothing.`,
		Example: `  starter kill wiki --dry-run
  starter kill wiki --grace PT1H -o json`,
		Args: exactlyOneDataSource,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			ctx, ds := cmd.Context(), args[0]
			g, err := domain.ParseDuration(grace)
			if err != nil {
				return usageErrorf("--grace: %v", err)
			}
			var res lifecycle.Result
			err = a.withLake(ctx, lf, lake.Config{}, func(pool *pgxpool.Pool, l *lake.Lake) error {
				k := lifecycle.Killer{Store: pgstore.New(pool), Deep: l.Deep(), Tables: l}
				res, err = k.Kill(ctx, ds, g, dryRun)
				return err
			})
			if err != nil {
				return err
			}
			return a.out.print(killResult(res))
		}),
	}
	lf.add(cmd.Flags())
	cmd.Flags().StringVar(&grace, "grace", "P1D", "kill only segments unused for longer than this (ISO-8601 or Go duration)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "report what would be deleted, delete nothing")
	return cmd
}

type killResult lifecycle.Result

func (r killResult) writeText(w io.Writer) error {
	verb := "killed"
	if r.DryRun {
		verb = "would kill"
	}
	fmt.Fprintf(w, "%s %d unused segments of %s (%d bytes) unused since before %s; kept %d\n",
		verb, len(r.Killed), r.DataSource, r.Bytes, r.Before.Format(time.RFC3339), len(r.Kept))
	for _, f := range r.Killed {
		fmt.Fprintf(w, "  %s %s\n", verb, f.URI)
	}
	for _, f := range r.Kept {
		fmt.Fprintf(w, "  kept %s: %s\n", f.URI, f.Reason)
	}
	return nil
}
