package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"handoff/internal/domain"
	"handoff/workflows"
)

func (a *app) retentionCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "retention set|show DS",
		Short: "Set or show a datasource's retention rules (Druid's load and drop rules)",
		Long: `retention manages the rules that drop a datasource's old segments
(docs/LIFECYCLE.md). Rules are read in order and the first that matches a
segment's interval decides; a segment no rule matches is kept. Types, as in
Druid: loadForever, loadByPeriod {period, includeFuture}, dropForever,
dropByPeriod {period, includeFuture}, dropBeforeByPeriod {period}. The
workflow compaction/DS applies them every period: the segments they drop
become unused in one transaction, with an Iceberg delete snapshot.

  set DS -f rules.json   records {"rules": [...]} (or a bare list) as the
                         datasource's next version and starts or wakes
                         compaction/DS
  show DS                the rules in force, with their version`,
	}
	cmd.AddCommand(a.retentionSetCommand(), a.retentionShowCommand())
	return cmd
}

func (a *app) retentionSetCommand() *cobra.Command {
	var file, dbURL string
	cmd := &cobra.Command{
		Use:     "set DS -f rules.json",
		Short:   "Record a datasource's retention rules and start (or wake) the workflow that applies them",
		Example: `  echo '[{"type": "loadByPeriod", "period": "P30D"}, {"type": "dropForever"}]' | starter retention set wiki -f -`,
		Args:    exactlyOneDataSource,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			ctx, ds := cmd.Context(), args[0]
			data, name, err := a.readDoc(file)
			if err != nil {
				return fmt.Errorf("read retention rules: %w", err)
			}
			rules, err := parseRulesFile(data, ds)
			if err != nil {
				return fmt.Errorf("invalid retention rules %s: %w", name, err)
			}
			raw, _ := json.Marshal(rules)
			r, err := a.record(ctx, dbURL, ds, retentionRulesDoc, raw, nil)
			if err != nil {
				return err
			}
			res := retentionSetResult{DataSource: ds, WorkflowID: workflows.CompactionWorkflowID(ds), Rules: rules.Rules,
				Version: r.Version, Recorded: r.Recorded, RunID: r.RunID}
			return a.out.print(res)
		}),
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "retention rules JSON file (- for stdin)")
	_ = cmd.MarkFlagRequired("file")
	addDatabaseFlag(cmd, &dbURL)
	return cmd
}

// parseRulesFile reads {"rules": [...]} or a bare list for ds.
func parseRulesFile(data []byte, ds string) (domain.RetentionRules, error) {
	trimmed := strings.TrimSpace(string(data))
	if strings.HasPrefix(trimmed, "[") {
		trimmed = `{"rules": ` + trimmed + `}`
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(trimmed), &m); err != nil {
		return domain.RetentionRules{}, err
	}
	if v, ok := m["dataSource"]; ok {
		var got string
		if json.Unmarshal(v, &got) != nil || got != ds {
			return domain.RetentionRules{}, usageErrorf("dataSource is %s, but the command names %q", v, ds)
		}
	}
	m["dataSource"], _ = json.Marshal(ds)
	b, _ := json.Marshal(m)
	return domain.ParseRetentionRules(b)
}

type retentionSetResult struct {
	DataSource string                 `json:"dataSource"`
	Version    int                    `json:"version"`
	Recorded   bool                   `json:"recorded"`
	WorkflowID string                 `json:"workflowId"`
	RunID      string                 `json:"runId"`
	Rules      []domain.RetentionRule `json:"rules"`
}

func (r retentionSetResult) writeText(w io.Writer) error {
	what := "recorded as version"
	if !r.Recorded {
		what = "unchanged: version"
	}
	_, err := fmt.Fprintf(w, "retention rules of %s %s %d; %s applies them (run %s)\n", r.DataSource, what, r.Version, r.WorkflowID, r.RunID)
	return err
}

func (a *app) retentionShowCommand() *cobra.Command {
	var dbURL string
	cmd := &cobra.Command{
		Use:   "show DS",
		Short: "Show the retention rules in force for a datasource",
		Args:  exactlyOneDataSource,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			ctx, ds := cmd.Context(), args[0]
			rec, rules, err := latest(ctx, a, dbURL, ds, retentionRulesDoc, domain.ParseRetentionRules)
			if err != nil {
				return err
			}
			return a.out.print(retentionShowResult{DataSource: ds, Version: rec.Version, CreatedAt: rec.CreatedAt, Rules: rules.Rules})
		}),
	}
	addDatabaseFlag(cmd, &dbURL)
	return cmd
}

type retentionShowResult struct {
	DataSource string                 `json:"dataSource"`
	Version    int                    `json:"version"`
	CreatedAt  time.Time              `json:"createdAt"`
	Rules      []domain.RetentionRule `json:"rules"`
}

func (r retentionShowResult) writeText(w io.Writer) error {
	fmt.Fprintf(w, "retention rules of %s, version %d (%s), first match decides, no match keeps:\n", r.DataSource, r.Version, r.CreatedAt.UTC().Format(time.RFC3339))
	for i, rule := range r.Rules {
		fmt.Fprintf(w, "  %d. %s", i+1, rule.Type)
		if rule.Period != 0 {
			fmt.Fprintf(w, " %s", rule.Period.D())
		}
		if rule.IncludeFuture != nil && !*rule.IncludeFuture {
			fmt.Fprint(w, " (not the future)")
		}
		fmt.Fprintln(w)
	}
	return nil
}
