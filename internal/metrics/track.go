package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"handoff/internal/workload"
)

// Track exports what t holds at each scrape: activities in flight per kind,
// the heap, the memory limit, push-back, and the bytes running activities
// hold. A later call replaces the tracker.
func (m *Metrics) Track(t *workload.Tracker) {
	if m == nil {
		return
	}
	m.tracker.Store(t)
}

var (
	inFlightDesc = prometheus.NewDesc("handoff_activities_in_flight",
		"Consume and publish activities on this worker, running or waiting for a slot or memory.", []string{"kind"}, nil)
	heapDesc = prometheus.NewDesc("handoff_heap_bytes",
		"Heap in live and unswept objects at the memory monitor's last sample.", nil, nil)
	memoryLimitDesc = prometheus.NewDesc("handoff_memory_limit_bytes",
		"Heap size push-back is measured against; 0: push-back disabled.", nil, nil)
	pushingBackDesc = prometheus.NewDesc("handoff_memory_pushing_back",
		"1 while the heap is over the push-back threshold and new consume work waits, else 0.", nil, nil)
	pushBackSecondsDesc = prometheus.NewDesc("handoff_memory_pushback_seconds_total",
		"Time spent pushing back.", nil, nil)
	inFlightBytesDesc = prometheus.NewDesc("handoff_in_flight_bytes",
		"Bytes that running activities hold in memory.", nil, nil)
)

// trackCollector reads the tracked workload.Tracker's snapshot at scrape.
type trackCollector struct{ m *Metrics }

func (c trackCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{inFlightDesc, heapDesc, memoryLimitDesc, pushingBackDesc, pushBackSecondsDesc, inFlightBytesDesc} {
		ch <- d
	}
}

func (c trackCollector) Collect(ch chan<- prometheus.Metric) {
	t := c.m.tracker.Load()
	if t == nil {
		return
	}
	s := t.Snapshot()
	// Both kinds always appear, so an idle worker reads 0 rather than nothing.
	inFlight := map[workload.Kind]int{workload.Consume: 0, workload.Publish: 0}
	for _, w := range s.Active {
		inFlight[w.Kind]++
	}
	for kind, n := range inFlight {
		ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(n), string(kind))
	}
	pushing := 0.0
	if s.Memory.PushingBack {
		pushing = 1
	}
	ch <- prometheus.MustNewConstMetric(heapDesc, prometheus.GaugeValue, float64(s.Memory.HeapBytes))
	ch <- prometheus.MustNewConstMetric(memoryLimitDesc, prometheus.GaugeValue, float64(s.Memory.Limit))
	ch <- prometheus.MustNewConstMetric(pushingBackDesc, prometheus.GaugeValue, pushing)
	ch <- prometheus.MustNewConstMetric(pushBackSecondsDesc, prometheus.CounterValue, s.Memory.PushBackTotal.Seconds())
	ch <- prometheus.MustNewConstMetric(inFlightBytesDesc, prometheus.GaugeValue, float64(s.InFlightBytes))
}
