package metrics_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/lagview"
	"handoff/internal/metrics"
	"handoff/internal/workload"
)

// family returns the gathered family of a name, failing when it is absent.
func family(t *testing.T, reg *prometheus.Registry, name string) *dto.MetricFamily {
	t.Helper()
	fams, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range fams {
		if f.GetName() == name {
			return f
		}
	}
	t.Fatalf("no metric %s", name)
	return nil
}

// find returns the metric of a family with the given labels.
func find(t *testing.T, f *dto.MetricFamily, labels map[string]string) *dto.Metric {
	t.Helper()
next:
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		for _, l := range m.GetLabel() {
			if labels[l.GetName()] != l.GetValue() {
				continue next
			}
		}
		return m
	}
	t.Fatalf("%s has no metric %v", f.GetName(), labels)
	return nil
}

func TestConsumedAndPublished(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	m.Consumed("wiki", 100, 3, 7, 4096, 2*time.Second)
	m.Consumed("wiki", 50, 0, 0, 1024, time.Second)
	m.Consumed("other", 1, 0, -5, 10, time.Second) // a negative count is dropped
	m.Published("wiki", 140, 2, 8192, 3*time.Second, 90*time.Second)
	m.Published("wiki", 10, 1, 100, time.Second, 0) // unknown hand-off latency

	for name, want := range map[string]float64{
		"handoff_events_processed_total":   150,
		"handoff_events_unparseable_total": 3,
		"handoff_events_thrown_away_total": 7,
		"handoff_bytes_read_total":         5120,
		"handoff_rows_published_total":     150,
		"handoff_segments_published_total": 3,
		"handoff_segment_bytes_total":      8292,
	} {
		c := find(t, family(t, reg, name), map[string]string{"supervisor": "wiki"})
		require.Equal(t, want, c.GetCounter().GetValue(), name)
	}
	h := find(t, family(t, reg, "handoff_consume_duration_seconds"), map[string]string{"supervisor": "wiki"}).GetHistogram()
	require.EqualValues(t, 2, h.GetSampleCount())
	require.InDelta(t, 3, h.GetSampleSum(), 1e-9)
	h = find(t, family(t, reg, "handoff_publish_duration_seconds"), map[string]string{"supervisor": "wiki"}).GetHistogram()
	require.EqualValues(t, 2, h.GetSampleCount())
	h = find(t, family(t, reg, "handoff_handoff_latency_seconds"), map[string]string{"supervisor": "wiki"}).GetHistogram()
	require.EqualValues(t, 1, h.GetSampleCount(), "a zero hand-off latency is unknown, not observed")
	require.InDelta(t, 90, h.GetSampleSum(), 1e-9)
	require.Len(t, family(t, reg, "handoff_events_thrown_away_total").GetMetric(), 1, "only wiki threw events away")
}

func TestLagDropsPartitionsNoLongerReported(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	m.Offsets("wiki", lagview.Input{Current: domain.Offsets{domain.P(0): 0, domain.P(1): 0, domain.P(2): 0}, Latest: domain.Offsets{domain.P(0): 10, domain.P(1): 5, domain.P(2): 0}})
	m.Offsets("other", lagview.Input{Current: domain.Offsets{domain.P(0): 0}, Latest: domain.Offsets{domain.P(0): 1}})
	require.Equal(t, 15.0, find(t, family(t, reg, "handoff_lag"), map[string]string{"supervisor": "wiki"}).GetGauge().GetValue())
	require.Equal(t, 5.0, find(t, family(t, reg, "handoff_partition_lag"), map[string]string{"supervisor": "wiki", "topic": "", "partition": "1"}).GetGauge().GetValue())
	require.Len(t, family(t, reg, "handoff_partition_lag").GetMetric(), 4)

	m.Offsets("wiki", lagview.Input{Current: domain.Offsets{domain.P(0): 0}, Latest: domain.Offsets{domain.P(0): 3}})
	require.Equal(t, 3.0, find(t, family(t, reg, "handoff_lag"), map[string]string{"supervisor": "wiki"}).GetGauge().GetValue())
	require.Len(t, family(t, reg, "handoff_partition_lag").GetMetric(), 2, "wiki's partitions 1 and 2 are gone, other's stays")
}

