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
	var grace, sweepGrace string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "kill DS [--dry-run] [--grace P1D] [--sweep-grace PT3H]",
		Short: "Delete the files of a datasource's unused segments past the grace period, and orphaned files",
		Long: `kill deletes from deep storage the files of the datasource's segments that
became unused (replaced by a compaction, dropped by retention) longer than
the grace period ago, except those a snapshot its Iceberg table keeps still
lists, and marks their rows killed. The workflow compaction/DS does the same
every period with the grace period of the retention rules (killGracePeriod,
default P1D); this command runs it now. --dry-run lists what it would
delete and what it keeps, and why, deleting nothing.

Then it sweeps the orphans: files under the datasource's directory (outside
the table's metadata, which the table's maintenance sweeps) that no segment
row and no kept snapshot lists, modified more than --sweep-grace ago: what
publishes that failed their offset check and compactions killed before their
commit left behind. The workflow sweeps with the kill grace, at least PT3H,
as files being written by a running publish or compaction are listed by
nothing until their commit.`,
		Example: `  starter kill wiki --dry-run
  starter kill wiki --grace PT1H -o json`,
		Args: exactlyOneDataSource,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			ctx, ds := cmd.Context(), args[0]
			g, err := domain.ParseDuration(grace)
			if err != nil {
				return usageErrorf("--grace: %v", err)
			}
			sg, err := domain.ParseDuration(sweepGrace)
			if err != nil {
				return usageErrorf("--sweep-grace: %v", err)
			}
			var res killResult
			err = a.withLake(ctx, lf, lake.Config{}, func(pool *pgxpool.Pool, l *lake.Lake) error {
				k := lifecycle.Killer{Store: pgstore.New(pool), Deep: l.Deep(), Tables: l}
				if res.Result, err = k.Kill(ctx, ds, g, dryRun); err != nil {
					return err
				}
				res.Orphans, err = k.Sweep(ctx, ds, sg, dryRun)
				return err
			})
			if err != nil {
				return err
			}
			return a.out.print(res)
		}),
	}
	lf.add(cmd.Flags())
	cmd.Flags().StringVar(&grace, "grace", "P1D", "kill only segments unused for longer than this (ISO-8601 or Go duration)")
	cmd.Flags().StringVar(&sweepGrace, "sweep-grace", "PT3H", "sweep only orphaned files older than this; while ingestion or compaction runs keep it above the longest publish or compaction attempt (PT3H)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "report what would be deleted, delete nothing")
	return cmd
}

// killResult is the kill and then the orphan sweep.
type killResult struct {
	lifecycle.Result
	Orphans lifecycle.SweepResult `json:"orphans"`
}

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
	verb = "deleted"
	if r.DryRun {
		verb = "would delete"
	}
	fmt.Fprintf(w, "orphans (files nothing lists, modified before %s): %s %d (%d bytes)\n", r.Orphans.Before.Format(time.RFC3339), verb, len(r.Orphans.Deleted), r.Orphans.Bytes)
	for _, o := range r.Orphans.Deleted {
		what := ""
		if o.Unfinished {
			what = " (a write its writer never finished)"
		}
		fmt.Fprintf(w, "  %s %s%s\n", verb, o.URI, what)
	}
	return nil
}
