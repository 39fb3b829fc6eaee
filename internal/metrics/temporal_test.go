package metrics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"handoff/internal/metrics"
)

func TestTemporalHandlerCountersGaugesAndTimers(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	h := metrics.New(reg).TemporalHandler().WithTags(map[string]string{"namespace": "default"})

	h.Counter("temporal_request").Inc(2)
	h.Counter("temporal_request").Inc(3)
	h.Counter("temporal_request").Inc(-1) // counters only go up
	h.Gauge("temporal_num_pollers").Update(4)
	h.Gauge("temporal_num_pollers").Update(2)
	h.Timer("temporal_request_latency").Record(250 * time.Millisecond)
	h.Timer("temporal_request_latency").Record(750 * time.Millisecond)

	ns := map[string]string{"namespace": "default"}
	counter := family(t, reg, "temporal_request_total")
	require.Equal(t, dto.MetricType_COUNTER, counter.GetType())
	require.Equal(t, 5.0, find(t, counter, ns).GetCounter().GetValue())
	gauge := family(t, reg, "temporal_num_pollers")
	require.Equal(t, dto.MetricType_GAUGE, gauge.GetType())
	require.Equal(t, 2.0, find(t, gauge, ns).GetGauge().GetValue())
	timer := family(t, reg, "temporal_request_latency_seconds")
	require.Equal(t, dto.MetricType_HISTOGRAM, timer.GetType())
	require.EqualValues(t, 2, find(t, timer, ns).GetHistogram().GetSampleCount())
	require.InDelta(t, 1.0, find(t, timer, ns).GetHistogram().GetSampleSum(), 1e-9)
}

func TestTemporalHandlerLabelSetsChange(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	base := metrics.New(reg).TemporalHandler()

	// One name under different tag sets, as the SDK does.
	base.Counter("temporal_request").Inc(1)
	base.WithTags(map[string]string{"operation": "Poll"}).Counter("temporal_request").Inc(2)
	op := base.WithTags(map[string]string{"operation": "Poll", "namespace": "default"})
	op.Counter("temporal_request").Inc(3)
	op.WithTags(map[string]string{"operation": "Respond"}).Counter("temporal_request").Inc(4) // overrides a tag

	f := family(t, reg, "temporal_request_total")
	require.Len(t, f.GetMetric(), 4)
	require.Equal(t, 1.0, find(t, f, map[string]string{}).GetCounter().GetValue())
	require.Equal(t, 2.0, find(t, f, map[string]string{"operation": "Poll"}).GetCounter().GetValue())
	require.Equal(t, 3.0, find(t, f, map[string]string{"operation": "Poll", "namespace": "default"}).GetCounter().GetValue())
	require.Equal(t, 4.0, find(t, f, map[string]string{"operation": "Respond", "namespace": "default"}).GetCounter().GetValue())

}

func TestTemporalHandlerSanitizesAndKeepsKindsApart(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	h := metrics.New(reg).TemporalHandler().WithTags(map[string]string{"task-queue": "q", "le": "x", "__name__": "n"})
	h.Counter("my.custom-metric").Inc(1)
	h.Gauge("9lives").Update(1)
	h.Counter("dual").Inc(1)
	h.Gauge("dual_total").Update(7) // taken by a counter: dropped, not a broken scrape

	f := family(t, reg, "my_custom_metric_total")
	labels := map[string]string{}
	for _, l := range f.GetMetric()[0].GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	require.Equal(t, map[string]string{"task_queue": "q", "tag_le": "x", "tag_name__": "n"}, labels)
	family(t, reg, "_9lives")
	require.Equal(t, dto.MetricType_COUNTER, family(t, reg, "dual_total").GetType())

	var text strings.Builder
	fams, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range fams {
		text.WriteString(f.GetName() + "\n")
	}
	require.NotContains(t, text.String(), "my.custom")
}
