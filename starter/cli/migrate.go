package cli

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver

	"github.com/spf13/cobra"

	"handoff/migrations"
)

func (a *app) migrateCommand() *cobra.Command {
	var dbURL string
	cmd := &cobra.Command{
		Use:   "migrate up|status",
		Short: "Apply or list the metadata database migrations",
		Example: `  DATABASE_URL=postgres://handoff:handoff@localhost:5432/handoff starter migrate up
  starter migrate status --database-url postgres://localhost/handoff -o json`,
		// A RunE, so `migrate` and `migrate bogus` are usage errors, not help.
		RunE: a.action(func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("unknown migrate command %q: want up or status", args[0])
			}
			return usageErrorf("migrate needs a command: up or status")
		}),
	}
	cmd.PersistentFlags().StringVar(&dbURL, "database-url", "", "Postgres URL of the metadata database")
	bindEnv(cmd.PersistentFlags(), "database-url", "DATABASE_URL")

	cmd.AddCommand(&cobra.Command{
		Use:     "up",
		Short:   "Apply every pending migration",
		Example: `  starter migrate up --database-url postgres://handoff:handoff@localhost:5432/handoff`,
		Args:    cobra.NoArgs,
		RunE: a.action(func(cmd *cobra.Command, _ []string) error {
			return a.withDB(cmd.Context(), dbURL, func(db *sql.DB) error {
				applied, err := migrations.Up(cmd.Context(), db)
				if err != nil {
					return err
				}
				return a.out.print(migrateUpResult{Applied: append([]int64{}, applied...)})
			})
		}),
	}, &cobra.Command{
		Use:     "status",
		Short:   "List every migration and whether it is applied",
		Example: `  starter migrate status --database-url postgres://handoff:handoff@localhost:5432/handoff`,
		Args:    cobra.NoArgs,
		RunE: a.action(func(cmd *cobra.Command, _ []string) error {
			return a.withDB(cmd.Context(), dbURL, func(db *sql.DB) error {
				vs, err := migrations.Status(cmd.Context(), db)
				if err != nil {
					return err
				}
				res := migrateStatusResult{Migrations: make([]migrationState, len(vs))}
				for i, v := range vs {
					res.Migrations[i] = migrationState{Version: v.Version, Source: v.Source, Applied: v.Applied}
				}
				return a.out.print(res)
			})
		}),
	})
	return cmd
}

// withDB opens and pings the database, so a bad URL or a down server fails
// within dialTimeout, before any migration work.
func (a *app) withDB(ctx context.Context, dbURL string, fn func(*sql.DB) error) error {
	if dbURL == "" {
		return usageErrorf("no database: set --database-url or DATABASE_URL")
	}
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer db.Close()
	pingCtx, cancel := context.WithTimeout(ctx, a.dialTimeout)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		return fmt.Errorf("cannot reach Postgres: %w", err)
	}
	return fn(db)
}

type migrateUpResult struct {
	Applied []int64 `json:"applied"`
}

func (r migrateUpResult) writeText(w io.Writer) error {
	if len(r.Applied) == 0 {
		_, err := fmt.Fprintln(w, "database is up to date: no pending migrations")
		return err
	}
	s := make([]string, len(r.Applied))
	for i, v := range r.Applied {
		s[i] = strconv.FormatInt(v, 10)
	}
	_, err := fmt.Fprintf(w, "applied migrations %s\n", strings.Join(s, ", "))
	return err
}

type migrationState struct {
	Version int64  `json:"version"`
	Source  string `json:"source"`
	Applied bool   `json:"applied"`
}

type migrateStatusResult struct {
	Migrations []migrationState `json:"migrations"`
}

func (r migrateStatusResult) writeText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tSTATE\tSOURCE")
	for _, m := range r.Migrations {
		state := "pending"
		if m.Applied {
			state = "applied"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\n", m.Version, state, m.Source)
	}
	return tw.Flush()
}
