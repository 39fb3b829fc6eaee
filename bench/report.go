package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"handoff/internal/domain"
)

func printReport(w io.Writer, r result) {
	fmt.Fprintf(w, "\n%s, %d cores, %d GiB, %s; %d partitions\n", r.Machine.CPU, r.Machine.Cores, r.Machine.MemoryGiB, r.Machine.Go, r.Partitions)
	if r.CeilingRate > 0 {
		printBacklog(w, r)
	}
	for _, h := range []*handoffResult{r.Handoff, r.HandoffNoTable} {
		if h != nil {
			fmt.Fprintf(w, "\nHandoff latency, %s, checkpoint sent → sequence committed, %d checkpoints × %d groups = %d samples at %.0f events/s: p50 %.0f ms, p95 %.0f ms, max %.0f ms\n",
				tableWord(h.IcebergTable), h.Checkpoints, h.Samples/max(h.Checkpoints, 1), h.Samples, h.Rate, h.P50Millis, h.P95Millis, h.MaxMillis)
		}
	}
	if r.Table != nil {
		printTableCost(w, *r.Table)
	}
	if r.Orchestration != nil {
		printOrchestration(w, *r.Orchestration)
	}
	if r.Many != nil {
		printMany(w, *r.Many)
	}
	if r.Failover != nil {
		printFailover(w, *r.Failover)
	}
	if r.Compaction != nil {
		printCompaction(w, *r.Compaction)
	}
	if len(r.TableGrowth) > 0 {
		printTableGrowth(w, r.TableGrowth)
	}
	if r.Catalog != nil {
		printCatalog(w, *r.Catalog)
	}
}

func printCompaction(w io.Writer, r compactionResult) {
	fmt.Fprintf(w, "\nCompaction of the backlog ingested in sequences of %d rows (a worker of its own, one compaction at a time):\n\n", compactionSegmentRows)
	fmt.Fprintln(w, "| run | seconds | rows/s (in) | rows in → out | segments in → out | bytes in → out | worker CPU-s / M rows | peak worker RSS (GOMEMLIMIT) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, c := range r.Runs {
		fmt.Fprintf(w, "| %s | %.1f | %.0f | %d → %d | %d → %d | %.1f → %.1f MiB | %.1f | %.0f MiB (%s) |\n",
			c.Name, c.Seconds, c.RowsPerSecond, c.RowsIn, c.RowsOut, c.SegmentsIn, c.SegmentsOut,
			float64(c.BytesIn)/(1<<20), float64(c.BytesOut)/(1<<20), c.CPUSecondsPerM, c.PeakRSSMiB, c.MemLimit)
	}
	if b := r.Beside; b != nil {
		fmt.Fprintf(w, "\nIngestion beside a compaction on the same worker: %.0f events/s against %.0f alone (mean of before and after): **%.2f ×**; the compaction ran during %.0f%% of the drain\n",
			b.BesideRate, b.AloneRate, b.Ratio, 100*b.Overlap)
	}
	if i := r.Idle; i != nil {
		fmt.Fprintf(w, "\nIdle compaction workflow: %d history events in %d rounds at period %s = %.1f per round; at the default period (%v) %.0f a day\n",
			i.HistoryEvents, i.Rounds, i.Period, i.EventsPerRound, domain.DefaultCompactionPeriod, i.PerDayDefault)
	}
}

func printBacklog(w io.Writer, r result) {
	fmt.Fprintf(w, "\n%d events (%.0f bytes each on average), taskCount %d\n\n", r.Events, r.MeanEventBytes, r.TaskCount)
	if r.AvroMeanEventBytes > 0 {
		fmt.Fprintf(w, "The Avro backlog (off-avro): the same events, %.0f bytes each on average, registry-framed\n\n", r.AvroMeanEventBytes)
	}
	fmt.Fprintf(w, "Ceiling (kafka-go batch reads, best of 3): %.2f s, %.0f events/s\n", r.CeilingSeconds, r.CeilingRate)
	fmt.Fprintf(w, "Read + parse only (the same reads, each message through the pipeline's JSON parser): %.0f events/s, %.2f × ceiling\n\n",
		r.ParseRate, r.ParseRate/r.CeilingRate)
	if p := r.Peer; p != nil {
		fmt.Fprintf(w, "Peer: %s %s, %d threads, JSONL → one zstd Parquet file sorted by __time, best of %d:", p.Engine, p.Version, p.Threads, len(p.Variants[0].Runs))
		for _, v := range p.Variants {
			fmt.Fprintf(w, " %s %.2f s, %.0f events/s, %d rows;", v.Name, v.Seconds, v.EventsPerSecond, v.Rows)
		}
		fmt.Fprint(w, "\n\n")
	}
	fmt.Fprintln(w, "| variant | seconds | events/s | × DuckDB | × ceiling | × read+parse | worker CPU-s / M events | peak worker RSS | history events / M events (runs) | rows | segments | mean segment |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, v := range r.Variants {
		name := v.Name
		if v.Run > 1 {
			name = fmt.Sprintf("%s (run %d)", v.Name, v.Run)
		}
		peer := "—"
		if v.PeerRatio > 0 {
			peer = fmt.Sprintf("%.2f", v.PeerRatio)
		}
		fmt.Fprintf(w, "| %s | %.1f | %.0f | %s | %.2f | %.2f | %.1f | %.0f MiB | %.0f (%d) | %d | %d | %.1f MiB |\n",
			name, v.Seconds, v.EventsPerSecond, peer, v.CeilingRatio, v.EventsPerSecond/r.ParseRate, v.CPUSecondsPerM, v.PeakRSSMiB,
			v.HistoryPerM, v.WorkflowRuns, v.Rows, v.Segments, float64(v.MeanSegmentBytes)/(1<<20))
	}
	printBreakdown(w, r.Variants)
}

