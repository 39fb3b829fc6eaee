package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// lifecycle holds the metrics of a datasource's compaction/DS workflow's
// activities, labelled by datasource.
type lifecycle struct {
	compactions              *prometheus.CounterVec // by datasource, result
	compactRows, compactSegs *prometheus.CounterVec // by datasource, side (in, out)
	compactBytes             *prometheus.CounterVec
	compactDuration          *prometheus.HistogramVec
	dropped, killed, swept   *prometheus.CounterVec
	killedBytes, sweptBytes  *prometheus.CounterVec
}

// The results a compaction ends with (the result label).
const (
	CompactionDone     = "done"
	CompactionConflict = "conflict"
	CompactionFailed   = "failed"
)

func newLifecycle() lifecycle {
	byDS := []string{"datasource"}
	sided := []string{"datasource", "side"}
	counter := func(name, help string, labels []string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	return lifecycle{
		compactions:  counter("handoff_compactions_total", "Compaction attempts of one interval, by result: done (committed, or found committed), conflict (its segments changed; retried in a later round) or failed.", []string{"datasource", "result"}),
		compactRows:  counter("handoff_compaction_rows_total", "Rows compactions read (side=in) and wrote (side=out); with rollup, out is fewer.", sided),
		compactSegs:  counter("handoff_compaction_segments_total", "Segments compactions replaced (side=in) and wrote (side=out).", sided),
		compactBytes: counter("handoff_compaction_bytes_total", "Bytes of the segments compactions replaced (side=in) and wrote (side=out).", sided),
		compactDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "handoff_compaction_duration_seconds", Help: "Duration of CompactInterval activities.", Buckets: durationBuckets,
		}, byDS),
		dropped:     counter("handoff_retention_dropped_segments_total", "Segments retention rules made unused.", byDS),
		killed:      counter("handoff_killed_segments_total", "Unused segments whose files the kill deleted.", byDS),
		killedBytes: counter("handoff_killed_bytes_total", "Bytes of the files the kill deleted.", byDS),
		swept:       counter("handoff_swept_files_total", "Orphaned files (listed by no segment and no kept snapshot) the sweep deleted.", byDS),
		sweptBytes:  counter("handoff_swept_bytes_total", "Bytes of the orphaned files the sweep deleted.", byDS),
	}
}

func (l lifecycle) collectors() []prometheus.Collector {
	return []prometheus.Collector{l.compactions, l.compactRows, l.compactSegs, l.compactBytes, l.compactDuration,
		l.dropped, l.killed, l.killedBytes, l.swept, l.sweptBytes}
}

// Compaction is what one compaction of an interval did.
type Compaction struct {
	Result                  string // CompactionDone, CompactionConflict or CompactionFailed
	RowsIn, RowsOut         int64
	SegmentsIn, SegmentsOut int64
	BytesIn, BytesOut       int64
	Duration                time.Duration
}

// Compacted records one CompactInterval activity of the datasource.
func (m *Metrics) Compacted(dataSource string, c Compaction) {
	if m == nil {
		return
	}
	l := m.lifecycle
	l.compactions.WithLabelValues(dataSource, c.Result).Inc()
	addSided(l.compactRows, dataSource, c.RowsIn, c.RowsOut)
	addSided(l.compactSegs, dataSource, c.SegmentsIn, c.SegmentsOut)
	addSided(l.compactBytes, dataSource, c.BytesIn, c.BytesOut)
	l.compactDuration.WithLabelValues(dataSource).Observe(c.Duration.Seconds())
}

// Retained records one ApplyRetention activity: segments dropped, files
// killed and swept.
func (m *Metrics) Retained(dataSource string, dropped, killed int, killedBytes int64, swept int, sweptBytes int64) {
	if m == nil {
		return
	}
	l := m.lifecycle
	add(l.dropped, dataSource, int64(dropped))
	add(l.killed, dataSource, int64(killed))
	add(l.killedBytes, dataSource, killedBytes)
	add(l.swept, dataSource, int64(swept))
	add(l.sweptBytes, dataSource, sweptBytes)
}

func addSided(c *prometheus.CounterVec, dataSource string, in, out int64) {
	if in > 0 {
		c.WithLabelValues(dataSource, "in").Add(float64(in))
	}
	if out > 0 {
		c.WithLabelValues(dataSource, "out").Add(float64(out))
	}
}
