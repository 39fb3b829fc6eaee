package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/lagview"
	"handoff/internal/metrics"
	"handoff/internal/workload"
)

// Issue 13: handoff_partition_lag was latest − committed, which counts
// what was read and not yet published as lag. It is Druid's lag now,
// latest − current, as starter status and the UI have it, with current from
// this worker's running consumes when the caller (the Discover activity)
// knows only committed and latest; handoff_partition_unpublished is
// current − committed.
func TestOffsetsSetLagAndUnpublished(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	tr := workload.NewTracker(workload.Limits{})
	m.Track(tr)
	h, err := tr.Begin(context.Background(), workload.Work{Kind: workload.Consume, Supervisor: "wiki", Offsets: domain.Offsets{domain.P(0): 100}})
	require.NoError(t, err)
	h.Progress(domain.Offsets{domain.P(0): 650}, 0, 0)

	m.Offsets("wiki", lagview.Input{Committed: domain.Offsets{domain.P(0): 100, domain.P(1): 50}, Latest: domain.Offsets{domain.P(0): 500, domain.P(1): 80}, LatestAt: time.Now()})
	gauge := func(name string, labels map[string]string) float64 {
		return find(t, family(t, reg, name), labels).GetGauge().GetValue()
	}
	p0, p1 := map[string]string{"supervisor": "wiki", "topic": "", "partition": "0"}, map[string]string{"supervisor": "wiki", "topic": "", "partition": "1"}
	wiki := map[string]string{"supervisor": "wiki"}
	require.Equal(t, 0.0, gauge("handoff_partition_lag", p0), "partition 0 is read past the latest offset as last read: raised, no lag")
	require.Equal(t, 30.0, gauge("handoff_partition_lag", p1), "nothing read from partition 1 past its committed offset")
	require.Equal(t, 550.0, gauge("handoff_partition_unpublished", p0))
	require.Equal(t, 0.0, gauge("handoff_partition_unpublished", p1))
	require.Equal(t, 30.0, gauge("handoff_lag", wiki))
	require.Equal(t, 550.0, gauge("handoff_unpublished", wiki))
	require.Contains(t, family(t, reg, "handoff_partition_lag").GetHelp(), "latest offset − current (read-to) offset")
	require.Contains(t, family(t, reg, "handoff_partition_unpublished").GetHelp(), "current (read-to) offset − committed offset")

	// A consume elsewhere reports partition 1; committed and latest stay.
	h.End(nil)
	m.Offsets("wiki", lagview.Input{Current: domain.Offsets{domain.P(1): 70}})
	require.Equal(t, 10.0, gauge("handoff_partition_lag", p1))
	require.Equal(t, 20.0, gauge("handoff_partition_unpublished", p1))
	require.Equal(t, 550.0, gauge("handoff_partition_unpublished", p0), "partition 0's last known position stays")

	// The topic is all of latest: a partition gone from it is dropped.
	m.Offsets("wiki", lagview.Input{Latest: domain.Offsets{domain.P(0): 700}})
	require.Len(t, family(t, reg, "handoff_partition_lag").GetMetric(), 1)
	require.Len(t, family(t, reg, "handoff_partition_unpublished").GetMetric(), 1)
	require.Equal(t, 50.0, gauge("handoff_lag", wiki))
}

func TestNilMetricsOffsets(t *testing.T) {
	t.Parallel()
	var m *metrics.Metrics
	m.Offsets("s", lagview.Input{Latest: domain.Offsets{domain.P(0): 1}})
}

// A topicPattern supervisor's partitions carry their topic as a label, so
// partition 0 of two topics are two series.
func TestPartitionGaugesNameTheTopicOfPatternPartitions(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	eu, us := domain.TP("orders.eu", 0), domain.TP("orders.us", 0)
	m.Offsets("orders", lagview.Input{Committed: domain.Offsets{eu: 10, us: 20}, Latest: domain.Offsets{eu: 15, us: 40}, LatestAt: time.Now()})
	lag := func(topic string) float64 {
		return find(t, family(t, reg, "handoff_partition_lag"), map[string]string{"supervisor": "orders", "topic": topic, "partition": "0"}).GetGauge().GetValue()
	}
	require.Equal(t, 5.0, lag("orders.eu"))
	require.Equal(t, 20.0, lag("orders.us"))
	require.Equal(t, 25.0, find(t, family(t, reg, "handoff_lag"), map[string]string{"supervisor": "orders"}).GetGauge().GetValue())

	// A deleted topic's partitions leave latest, and their series go.
	m.Offsets("orders", lagview.Input{Latest: domain.Offsets{eu: 15}, LatestAt: time.Now()})
	require.Len(t, family(t, reg, "handoff_partition_lag").GetMetric(), 1)
	require.Equal(t, 5.0, lag("orders.eu"))
}
