package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

func printReport(w io.Writer, r result) {
	fmt.Fprintf(w, "\n%d events (%.0f bytes each on average), %d partitions, taskCount %d; %s, %d cores, %d GiB, %s\n\n",
		r.Events, r.MeanEventBytes, r.Partitions, r.TaskCount, r.Machine.CPU, r.Machine.Cores, r.Machine.MemoryGiB, r.Machine.Go)
	fmt.Fprintf(w, "Ceiling (kafka-go batch reads, best of 3): %.2f s, %.0f events/s\n", r.CeilingSeconds, r.CeilingRate)
	fmt.Fprintf(w, "Read + parse only (the same reads, each message through the pipeline's JSON parser): %.0f events/s, %.2f × ceiling\n\n",
		r.ParseRate, r.ParseRate/r.CeilingRate)
	fmt.Fprintln(w, "| variant | seconds | events/s | × ceiling | worker CPU-s / M events | peak worker RSS | history events / M events (runs) | rows | segments | mean segment |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, v := range r.Variants {
		fmt.Fprintf(w, "| %s | %.1f | %.0f | %.2f | %.1f | %.0f MiB | %.0f (%d) | %d | %d | %.1f MiB |\n",
			v.Name, v.Seconds, v.EventsPerSecond, v.CeilingRatio, v.CPUSecondsPerM, v.PeakRSSMiB,
			v.HistoryPerM, v.WorkflowRuns, v.Rows, v.Segments, float64(v.MeanSegmentBytes)/(1<<20))
	}
	if h := r.Handoff; h != nil {
		fmt.Fprintf(w, "\nHandoff latency, checkpoint sent → sequence committed, %d checkpoints × %d groups = %d samples at %.0f events/s: p50 %.0f ms, p95 %.0f ms, max %.0f ms\n",
			h.Checkpoints, h.Samples/max(h.Checkpoints, 1), h.Samples, h.Rate, h.P50Millis, h.P95Millis, h.MaxMillis)
	}
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