func TestNilMetricsDoNothing(t *testing.T) {
	t.Parallel()
	var m *metrics.Metrics
	m.Consumed("s", 1, 1, 1, 1, time.Second)
	m.Published("s", 1, 1, 1, time.Second, time.Second)
	m.Offsets("s", lagview.Input{Latest: domain.Offsets{domain.P(0): 1}})
	m.Track(workload.NewTracker(workload.Limits{}))
	h := m.TemporalHandler().WithTags(map[string]string{"a": "b"})
	h.Counter("c").Inc(1)
	h.Gauge("g").Update(1)
	h.Timer("t").Record(time.Second)
}

func TestNewWithoutRegistry(t *testing.T) {
	t.Parallel()
	m := metrics.New(nil)
	m.Consumed("s", 1, 0, 0, 1, time.Second)
	m.TemporalHandler().Counter("temporal_request").Inc(1)
}

func TestTrackReadsTheTrackerAtScrape(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	fams, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range fams {
		require.False(t, strings.HasPrefix(f.GetName(), "handoff_activities"), "nothing tracked yet")
	}

	tr := workload.NewTracker(workload.Limits{Consume: 2, Publish: 1, MemoryLimit: 1 << 40})
	m.Track(tr)
	h, err := tr.Begin(context.Background(), workload.Work{Kind: workload.Consume, Supervisor: "wiki"})
	require.NoError(t, err)
	h.Progress(nil, 10, 4096)

	inFlight := family(t, reg, "handoff_activities_in_flight")
	require.Equal(t, 1.0, find(t, inFlight, map[string]string{"kind": "consume"}).GetGauge().GetValue())
	require.Equal(t, 0.0, find(t, inFlight, map[string]string{"kind": "publish"}).GetGauge().GetValue())
	require.Equal(t, 4096.0, family(t, reg, "handoff_in_flight_bytes").GetMetric()[0].GetGauge().GetValue())
	require.Equal(t, float64(1<<40), family(t, reg, "handoff_memory_limit_bytes").GetMetric()[0].GetGauge().GetValue())
	require.Positive(t, family(t, reg, "handoff_heap_bytes").GetMetric()[0].GetGauge().GetValue())
	require.Equal(t, 0.0, family(t, reg, "handoff_memory_pushing_back").GetMetric()[0].GetGauge().GetValue())
	require.Equal(t, dto.MetricType_COUNTER, family(t, reg, "handoff_memory_pushback_seconds_total").GetType())

	h.End(nil)
	require.Equal(t, 0.0, find(t, family(t, reg, "handoff_activities_in_flight"), map[string]string{"kind": "consume"}).GetGauge().GetValue())
}

func TestTrackShowsPushBack(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	// A 1-byte limit: the heap is always over it.
	m.Track(workload.NewTracker(workload.Limits{MemoryLimit: 1}))
	require.Equal(t, 1.0, family(t, reg, "handoff_memory_pushing_back").GetMetric()[0].GetGauge().GetValue())
	time.Sleep(10 * time.Millisecond)
	require.Positive(t, family(t, reg, "handoff_memory_pushback_seconds_total").GetMetric()[0].GetCounter().GetValue())
}

func TestReadGap(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	m.ReadGap("wiki", 30*time.Millisecond)
	m.ReadGap("wiki", 1500*time.Millisecond)
	h := find(t, family(t, reg, "handoff_read_gap_seconds"), map[string]string{"supervisor": "wiki"}).GetHistogram()
	require.EqualValues(t, 2, h.GetSampleCount())
	require.InDelta(t, 1.53, h.GetSampleSum(), 1e-9)
	require.EqualValues(t, 1, h.GetBucket()[0].GetCumulativeCount(), "30 ms is under the first bucket, 50 ms")
}
