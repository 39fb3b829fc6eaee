package cli

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"handoff/internal/domain"
	"handoff/internal/lake"
)

func (a *app) tableCreateCommand() *cobra.Command {
	var (
		flags  lakeFlags
		maxAge time.Duration
		minSn  int
	)
	cmd := &cobra.Command{
		Use:   "create DS",
		Short: "Build the Iceberg table of a datasource that published segments before it had one",
		Long: `create builds the table of datasource DS from its used segments, once and
atomically: in one transaction holding the datasource's lock (no publish
commits in between) it refuses if the table exists, creates the table with
the union of the segments' columns, appends every used segment as one
snapshot whose summary carries the stored offsets (handoff.offsets), and
inserts the catalog row. Publishes after it commit to the table.

The table is partitioned for the segmentGranularity of the latest spec
that writes DS, or coarser when a segment would straddle its partitions;
the next publish moves it to the spec's. Segments whose __time is in
milliseconds (written before microseconds) get no __time bounds in the
table: their Parquet statistics are not in Iceberg's unit.

A spec that writes DS with ioConfig.icebergTable false is refused: its
publishes would not reach the table. --deep-storage, --iceberg-* mean what
they mean to the worker; the retention settings are written into the
table's properties, for other engines' maintenance.`,
		Example: `  starter table create wiki --deep-storage .dev/deep
  DATABASE_URL=postgres://handoff:handoff@localhost:5432/handoff HANDOFF_DEEP_STORAGE=s3://handoff/segments starter table create wiki`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("%s takes one datasource, got %d arguments (e.g. %s wiki)", cmd.Name(), len(args), cmd.CommandPath())
			}
			if err := domain.ValidateName("datasource", args[0]); err != nil {
				return usageErrorf("%v", err)
			}
			return nil
		},
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			ds, ctx := args[0], cmd.Context()
			if maxAge <= 0 || minSn < 1 {
				return usageErrorf("--iceberg-snapshot-max-age must be positive and --iceberg-min-snapshots 1 or more")
			}
			var res tableCreateResult
			cfg := lake.Config{MaxSnapshotAge: maxAge, MinSnapshots: minSn}
			err := a.withLake(ctx, flags, cfg, func(pool *pgxpool.Pool, l *lake.Lake) error {
				specs, err := writersOf(ctx, pool, ds)
				if err != nil {
					return err
				}
				if off, ok := tableOff(specs); ok {
					return fmt.Errorf("supervisor %s's spec (version %d) sets ioConfig.icebergTable false: its publishes would not reach the table; turn it on first (starter update)", off.Supervisor, off.Version)
				}
				var gran domain.Granularity
				if len(specs) > 0 {
					gran = specs[0].Granularity
				}
				b, err := l.CreateFromSegments(ctx, ds, gran)
				switch {
				case errors.Is(err, lake.ErrTableExists):
					return fmt.Errorf("%w: `starter table --datasource %s` shows it", err, ds)
				case err != nil:
					return err
				}
				res = newTableCreateResult(ds, b)
				return nil
			})
			if err != nil {
				return err
			}
			return a.out.print(res)
		}),
	}
	flags.add(cmd.Flags())
	cmd.Flags().DurationVar(&maxAge, "iceberg-snapshot-max-age", lake.DefaultMaxAge, "table snapshots older than this expire")
	bindEnv(cmd.Flags(), "iceberg-snapshot-max-age", "HANDOFF_ICEBERG_SNAPSHOT_MAX_AGE")
	cmd.Flags().IntVar(&minSn, "iceberg-min-snapshots", lake.DefaultMinSnapshots, "the last this many table snapshots never expire")
	bindEnv(cmd.Flags(), "iceberg-min-snapshots", "HANDOFF_ICEBERG_MIN_SNAPSHOTS")
	return cmd
}

// tableCreateResult is what table create prints.
type tableCreateResult struct {
	DataSource       string                    `json:"dataSource"`
	Identifier       string                    `json:"identifier"`
	MetadataLocation string                    `json:"metadataLocation"`
	SnapshotID       int64                     `json:"snapshotId"`
	Segments         int                       `json:"segments"`
	Rows             int64                     `json:"rows"`
	Bytes            int64                     `json:"bytes"`
	Granularity      string                    `json:"segmentGranularity"`
	MillisFiles      int                       `json:"millisecondFiles"`
	Offsets          map[string]domain.Offsets `json:"offsets"` // by topic
}

func newTableCreateResult(ds string, b lake.Backfill) tableCreateResult {
	r := tableCreateResult{
		DataSource: ds,
		Identifier: b.Identifier, MetadataLocation: b.MetadataLocation, SnapshotID: b.SnapshotID, Segments: b.Segments,
		Rows: b.Rows, Bytes: b.Bytes, Granularity: string(b.Granularity), MillisFiles: b.MillisFiles, Offsets: b.Offsets,
	}
	if r.Offsets == nil {
		r.Offsets = map[string]domain.Offsets{}
	}
	return r
}

func (r tableCreateResult) writeText(w io.Writer) error {
	fmt.Fprintf(w, "created table %s from %s: %d rows, %s (%d bytes), partitioned for segmentGranularity %s\n",
		r.Identifier, plural(r.Segments, "segment"), r.Rows, humanBytes(r.Bytes), r.Bytes, r.Granularity)
	topics := make([]string, 0, len(r.Offsets))
	for t, o := range r.Offsets {
		topics = append(topics, fmt.Sprintf("topic %s %s", t, o))
	}
	sort.Strings(topics)
	offsets := "no stored offsets"
	if len(topics) > 0 {
		offsets = "the stored offsets: " + strings.Join(topics, "; ")
	}
	fmt.Fprintf(w, "snapshot %d carries %s\nmetadata %s\n", r.SnapshotID, offsets, r.MetadataLocation)
	if r.MillisFiles > 0 {
		fmt.Fprintf(w, "%s of them store __time in milliseconds (written before microseconds): read through the table's name mapping, with no __time bounds\n",
			plural(r.MillisFiles, "segment"))
	}
	_, err := fmt.Fprintf(w, "publishes from now on commit to it; `starter table --datasource %s` shows it\n", r.DataSource)
	return err
}
