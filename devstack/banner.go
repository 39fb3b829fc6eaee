package main

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"handoff/workflows"
)

func (s *stack) printBanner() {
	rel := func(p string) string {
		if r, err := filepath.Rel(s.l.root, p); err == nil {
			return r
		}
		return p
	}
	id, topic := s.spec.ID, s.spec.IOConfig.Topic
	wfURL := fmt.Sprintf("%s/namespaces/%s/workflows/%s", temporalUIURL, temporalNS,
		url.PathEscape(workflows.SupervisorWorkflowID(id)))
	psql := fmt.Sprintf("psql '%s'", s.dbURL)
	gen := fmt.Sprintf("generator at %v events/s", s.cfg.rate)
	switch {
	case s.cfg.noGenerator:
		gen = "no generator (--no-generator): produce your own"
	case s.cfg.rate == 0:
		gen = "generator as fast as possible"
	}
	starter := rel(s.l.dev("bin", "starter"))

	var b strings.Builder
	rule := strings.Repeat("─", 78)
	fmt.Fprintf(&b, "\n%s\n handoff dev stack is running (supervisor %q from %s). Ctrl-C stops it all.\n\n", rule, id, s.cfg.spec)
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(w, " %s\t%s\n", k, v) }
	row("Temporal UI", wfURL)
	row("Worker", fmt.Sprintf("http://localhost:%d/status  (/metrics, /readyz, /healthz)   log: %s", workerHTTPPort, rel(s.worker.logPath)))
	row("Kafka", fmt.Sprintf("%s  topic %q, %d partitions (in-process kfake), %s", strings.Join(s.kafkaAddrs, ","), topic, s.cfg.partitions, gen))
	row("Postgres", psql)
	row("  segments", psql+` -c 'select id, rows, bytes, interval_start, created_at from segments order by created_at desc limit 20'`)
	row("  offsets", psql+` -c 'select topic, partition, next_offset, updated_at from datasource_offsets order by partition'`)
	row("Segment files", rel(s.l.dev("deep"))+"/   (open sequences stage in "+rel(s.l.dev("staging"))+"/)")
	if p := s.spec.TuningConfig.IntermediateHandoffPeriod; p > 0 {
		row("", fmt.Sprintf("a segment is published about every %v (tuningConfig.intermediateHandoffPeriod)", p.D()))
	}
	row("Logs", strings.Join([]string{rel(s.worker.logPath), rel(s.temporal.logPath), rel(s.l.dev("postgres.log")), rel(s.catalog.logPath)}, "  "))
	row("Supervisor", fmt.Sprintf("%s status %s         # state, offsets, lag, groups", starter, id))
	row("", fmt.Sprintf("%s checkpoint %s     # publish the open sequences now", starter, id))
	row("", fmt.Sprintf("%s stop %s --wait    # publish everything, then stop", starter, id))
	row("Iceberg table", fmt.Sprintf("%s table %s --deep-storage %s --database-url '%s'", starter, id, rel(s.l.dev("deep")), s.dbURL))
	row("", "  the datasource's table, made by its first publish: snapshots, offsets, schema (docs/TABLES.md)")
	row("Iceberg REST", fmt.Sprintf("%s  (prefix handoff; bearer token in %s; log: %s)", catalogURL, rel(s.l.dev("catalog-token")), rel(s.catalog.logPath)))
	row("", fmt.Sprintf(`curl -H "Authorization: Bearer $(cat %s)" %s/v1/handoff/namespaces/handoff/tables/%s`, rel(s.l.dev("catalog-token")), catalogURL, s.spec.DataSchema.DataSource))
	row("", "  DuckDB, Trino, Spark, pyiceberg, Snowflake attach here (docs/TABLES.md)")
	w.Flush()
	fmt.Fprintf(&b, "\n Every start wipes .dev/pg, .dev/temporal.db, .dev/deep and .dev/staging: Kafka\n"+
		" here lives in memory, so offsets and workflows from an earlier run would point\n"+
		" past the end of the new, empty topic.\n%s\n\n", rule)
	fmt.Fprint(s.out, b.String())
}
