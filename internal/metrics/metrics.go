// Package metrics is the worker's Prometheus metrics: what consume and
// publish activities did (events, rows, segments, bytes, durations, the
// hand-off latency from checkpoint to commit), each supervisor's Kafka lag
// and unpublished records (internal/lagview's figures), what compaction,
// retention, kill and sweep did per datasource, the autoscaler's task
// count and actions, the records reads passed without a row (transaction
// markers, aborted records, null values) and the partitions an open
// transaction holds, the schema registry's failures (registry.go),
// what the workload tracker holds at scrape time, and the Temporal SDK's own
// metrics, all on one registry.
//
// Every method is a no-op on a nil *Metrics, so tests and tools run without
// metrics.
package metrics

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"handoff/internal/domain"
	"handoff/internal/lagview"
	"handoff/internal/workload"
)

// durationBuckets span an activity or a hand-off: from a fraction of a
// second to an hour.
var durationBuckets = []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600}

// Metrics records the worker's measurements. Safe for concurrent use.
type Metrics struct {
	processed, unparseable, thrownAway, bytesRead *prometheus.CounterVec
	rows, segments, segmentBytes                  *prometheus.CounterVec
	consumeDuration, publishDuration, handoff     *prometheus.HistogramVec
	partitionLag, lag                             *prometheus.GaugeVec
	partitionUnpublished, unpublished             *prometheus.GaugeVec

	lagMu      sync.Mutex
	lagParts   map[string]map[domain.Partition]bool // partitions whose lag is set, per supervisor
	offsets    map[string]*lagview.Input            // what Offsets was told, per supervisor
	unpubParts map[string]map[domain.Partition]bool

	lifecycle  lifecycle
	autoscaler autoscaler
	reads      reads
	takenOver  prometheus.Counter
	registry   schemaRegistry

	tracker  atomic.Pointer[workload.Tracker]
	temporal *temporalCollector
}

// New creates the metrics and registers them on reg; a nil reg keeps them
// unregistered. It panics if reg already holds metrics of these names, as
// prometheus.MustRegister does.
func New(reg prometheus.Registerer) *Metrics {
	bySupervisor := []string{"supervisor"}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, bySupervisor)
	}
	histogram := func(name, help string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: durationBuckets}, bySupervisor)
	}
	m := &Metrics{
		processed:       counter("handoff_events_processed_total", "Kafka records consumed into rows."),
		unparseable:     counter("handoff_events_unparseable_total", "Kafka records that could not be parsed."),
		thrownAway:      counter("handoff_events_thrown_away_total", "Kafka records parsed and then dropped (filtered, late or early)."),
		bytesRead:       counter("handoff_bytes_read_total", "Bytes of Kafka records read."),
		rows:            counter("handoff_rows_published_total", "Rows in published segments."),
		segments:        counter("handoff_segments_published_total", "Segments published."),
		segmentBytes:    counter("handoff_segment_bytes_total", "Bytes of published segment files."),
		consumeDuration: histogram("handoff_consume_duration_seconds", "Duration of consume activities."),
		publishDuration: histogram("handoff_publish_duration_seconds", "Duration of publish activities."),
		handoff:         histogram("handoff_handoff_latency_seconds", "Time from a sequence's checkpoint to the commit of its segments and offsets."),
		partitionLag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "handoff_partition_lag", Help: lagHelp,
		}, byPartition),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "handoff_lag", Help: "handoff_partition_lag summed over the supervisor's partitions.",
		}, bySupervisor),
		partitionUnpublished: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "handoff_partition_unpublished", Help: unpublishedHelp,
		}, byPartition),
		unpublished: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "handoff_unpublished", Help: "handoff_partition_unpublished summed over the supervisor's partitions.",
		}, bySupervisor),
		lagParts:   map[string]map[domain.Partition]bool{},
		offsets:    map[string]*lagview.Input{},
		unpubParts: map[string]map[domain.Partition]bool{},
		lifecycle:  newLifecycle(),
		autoscaler: newAutoscaler(),
		reads:      newReads(),
		takenOver:  newTakenOver(),
		registry:   newSchemaRegistry(),
		temporal:   newTemporalCollector(),
	}
	if reg != nil {
		reg.MustRegister(
			m.processed, m.unparseable, m.thrownAway, m.bytesRead,
			m.rows, m.segments, m.segmentBytes,
			m.consumeDuration, m.publishDuration, m.handoff,
			m.partitionLag, m.lag, m.partitionUnpublished, m.unpublished,
			trackCollector{m}, m.temporal,
		)
		reg.MustRegister(m.lifecycle.collectors()...)
		reg.MustRegister(m.autoscaler.collectors()...)
		reg.MustRegister(m.reads.collectors()...)
		reg.MustRegister(m.takenOver)
		reg.MustRegister(m.registry.collectors()...)
	}
	return m
}

// add adds n to a counter; counters only go up, so a negative n (a bug
// upstream) is dropped rather than panicking the activity.
func add(c *prometheus.CounterVec, supervisor string, n int64) {
	if n > 0 {
		c.WithLabelValues(supervisor).Add(float64(n))
	}
}

// Consumed records one consume activity: the records it read, of which
// unparseable and thrown away, the bytes read and how long it took.
func (m *Metrics) Consumed(supervisor string, records, unparseable, thrownAway, bytesRead int64, d time.Duration) {
	if m == nil {
		return
	}
	add(m.processed, supervisor, records)
	add(m.unparseable, supervisor, unparseable)
	add(m.thrownAway, supervisor, thrownAway)
	add(m.bytesRead, supervisor, bytesRead)
	m.consumeDuration.WithLabelValues(supervisor).Observe(d.Seconds())
}

// Published records one publish activity: rows and segments published,
// the segments' bytes, how long it took, and the hand-off latency from the
// sequence's checkpoint to the commit (0: unknown, not observed).
func (m *Metrics) Published(supervisor string, rows, segments, segmentBytes int64, d time.Duration, handoff time.Duration) {
	if m == nil {
		return
	}
	add(m.rows, supervisor, rows)
	add(m.segments, supervisor, segments)
	add(m.segmentBytes, supervisor, segmentBytes)
	m.publishDuration.WithLabelValues(supervisor).Observe(d.Seconds())
	if handoff > 0 {
		m.handoff.WithLabelValues(supervisor).Observe(handoff.Seconds())
	}
}
