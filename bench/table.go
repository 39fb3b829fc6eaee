package main

import (
	"fmt"
	"io"
	"slices"
)

// tableCost is what the Iceberg table costs the backlog (rollup off) and
// the handoff latency, from runs of the same bench with the table on and
// off (issue 15).
type tableCost struct {
	// The rollup-off drains with the table (rollup-off) and without
	// (rollup-off-no-table): the median of each one's runs.
	OnEventsPerSecond  float64 `json:"onEventsPerSecond"`
	OffEventsPerSecond float64 `json:"offEventsPerSecond"`
	OnRuns             int     `json:"onRuns"`
	OffRuns            int     `json:"offRuns"`
	// ThroughputRatio is on / off.
	ThroughputRatio float64 `json:"throughputRatio"`
	// Worker CPU-seconds per million events, medians, and on / off.
	OnCPUSecondsPerM  float64       `json:"onWorkerCpuSecondsPerMillionEvents"`
	OffCPUSecondsPerM float64       `json:"offWorkerCpuSecondsPerMillionEvents"`
	CPURatio          float64       `json:"cpuRatio"`
	Targets           []targetCheck `json:"targets"`
}

// compareTable holds the runs with and without the table to issue 15's
// targets; nil when the run had neither comparison.
func compareTable(r result) *tableCost {
	var on, off, onCPU, offCPU []float64
	for _, v := range r.Variants {
		switch v.Name {
		case variants["off"].name:
			on, onCPU = append(on, v.EventsPerSecond), append(onCPU, v.CPUSecondsPerM)
		case variants["off-no-table"].name:
			off, offCPU = append(off, v.EventsPerSecond), append(offCPU, v.CPUSecondsPerM)
		}
	}
	c := &tableCost{OnRuns: len(on), OffRuns: len(off)}
	if len(on) > 0 && len(off) > 0 {
		c.OnEventsPerSecond, c.OffEventsPerSecond = median(on), median(off)
		c.ThroughputRatio = c.OnEventsPerSecond / c.OffEventsPerSecond
		c.OnCPUSecondsPerM, c.OffCPUSecondsPerM = median(onCPU), median(offCPU)
		c.CPURatio = c.OnCPUSecondsPerM / c.OffCPUSecondsPerM
		c.Targets = append(c.Targets, targetCheck{"rollup off: the table costs at most 10% of the throughput (with / without ≥ 0.90)",
			fmt.Sprintf("%.2f (%.0f / %.0f events/s, median of %d / %d runs)", c.ThroughputRatio, c.OnEventsPerSecond, c.OffEventsPerSecond, c.OnRuns, c.OffRuns),
			verdict(c.ThroughputRatio >= 0.9)})
	}
	if h := r.Handoff; h != nil && h.Samples > 0 {
		measured := fmt.Sprintf("p50 %.0f ms, p95 %.0f ms", h.P50Millis, h.P95Millis)
		if n := r.HandoffNoTable; n != nil && n.Samples > 0 {
			measured += fmt.Sprintf(" (without the table: p50 %.0f ms, p95 %.0f ms)", n.P50Millis, n.P95Millis)
		}
		c.Targets = append(c.Targets, targetCheck{fmt.Sprintf("handoff latency with the table at %.0f events/s: p50 ≤ 1 s, p95 ≤ 3 s", h.Rate),
			measured, verdict(h.P50Millis <= 1000 && h.P95Millis <= 3000)})
	}
	if len(c.Targets) == 0 {
		return nil
	}
	return c
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func printTableCost(w io.Writer, c tableCost) {
	if c.OnRuns > 0 && c.OffRuns > 0 {
		fmt.Fprintf(w, "\nIceberg table, rollup off: %.0f events/s with, %.0f without: %.2f × (worker CPU-s / M events %.1f with, %.1f without: %.2f ×)\n",
			c.OnEventsPerSecond, c.OffEventsPerSecond, c.ThroughputRatio, c.OnCPUSecondsPerM, c.OffCPUSecondsPerM, c.CPURatio)
	}
	fmt.Fprintln(w, "\n| target (issue 15) | measured | |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, t := range c.Targets {
		fmt.Fprintf(w, "| %s | %s | %s |\n", t.Target, t.Measured, t.Verdict)
	}
}
