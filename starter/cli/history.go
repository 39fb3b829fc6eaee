package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"handoff/internal/domain"
	"handoff/internal/pgstore"
	"handoff/internal/redact"
)

func (a *app) historyCommand() *cobra.Command {
	var dbURL string
	cmd := &cobra.Command{
		Use:   "history ID",
		Short: "List the specs a supervisor accepted, oldest first",
		Long: `history reads from the metadata database every spec version the supervisor
accepted (at start and by update): in text one line each, with what changed
since the version before; in json the specs themselves.`,
		Example: `  starter history orders --database-url postgres://handoff:handoff@localhost:5432/handoff
  DATABASE_URL=postgres://localhost/handoff starter history orders -o json | jq '.[-1].spec'`,
		Args: exactlyOneID,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			ctx, id := cmd.Context(), args[0]
			var recs []pgstore.SpecRecord
			err := a.withPool(ctx, dbURL, func(pool *pgxpool.Pool) error {
				var err error
				recs, err = pgstore.New(pool).SpecHistory(ctx, id)
				return err
			})
			if err != nil {
				return err
			}
			if len(recs) == 0 {
				return a.unknownSupervisor(ctx, id)
			}
			res := make(historyResult, len(recs))
			for i, r := range recs {
				res[i] = specVersion{Version: r.Version, CreatedAt: r.CreatedAt, ChangedBy: r.ChangedBy, Reason: r.Reason, Spec: r.Spec, IsolationLevel: isolationOf(r.Spec)}
			}
			return a.out.print(res)
		}),
	}
	cmd.Flags().StringVar(&dbURL, "database-url", "", "Postgres URL of the metadata database")
	bindEnv(cmd.Flags(), "database-url", "DATABASE_URL")
	return cmd
}

// withPool opens a pool and pings it, so a bad URL or a down server fails
// within dialTimeout.
func (a *app) withPool(ctx context.Context, dbURL string, fn func(*pgxpool.Pool) error) error {
	pool, err := a.openPool(ctx, dbURL, nil)
	if err != nil {
		return err
	}
	defer pool.Close()
	return fn(pool)
}

// openPool connects to the metadata database; tune, when not nil, sets
// the pool's configuration first.
func (a *app) openPool(ctx context.Context, dbURL string, tune func(*pgxpool.Config)) (*pgxpool.Pool, error) {
	if dbURL == "" {
		return nil, usageErrorf("no database: set --database-url or DATABASE_URL")
	}
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		// pgx's parse errors can quote the URL, password included.
		return nil, usageErrorf("invalid --database-url: not a Postgres URL or connection string")
	}
	if tune != nil {
		tune(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to Postgres: %w", redact.Error(err))
	}
	pingCtx, cancel := context.WithTimeout(ctx, a.dialTimeout)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("cannot reach Postgres: %w", err)
	}
	return pool, nil
}

// unknownSupervisor is supervisorNotFound for commands that do not otherwise
// need Temporal: the running supervisors are named when Temporal answers.
func (a *app) unknownSupervisor(ctx context.Context, id string) error {
	c, err := a.temporal(ctx)
	if err != nil {
		a.log.Debug("cannot list running supervisors", "err", err)
		return supervisorNotFound(ctx, nil, id)
	}
	return supervisorNotFound(ctx, c, id)
}

// specVersion is one accepted spec, as history prints it.
type specVersion struct {
	Version   int       `json:"version"`
	CreatedAt time.Time `json:"createdAt"`
	ChangedBy string    `json:"changedBy"` // user or autoscaler
	Reason    string    `json:"reason,omitempty"`
	// IsolationLevel is the spec's effective isolation.level.
	IsolationLevel string          `json:"isolationLevel"`
	Spec           json.RawMessage `json:"spec"`
}

// historyResult prints as a json array.
type historyResult []specVersion

func (r historyResult) writeText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tACCEPTED\tBY\tSPEC")
	var prev json.RawMessage
	for _, v := range r {
		line := specSummary(v.Spec)
		if prev != nil {
			line += "; changed: " + changedFields(prev, v.Spec)
		}
		if v.Reason != "" {
			line += "; why: " + v.Reason
		}
		by := v.ChangedBy
		if by == "" {
			by = pgstore.ChangedByUser
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", v.Version, v.CreatedAt.UTC().Format(time.RFC3339), by, line)
		prev = v.Spec
	}
	return tw.Flush()
}

// specSummary is the one-line summary of a stored spec. It decodes
// leniently: a spec stored by another version need not validate today.
func specSummary(raw json.RawMessage) string {
	var s domain.Spec
	if err := json.Unmarshal(raw, &s); err != nil {
		return "(unreadable spec: " + err.Error() + ")"
	}
	return fmt.Sprintf("topic %s → datasource %s, %s, %s", s.IOConfig.Source(), s.DataSchema.DataSource, plural(s.IOConfig.TaskCount, "task group"), s.IOConfig.IsolationLevel())
}

// changedFields names the fields (dotted paths; lists count as one field)
// that differ between two stored specs.
func changedFields(before, after json.RawMessage) string {
	a, b := map[string]string{}, map[string]string{}
	flattenJSON(before, "", a)
	flattenJSON(after, "", b)
	var changed []string
	for k, v := range b {
		if a[k] != v {
			changed = append(changed, k)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			changed = append(changed, k)
		}
	}
	if len(changed) == 0 {
		return "nothing"
	}
	slices.Sort(changed)
	return strings.Join(changed, ", ")
}

// flattenJSON records every leaf of an object under its dotted path, in
// compact JSON.
func flattenJSON(raw json.RawMessage, prefix string, into map[string]string) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		var buf bytes.Buffer
		if json.Compact(&buf, raw) != nil {
			buf.Reset()
			buf.Write(raw)
		}
		into[prefix] = buf.String()
		return
	}
	for k, v := range obj {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		flattenJSON(v, path, into)
	}
}

// isolationOf is a stored spec's effective isolation level ("" when it
// does not decode).
func isolationOf(raw json.RawMessage) string {
	var s domain.Spec
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s.IOConfig.IsolationLevel()
}
