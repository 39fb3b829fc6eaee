package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"handoff/internal/domain"
	"handoff/internal/pgstore"
	"handoff/workflows"
)

func (a *app) compactionCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "compaction set|show|status|stop DS",
		Short: "Compact a datasource's small segments while ingestion goes on",
		Long: `compaction manages a datasource's compaction (docs/LIFECYCLE.md): a Temporal
workflow, compaction/DS, that merges the used segments of each settled
interval into as few segments as the config's targets allow, and swaps
them in (with the Iceberg replace snapshot) in one Postgres transaction.

  set DS -f config.json   records the config as the datasource's next version
                          and starts the workflow (or wakes it)
  show DS                 the config in force, with its version
  status DS               the workflow's state: intervals pending and running,
                          what it did, conflicts, recent errors
  stop DS                 lets the running compactions finish, then ends`,
	}
	cmd.AddCommand(a.compactionSetCommand(), a.compactionShowCommand(), a.compactionStatusCommand(), a.compactionStopCommand())
	return cmd
}

func exactlyOneDataSource(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usageErrorf("%s needs one datasource name (e.g. %s wiki)", cmd.CommandPath(), cmd.CommandPath())
	}
	if err := domain.ValidateName("datasource", args[0]); err != nil {
		return usageErrorf("%v", err)
	}
	return nil
}

func (a *app) compactionSetCommand() *cobra.Command {
	var file, dbURL string
	cmd := &cobra.Command{
		Use:   "set DS -f config.json",
		Short: "Record a datasource's compaction config and start (or wake) its compaction",
		Long: `set reads a compaction config (JSON; - for stdin), fills in the defaults,
validates it, appends it to the datasource's config history in the metadata
database (unless it equals the latest) and starts the workflow
compaction/DS, or wakes it when it runs, so it plans with the new config at
once. Fields and defaults: targetRowsPerSegment 5000000,
targetBytesPerSegment 536870912, skipOffsetFromLatest PT1H,
maxConcurrentCompactions 1, period PT5M, queryGranularity unset (a
coarser one re-rolls compacted intervals up to it); dataSource may be left
out.`,
		Example: `  echo '{"targetRowsPerSegment": 1000000, "skipOffsetFromLatest": "PT10M"}' | starter compaction set wiki -f -`,
		Args:    exactlyOneDataSource,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			ctx, ds := cmd.Context(), args[0]
			cfg, raw, err := a.readCompactionConfig(file, ds)
			if err != nil {
				return err
			}
			r, err := a.record(ctx, dbURL, ds, compactionConfigDoc, raw, func(s *pgstore.Store) error {
				return fitsDataSource(ctx, s, cfg)
			})
			if err != nil {
				return err
			}
			res := compactionSetResult{DataSource: ds, WorkflowID: workflows.CompactionWorkflowID(ds), Config: cfg,
				Version: r.Version, Recorded: r.Recorded, RunID: r.RunID}
			return a.out.print(res)
		}),
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "compaction config JSON file (- for stdin)")
	_ = cmd.MarkFlagRequired("file")
	addDatabaseFlag(cmd, &dbURL)
	return cmd
}

func addDatabaseFlag(cmd *cobra.Command, dbURL *string) {
	cmd.Flags().StringVar(dbURL, "database-url", "", "Postgres URL of the metadata database")
	bindEnv(cmd.Flags(), "database-url", "DATABASE_URL")
}

// readCompactionConfig reads, completes and validates a config file for
// ds; raw is the config with its defaults, as recorded.
func (a *app) readCompactionConfig(path, ds string) (domain.CompactionConfig, json.RawMessage, error) {
	data, path, err := a.readDoc(path)
	if err != nil {
		return domain.CompactionConfig{}, nil, fmt.Errorf("read compaction config: %w", err)
	}
	var probe struct {
		DataSource *string `json:"dataSource"`
	}
	if json.Unmarshal(data, &probe) == nil && probe.DataSource != nil && *probe.DataSource != ds {
		return domain.CompactionConfig{}, nil, usageErrorf("compaction config %s: dataSource is %q, but the command names %q", path, *probe.DataSource, ds)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return domain.CompactionConfig{}, nil, fmt.Errorf("invalid compaction config %s: %w", path, err)
	}
	m["dataSource"] = ds
	data, _ = json.Marshal(m)
	cfg, err := domain.ParseCompactionConfig(data)
	if err != nil {
		return domain.CompactionConfig{}, nil, fmt.Errorf("invalid compaction config %s: %w", path, err)
	}
	raw, _ := json.Marshal(cfg)
	return cfg, raw, nil
}

