package cli

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"handoff/internal/domain"
	"handoff/internal/lake"
	"handoff/internal/pgstore"
	"handoff/internal/redact"
	"handoff/internal/storage"
)

// defaultDeepStorage is the worker's default HANDOFF_DEEP_STORAGE.
const defaultDeepStorage = "./data/deep"

// openDeepTimeout bounds opening deep storage (an s3:// store asks
// whether its bucket exists).
const openDeepTimeout = 30 * time.Second

// lakeFlags are where the tables live, as the worker is told: the
// metadata database, deep storage (the warehouse), catalog and namespace.
type lakeFlags struct {
	dbURL, deep, catalog, namespace string
}

func (f *lakeFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.dbURL, "database-url", "", "Postgres URL of the metadata database")
	bindEnv(fs, "database-url", "DATABASE_URL")
	fs.StringVar(&f.deep, "deep-storage", defaultDeepStorage, "the worker's deep storage: a directory, file:///abs/path or s3://bucket/prefix (S3 from HANDOFF_S3_ENDPOINT, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN)")
	bindEnv(fs, "deep-storage", "HANDOFF_DEEP_STORAGE")
	fs.StringVar(&f.catalog, "iceberg-catalog", lake.DefaultCatalog, "catalog_name of the Iceberg tables in Postgres")
	bindEnv(fs, "iceberg-catalog", "HANDOFF_ICEBERG_CATALOG")
	fs.StringVar(&f.namespace, "iceberg-namespace", lake.DefaultNamespace, "namespace of the Iceberg tables, one per datasource")
	bindEnv(fs, "iceberg-namespace", "HANDOFF_ICEBERG_NAMESPACE")
}

// withLake opens the metadata database and deep storage and runs fn with
// the tables over them.
func (a *app) withLake(ctx context.Context, f lakeFlags, cfg lake.Config, fn func(*pgxpool.Pool, *lake.Lake) error) error {
	return a.withPool(ctx, f.dbURL, func(pool *pgxpool.Pool) error {
		deep, err := a.openDeep(ctx, f.deep)
		if err != nil {
			return err
		}
		cfg.Catalog, cfg.Namespace = f.catalog, f.namespace
		return fn(pool, lake.New(pool, deep, cfg))
	})
}

// openDeep opens the worker's deep storage at loc, which must exist.
func (a *app) openDeep(ctx context.Context, loc string) (storage.Store, error) {
	if loc == "" {
		return nil, usageErrorf("no deep storage: set --deep-storage or HANDOFF_DEEP_STORAGE")
	}
	if dir, local := localPath(loc); local {
		// storage.Open would create it; a read of the worker's tables
		// must not make an empty deep storage on a typo.
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, usageErrorf("deep storage %s is not a directory here: give the worker's (--deep-storage or HANDOFF_DEEP_STORAGE; its default is %s)", loc, defaultDeepStorage)
		}
	}
	openCtx, cancel := context.WithTimeout(ctx, openDeepTimeout)
	defer cancel()
	deep, err := storage.Open(openCtx, loc, storage.WithS3(a.s3Config()))
	if err != nil {
		return nil, fmt.Errorf("deep storage: %w", redact.Error(err))
	}
	return deep, nil
}

// s3Config is how the worker reaches S3, from the same variables.
func (a *app) s3Config() storage.S3Config { return storage.S3ConfigFromEnv(a.io.Getenv) }

// localPath is the directory of a local deep storage location (a path or
// file:///abs/path).
func localPath(loc string) (string, bool) {
	if !strings.Contains(loc, "://") {
		return loc, true
	}
	if u, err := url.Parse(loc); err == nil && u.Scheme == "file" {
		return u.Path, true
	}
	return "", false
}

func (a *app) tableCommand() *cobra.Command {
	var (
		flags      lakeFlags
		dataSource string
		snapshots  int
	)
	cmd := &cobra.Command{
		Use:   "table ID | --datasource DS",
		Short: "Show a datasource's Iceberg table: where it is, what it holds, its schema and last snapshots",
		Long: `table reads the Iceberg table of a supervisor's datasource (from its latest
recorded spec) or of DS from the metadata database and deep storage: its
identifier (namespace.table), catalog, warehouse, location and current
metadata file, the current snapshot, rows, data files and bytes (of the
live data files), the columns with their types and field ids, the
partitioning, and the last --snapshots snapshots, newest first, each with
its time, sequence, task group and start and end offsets.

When there is no table it says why: the spec turns it off
(ioConfig.icebergTable false), the datasource published segments before it
had a table (then ` + "`starter table create DS`" + ` builds it from them), or nothing
is published yet (the first publish creates it).

--deep-storage, --iceberg-catalog and --iceberg-namespace mean what they
mean to the worker, and fall back to its environment variables.`,
		Example: `  starter table wiki --deep-storage .dev/deep
  starter table --datasource wiki -o json | jq -r .metadataLocation
  HANDOFF_DEEP_STORAGE=s3://handoff/segments HANDOFF_S3_ENDPOINT=http://localhost:9000 starter table wiki
  starter table create wiki`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			ds, err := idOrDataSource(cmd, args, dataSource)
			if err != nil {
				return err
			}
			if snapshots < 0 {
				return usageErrorf("--snapshots %d: want 0 or more", snapshots)
			}
			ctx := cmd.Context()
			var res tableResult
			err = a.withLake(ctx, flags, lake.Config{}, func(pool *pgxpool.Pool, l *lake.Lake) error {
				var specs []writerSpec
				if len(args) == 1 {
					w, err := a.supervisorSpec(ctx, pgstore.New(pool), args[0])
					if err != nil {
						return err
					}
					ds, specs = w.DataSource, []writerSpec{w}
				} else if specs, err = writersOf(ctx, pool, ds); err != nil {
					return err
				}
				d, err := l.Describe(ctx, ds, snapshots)
				if err != nil {
					return err
				}
				res = newTableResult(d, specs, supervisorArg(args))
				return nil
			})
			if err != nil {
				return err
			}
			return a.out.print(res)
		}),
	}
	flags.add(cmd.Flags())
	cmd.Flags().StringVar(&dataSource, "datasource", "", "show the table of this datasource (instead of a supervisor's)")
	cmd.Flags().IntVar(&snapshots, "snapshots", 10, "how many of the last snapshots to list")
	cmd.AddCommand(a.tableCreateCommand())
	return cmd
}

// idOrDataSource checks that a command got a supervisor ID or
// --datasource, and returns the datasource when given.
func idOrDataSource(cmd *cobra.Command, args []string, dataSource string) (string, error) {
	byDS := cmd.Flags().Changed("datasource")
	switch {
	case len(args) == 1 && byDS:
		return "", usageErrorf("give a supervisor ID or --datasource, not both")
	case len(args) == 0 && !byDS:
		return "", usageErrorf("%s needs a supervisor ID or --datasource (e.g. %s wiki)", cmd.Name(), cmd.CommandPath())
	case len(args) == 1:
		return "", validID(args[0])
	case strings.TrimSpace(dataSource) == "":
		return "", usageErrorf("--datasource is empty")
	}
	if err := domain.ValidateName("--datasource", dataSource); err != nil {
		return "", usageErrorf("%v", err)
	}
	return dataSource, nil
}

func supervisorArg(args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	return ""
}
