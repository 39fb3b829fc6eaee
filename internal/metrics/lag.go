package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"handoff/internal/domain"
	"handoff/internal/lagview"
	"handoff/internal/workload"
)

// The figures of internal/lagview, as starter status and the supervisor's
// details in the Temporal UI show them.
const (
	lagHelp = "Records of a partition its group has not read yet: latest offset − current (read-to) offset, " +
		"Druid's lag. Latest as this worker last read it from Kafka, raised to current when read before it."
	unpublishedHelp = "Records of a partition read but not yet published: current (read-to) offset − committed offset."
)

// Offsets sets a supervisor's handoff_partition_lag, handoff_lag,
// handoff_partition_unpublished and handoff_unpublished from its offsets
// as far as the caller knows them (lagview.Compute makes them consistent).
// A nil Committed or Latest keeps the one given before; Latest, with
// LatestAt, is the whole topic's, so partitions it lacks are dropped.
// Current may hold only some partitions (a consume reports its own); it
// updates those, and the read positions of this worker's running consumes
// of the supervisor, as their heartbeats report them, update theirs.
func (m *Metrics) Offsets(supervisor string, in lagview.Input) {
	if m == nil {
		return
	}
	m.lagMu.Lock()
	defer m.lagMu.Unlock()
	known := m.offsets[supervisor]
	if known == nil {
		known = &lagview.Input{Current: domain.Offsets{}}
		m.offsets[supervisor] = known
	}
	if in.Committed != nil {
		known.Committed = in.Committed.Clone()
	}
	if in.Latest != nil {
		known.Latest, known.LatestAt = in.Latest.Clone(), in.LatestAt
	}
	for p, o := range in.Current {
		known.Current[p] = o
	}
	for p, o := range m.runningConsumes(supervisor) {
		known.Current[p] = o
	}
	v := lagview.Compute(*known)
	setGauges(m.partitionLag, m.lag, m.lagParts, supervisor, v.Lags())
	setGauges(m.partitionUnpublished, m.unpublished, m.unpubParts, supervisor, v.UnpublishedByPartition())
}

// runningConsumes are the read positions of this worker's consumes of the
// supervisor (nil without a tracker).
func (m *Metrics) runningConsumes(supervisor string) domain.Offsets {
	t := m.tracker.Load()
	if t == nil {
		return nil
	}
	var reports []domain.Offsets
	for _, w := range t.Snapshot().Active {
		if w.Kind == workload.Consume && w.Supervisor == supervisor {
			reports = append(reports, w.Offsets)
		}
	}
	return lagview.Furthest(reports...)
}

// byPartition labels the per-partition gauges. topic is the partition's
// topic for a topicPattern supervisor and empty (no label, as Prometheus
// treats an empty value) for a single-topic one, whose series stay what
// they were.
var byPartition = []string{"supervisor", "topic", "partition"}

// setGauges sets a per-partition gauge and its sum; partitions set before
// and missing now are dropped.
func setGauges(gauge, sum *prometheus.GaugeVec, set map[string]map[domain.Partition]bool, supervisor string, values map[domain.Partition]int64) {
	var total int64
	for p, n := range values {
		gauge.WithLabelValues(supervisor, p.Topic, strconv.Itoa(int(p.Partition))).Set(float64(n))
		total += n
	}
	for p := range set[supervisor] {
		if _, ok := values[p]; !ok {
			gauge.DeleteLabelValues(supervisor, p.Topic, strconv.Itoa(int(p.Partition)))
		}
	}
	parts := make(map[domain.Partition]bool, len(values))
	for p := range values {
		parts[p] = true
	}
	set[supervisor] = parts
	sum.WithLabelValues(supervisor).Set(float64(total))
}