// fitsDataSource refuses a config whose queryGranularity does not fit the
// datasource's latest spec (domain.CompactionConfig.CheckGranularity); a
// datasource no spec writes into yet is checked when compaction plans.
func fitsDataSource(ctx context.Context, s *pgstore.Store, cfg domain.CompactionConfig) error {
	b, ok, err := s.LatestSpecOf(ctx, cfg.DataSource)
	if err != nil || !ok {
		return err
	}
	spec, err := domain.ParseSpec(b)
	if err != nil {
		return fmt.Errorf("the latest spec of datasource %s: %w", cfg.DataSource, err)
	}
	if err := cfg.CheckGranularity(spec.DataSchema.GranularitySpec); err != nil {
		return fmt.Errorf("invalid compaction config for datasource %s: %w", cfg.DataSource, err)
	}
	return nil
}

// readDoc reads a file, or stdin for "-"; name is what errors call it.
func (a *app) readDoc(path string) (data []byte, name string, err error) {
	if path == "-" {
		data, err = io.ReadAll(a.io.Stdin)
		return data, "stdin", err
	}
	data, err = os.ReadFile(path)
	return data, path, err
}

// startLifecycle starts the datasource's compaction workflow, which also
// applies its retention rules, or wakes it when it runs.
func (a *app) startLifecycle(ctx context.Context, ds string) (runID string, err error) {
	c, err := a.temporal(ctx)
	if err != nil {
		return "", err
	}
	wid := workflows.CompactionWorkflowID(ds)
	run, err := c.SignalWithStartWorkflow(ctx, wid, workflows.SignalCompactionWake, nil,
		client.StartWorkflowOptions{ID: wid, TaskQueue: workflows.TaskQueue},
		workflows.CompactionWorkflowName, workflows.CompactionInput{DataSource: ds})
	if err != nil {
		return "", fmt.Errorf("start %s: %w", wid, err)
	}
	return run.GetRunID(), nil
}

type compactionSetResult struct {
	DataSource string                  `json:"dataSource"`
	Version    int                     `json:"version"`
	Recorded   bool                    `json:"recorded"`
	WorkflowID string                  `json:"workflowId"`
	RunID      string                  `json:"runId"`
	Config     domain.CompactionConfig `json:"config"`
}

func (r compactionSetResult) writeText(w io.Writer) error {
	what := "recorded as version"
	if !r.Recorded {
		what = "unchanged: version"
	}
	_, err := fmt.Fprintf(w, "compaction config of %s %s %d; %s running (run %s)\n", r.DataSource, what, r.Version, r.WorkflowID, r.RunID)
	return err
}

func (a *app) compactionShowCommand() *cobra.Command {
	var dbURL string
	cmd := &cobra.Command{
		Use:   "show DS",
		Short: "Show the compaction config in force for a datasource",
		Args:  exactlyOneDataSource,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			ctx, ds := cmd.Context(), args[0]
			rec, cfg, err := latest(ctx, a, dbURL, ds, compactionConfigDoc, domain.ParseCompactionConfig)
			if err != nil {
				return err
			}
			return a.out.print(compactionShowResult{DataSource: ds, Version: rec.Version, CreatedAt: rec.CreatedAt, Config: cfg})
		}),
	}
	addDatabaseFlag(cmd, &dbURL)
	return cmd
}

type compactionShowResult struct {
	DataSource string                  `json:"dataSource"`
	Version    int                     `json:"version"`
	CreatedAt  time.Time               `json:"createdAt"`
	Config     domain.CompactionConfig `json:"config"`
}

func (r compactionShowResult) writeText(w io.Writer) error {
	c := r.Config
	_, err := fmt.Fprintf(w, "compaction config of %s, version %d (%s)\n  targetRowsPerSegment      %d\n  targetBytesPerSegment     %d\n  skipOffsetFromLatest      %s\n  maxConcurrentCompactions  %d\n  period                    %s\n",
		r.DataSource, r.Version, r.CreatedAt.UTC().Format(time.RFC3339), c.TargetRowsPerSegment, c.TargetBytesPerSegment,
		c.SkipOffsetFromLatest.D(), c.MaxConcurrentCompactions, c.Period.D())
	if err == nil && c.QueryGranularity != "" {
		_, err = fmt.Fprintf(w, "  queryGranularity          %s (re-rollup)\n", c.QueryGranularity)
	}
	return err
}

func (a *app) compactionStatusCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "status DS",
		Short: "Show what a datasource's compaction is doing and has done",
		Args:  exactlyOneDataSource,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			st, err := a.queryCompaction(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.out.print(compactionStatusResult(st))
		}),
	}
}