// printBreakdown prints the variants' CPU per event by stage side by side.
func printBreakdown(w io.Writer, vs []variantResult) {
	var with []variantResult
	for _, v := range vs {
		if len(v.Breakdown) > 0 {
			with = append(with, v)
		}
	}
	if len(with) == 0 {
		return
	}
	fmt.Fprint(w, "\nWorker CPU by stage, µs per event (from its CPU profile):\n\n| stage |")
	for _, v := range with {
		fmt.Fprintf(w, " %s |", v.Name)
	}
	fmt.Fprint(w, "\n|---|")
	for range with {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
	for i, st := range with[0].Breakdown {
		fmt.Fprintf(w, "| %s |", st.Stage)
		for _, v := range with {
			c := v.Breakdown[i]
			fmt.Fprintf(w, " %.2f (%.0f%%) |", c.MicrosPerEvent, 100*c.Share)
		}
		fmt.Fprintln(w)
	}
}

func printOrchestration(w io.Writer, r orchestrationResult) {
	fmt.Fprintf(w, "\nOrchestration cost, worker %s (%s; per day extrapolated from the window):\n\n", r.Worker, r.Start)
	fmt.Fprintln(w, "| phase | window | events produced | history events: supervisor + groups | per day | per M events | activities scheduled / day | local activities / day | heartbeats to the server / day |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, p := range []struct {
		name string
		w    *orchestrationWindow
	}{{"idle", r.Idle}, {"steady", r.Steady}} {
		if p.w == nil {
			continue
		}
		v := p.w
		name, perM, hb := p.name, "—", "unknown"
		if v.Rate > 0 {
			name = fmt.Sprintf("%s %.0f/s", p.name, v.Rate)
		}
		if v.Events > 0 {
			perM = fmt.Sprintf("%.0f", v.HistoryPerM)
		}
		if v.HeartbeatsPerDay != nil {
			hb = fmt.Sprintf("%.0f (%d)", *v.HeartbeatsPerDay, *v.Heartbeats)
		}
		fmt.Fprintf(w, "| %s | %.0f s | %d | %d + %d = %d (%d runs) | %.0f | %s | %.0f (%d) | %.0f (%d) | %s |\n",
			name, v.WindowSeconds, v.Events, v.SupervisorEvents, v.GroupEvents, v.HistoryEvents, v.Runs,
			v.HistoryPerDay, perM, v.ActivitiesPerDay, v.ActivitiesScheduled, v.LocalActivitiesPerDay, v.LocalActivities, hb)
	}
	fmt.Fprintln(w)
	for _, p := range []struct {
		name string
		w    *orchestrationWindow
	}{{"idle", r.Idle}, {"steady", r.Steady}} {
		if p.w != nil {
			fmt.Fprintf(w, "%s: %s; activities scheduled: %s\n", p.name, p.w.Spec, formatActivities(p.w.Activities))
		}
	}
	if h := r.Handoff; h != nil {
		fmt.Fprintf(w, "\nHandoffs at the steady rate: %d checkpoints, %d sequences published in %.0f s, %d history events (%.0f of them the steady rate's): %.1f history events, %.1f activities scheduled and %.1f local activities per handoff (per published sequence)\n",
			h.Checkpoints, h.Sequences, h.WindowSeconds, h.HistoryEvents, h.Baseline, h.HistoryPerHandoff, h.ActivitiesPerHandoff, h.LocalPerHandoff)
	}
	if l := r.Latency; l != nil && l.Samples > 0 {
		fmt.Fprintf(w, "Handoff latency at %.0f events/s, checkpoint sent → sequence committed, %d samples: p50 %.0f ms, p95 %.0f ms, max %.0f ms\n",
			l.Rate, l.Samples, l.P50Millis, l.P95Millis, l.MaxMillis)
	}
	if len(r.Targets) > 0 {
		fmt.Fprintln(w, "\n| target (issue 14) | measured | |")
		fmt.Fprintln(w, "|---|---|---|")
		for _, t := range r.Targets {
			fmt.Fprintf(w, "| %s | %s | %s |\n", t.Target, t.Measured, t.Verdict)
		}
	}
}

// formatActivities is "ConsumeStream 2, Publish 1".
func formatActivities(a []activityCount) string {
	if len(a) == 0 {
		return "none"
	}
	s := ""
	for i, c := range a {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s %d", c.Type, c.Count)
	}
	return s
}

func writeJSON(path string, r result) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
