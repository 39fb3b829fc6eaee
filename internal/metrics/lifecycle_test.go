package metrics_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"handoff/internal/metrics"
)

func TestCompactedCountsBothSidesAndResults(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	m.Compacted("wiki", metrics.Compaction{Result: metrics.CompactionDone,
		RowsIn: 1000, RowsOut: 400, SegmentsIn: 5, SegmentsOut: 1, BytesIn: 50_000, BytesOut: 30_000, Duration: 2 * time.Second})
	m.Compacted("wiki", metrics.Compaction{Result: metrics.CompactionDone,
		RowsIn: 10, RowsOut: 10, SegmentsIn: 2, SegmentsOut: 1, BytesIn: 100, BytesOut: 90, Duration: time.Second})
	m.Compacted("wiki", metrics.Compaction{Result: metrics.CompactionConflict, Duration: time.Second})
	m.Compacted("other", metrics.Compaction{Result: metrics.CompactionFailed, Duration: time.Second})

	results := family(t, reg, "handoff_compactions_total")
	for labels, want := range map[[2]string]float64{
		{"wiki", metrics.CompactionDone}:     2,
		{"wiki", metrics.CompactionConflict}: 1,
		{"other", metrics.CompactionFailed}:  1,
	} {
		c := find(t, results, map[string]string{"datasource": labels[0], "result": labels[1]})
		require.Equal(t, want, c.GetCounter().GetValue(), "%v", labels)
	}
	for name, want := range map[string][2]float64{
		"handoff_compaction_rows_total":     {1010, 410},
		"handoff_compaction_segments_total": {7, 2},
		"handoff_compaction_bytes_total":    {50_100, 30_090},
	} {
		f := family(t, reg, name)
		require.Equal(t, want[0], find(t, f, map[string]string{"datasource": "wiki", "side": "in"}).GetCounter().GetValue(), name)
		require.Equal(t, want[1], find(t, f, map[string]string{"datasource": "wiki", "side": "out"}).GetCounter().GetValue(), name)
		for _, mm := range f.GetMetric() {
			for _, l := range mm.GetLabel() {
				require.False(t, l.GetName() == "datasource" && l.GetValue() == "other",
					"%s: a failed compaction moved no rows, so it adds no series", name)
			}
		}
	}
	h := find(t, family(t, reg, "handoff_compaction_duration_seconds"), map[string]string{"datasource": "wiki"}).GetHistogram()
	require.EqualValues(t, 3, h.GetSampleCount())
	require.InDelta(t, 4, h.GetSampleSum(), 1e-9)
}

func TestRetainedCountsDropsKillsAndSweeps(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	m.Retained("wiki", 3, 2, 4096, 1, 100)
	m.Retained("wiki", 1, 0, 0, 4, 400)
	for name, want := range map[string]float64{
		"handoff_retention_dropped_segments_total": 4,
		"handoff_killed_segments_total":            2,
		"handoff_killed_bytes_total":               4096,
		"handoff_swept_files_total":                5,
		"handoff_swept_bytes_total":                500,
	} {
		c := find(t, family(t, reg, name), map[string]string{"datasource": "wiki"})
		require.Equal(t, want, c.GetCounter().GetValue(), name)
	}
}

func TestLifecycleOnNilMetricsIsANoOp(t *testing.T) {
	t.Parallel()
	var m *metrics.Metrics
	m.Compacted("wiki", metrics.Compaction{Result: metrics.CompactionDone, RowsIn: 1})
	m.Retained("wiki", 1, 1, 1, 1, 1)
}