// queryCompaction asks compaction/DS for its status.
func (a *app) queryCompaction(ctx context.Context, ds string) (workflows.CompactionStatus, error) {
	var st workflows.CompactionStatus
	c, err := a.temporal(ctx)
	if err != nil {
		return st, err
	}
	wid := workflows.CompactionWorkflowID(ds)
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	v, err := c.QueryWorkflow(qctx, wid, "", workflows.QueryStatus)
	switch {
	case isNotFound(err):
		return st, notFoundErrorf("%s is not running: start it with starter compaction set %s -f config.json", wid, ds)
	case err != nil:
		return st, fmt.Errorf("query %s of %s: %w", workflows.QueryStatus, wid, err)
	}
	if err := v.Get(&st); err != nil {
		return st, fmt.Errorf("decode %s of %s: %w", workflows.QueryStatus, wid, err)
	}
	return st, nil
}

type compactionStatusResult workflows.CompactionStatus

func (r compactionStatusResult) writeText(w io.Writer) error {
	state := "compacting"
	switch {
	case r.Stopping:
		state = "stopping"
	case !r.HasConfig:
		state = "no config"
	}
	fmt.Fprintf(w, "compaction of %s: %s, config version %d\n", r.DataSource, state, r.ConfigVersion)
	fmt.Fprintf(w, "  used segments %d, intervals pending %d, running %d; rounds %d, last %s, next %s\n",
		r.UsedSegments, r.Pending, len(r.Running), r.Rounds, fmtTime(r.LastRound), dueText(r.NextRound, time.Now()))
	if r.HasRetention {
		fmt.Fprintf(w, "  retention rules version %d: %d segments dropped\n", r.RetentionVersion, r.Dropped)
	}
	if r.Killed > 0 || r.Swept > 0 {
		fmt.Fprintf(w, "  killed: the files of %d unused segments, %d bytes; swept: %d orphaned files, %d bytes\n", r.Killed, r.KilledBytes, r.Swept, r.SweptBytes)
	}
	fmt.Fprintf(w, "  done %d: segments %d → %d, rows %d → %d, bytes %d → %d; conflicts %d, failed %d\n",
		r.Done, r.SegmentsIn, r.SegmentsOut, r.RowsIn, r.RowsOut, r.BytesIn, r.BytesOut, r.Conflicts, r.Failed)
	for _, run := range r.Running {
		fmt.Fprintf(w, "  running %s: %s/%s, %d segments, %d rows, since %s\n", run.Name, fmtTime(run.Start), fmtTime(run.End), run.Segments, run.Rows, fmtTime(run.StartedAt))
	}
	for _, o := range r.Recent {
		fmt.Fprintf(w, "  %s %s: %s/%s, %d → %d segments", o.Result, o.Name, fmtTime(o.Start), fmtTime(o.End), o.Segments, o.SegmentsOut)
		if o.Error != "" {
			fmt.Fprintf(w, ": %s", o.Error)
		}
		fmt.Fprintln(w)
	}
	for _, e := range r.RecentErrors {
		fmt.Fprintf(w, "  error at %s: %s\n", fmtTime(e.Time), e.Message)
	}
	return nil
}

// dueText says when a round is due: a time in the past is not shown as if
// it were to come (a round waits for what it runs, which may wait for a
// worker to be found dead and its activities retried).
func dueText(due, now time.Time) string {
	switch {
	case due.IsZero():
		return "-"
	case due.After(now):
		return fmt.Sprintf("%s (in %s)", fmtTime(due), due.Sub(now).Round(time.Second))
	default:
		return fmt.Sprintf("due since %s (%s ago: waiting for the running round's activities)", fmtTime(due), now.Sub(due).Round(time.Second))
	}
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func (a *app) compactionStopCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "stop DS",
		Short: "Stop a datasource's compaction once its running compactions finish",
		Args:  exactlyOneDataSource,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			ds := args[0]
			wid := workflows.CompactionWorkflowID(ds)
			if err := a.stopCompaction(cmd.Context(), wid); err != nil {
				return err
			}
			return a.out.print(compactionStopResult{DataSource: ds, WorkflowID: wid})
		}),
	}
}

// stopCompaction signals the workflow wid to stop once its running
// compactions finish.
func (a *app) stopCompaction(ctx context.Context, wid string) error {
	c, err := a.temporal(ctx)
	if err != nil {
		return err
	}
	err = c.SignalWorkflow(ctx, wid, "", workflows.SignalStop, workflows.StopSignal{})
	switch {
	case isNotFound(err):
		return notFoundErrorf("%s is not running", wid)
	case err != nil:
		return fmt.Errorf("stop %s: %w", wid, err)
	}
	return nil
}

type compactionStopResult struct {
	DataSource string `json:"dataSource"`
	WorkflowID string `json:"workflowId"`
}

func (r compactionStopResult) writeText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "asked %s to stop once its running compactions finish\n", r.WorkflowID)
	return err
}
