package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// reads is what a read passes without a row, and the partitions an open
// transaction holds.
type reads struct {
	skipped *prometheus.CounterVec
	held    *prometheus.GaugeVec
	gap     *prometheus.HistogramVec
}

// Why a read passed a record without a row (Skipped's reasons).
const (
	SkippedMarker  = "transaction_marker" // a commit or abort marker
	SkippedAborted = "aborted"            // a record of an aborted transaction (read committed)
	SkippedNoValue = "no_value"           // a null value (a tombstone) or an empty one, thrown away
)

func newReads() reads {
	return reads{
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "handoff_records_skipped_total",
			Help: "Kafka records read without a row, by reason: transaction_marker (commit and abort markers), aborted (records of aborted transactions, under read_committed), no_value (a null or empty value, also counted in handoff_events_thrown_away_total).",
		}, []string{"supervisor", "reason"}),
		held: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "handoff_partition_held_by_transaction_seconds",
			Help: "How long an open transaction has held the partition: the group read it to its last stable offset while its log goes on. 0 when not held.",
		}, byPartition),
		gap: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "handoff_read_gap_seconds",
			Help:    "How long a task group did not read between two of its streams: from one stream's stop to the next one's start (at a handoff, while the close is recorded and the sequence publishes).",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120},
		}, []string{"supervisor"}),
	}
}

func (r reads) collectors() []prometheus.Collector {
	return []prometheus.Collector{r.skipped, r.held, r.gap}
}

// ReadGap records how long a group did not read between two streams.
func (m *Metrics) ReadGap(supervisor string, d time.Duration) {
	if m == nil {
		return
	}
	m.reads.gap.WithLabelValues(supervisor).Observe(d.Seconds())
}

// Skipped counts n records passed for reason.
func (m *Metrics) Skipped(supervisor, reason string, n int64) {
	if m == nil || n <= 0 {
		return
	}
	m.reads.skipped.WithLabelValues(supervisor, reason).Add(float64(n))
}

// HeldByTransaction sets how long an open transaction has held a partition
// (0: it no longer does).
func (m *Metrics) HeldByTransaction(supervisor, topic string, partition int32, d time.Duration) {
	if m == nil {
		return
	}
	m.reads.held.WithLabelValues(supervisor, topic, strconv.Itoa(int(partition))).Set(d.Seconds())
}
