package metrics

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
)

// temporalBuckets span the SDK's timers: RPCs of a millisecond to long
// polls and activities of minutes.
var temporalBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// TemporalHandler returns the Temporal SDK's metrics handler over the same
// registry, so the SDK's own metrics (temporal_*) are scraped with ours.
// Names are made valid Prometheus names; counters end in _total and timers
// become histograms in seconds ending in _seconds, the names Temporal's
// dashboards use. Tags become labels. A nil *Metrics returns the SDK's
// no-op handler.
func (m *Metrics) TemporalHandler() client.MetricsHandler {
	if m == nil {
		return client.MetricsNopHandler
	}
	return temporalHandler{c: m.temporal}
}

type metricKind int

const (
	counterKind metricKind = iota
	gaugeKind
	timerKind
)

// temporalCollector holds the SDK's metrics. The SDK gives one name
// different tag sets (a tag added by WithTags for some calls only), which a
// registered prometheus vec cannot have; so there is a vec per name and set
// of label names, collected together by this one unchecked collector
// (Describe sends nothing), and the registry checks at scrape that they
// agree on type and help.
type temporalCollector struct {
	mu    sync.Mutex
	kinds map[string]metricKind           // per Prometheus name: the first kind asked for
	vecs  map[string]prometheus.Collector // per name + label names
	order []prometheus.Collector
}

func newTemporalCollector() *temporalCollector {
	return &temporalCollector{kinds: map[string]metricKind{}, vecs: map[string]prometheus.Collector{}}
}

func (c *temporalCollector) Describe(chan<- *prometheus.Desc) {}

func (c *temporalCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	vecs := slices.Clone(c.order)
	c.mu.Unlock()
	for _, v := range vecs {
		v.Collect(ch)
	}
}

// vec returns the vec of a name, kind and label names, creating it; nil
// when the name was already taken by another kind.
func (c *temporalCollector) vec(name string, kind metricKind, labels []string) prometheus.Collector {
	key := name + "\xff" + strings.Join(labels, "\xff")
	c.mu.Lock()
	defer c.mu.Unlock()
	if k, ok := c.kinds[name]; ok && k != kind {
		return nil
	}
	if v, ok := c.vecs[key]; ok {
		return v
	}
	help := "Temporal SDK metric " + name + "."
	var v prometheus.Collector
	switch kind {
	case counterKind:
		v = prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	case gaugeKind:
		v = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	case timerKind:
		v = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: temporalBuckets}, labels)
	}
	c.kinds[name] = kind
	c.vecs[key] = v
	c.order = append(c.order, v)
	return v
}

// temporalHandler implements client.MetricsHandler; tags holds sanitized
// label names.
type temporalHandler struct {
	c    *temporalCollector
	tags map[string]string
}

func (h temporalHandler) WithTags(tags map[string]string) client.MetricsHandler {
	merged := maps.Clone(h.tags)
	if merged == nil {
		merged = make(map[string]string, len(tags))
	}
	for k, v := range tags {
		merged[labelName(k)] = strings.ToValidUTF8(v, "\uFFFD")
	}
	return temporalHandler{c: h.c, tags: merged}
}

func (h temporalHandler) labels() []string { return slices.Sorted(maps.Keys(h.tags)) }

func (h temporalHandler) Counter(name string) client.MetricsCounter {
	v, _ := h.c.vec(withSuffix(metricName(name), "_total"), counterKind, h.labels()).(*prometheus.CounterVec)
	if v == nil {
		return client.MetricsNopHandler.Counter(name)
	}
	c := v.With(h.tags)
	return counterFunc(func(n int64) {
		if n > 0 {
			c.Add(float64(n))
		}
	})
}

func (h temporalHandler) Gauge(name string) client.MetricsGauge {
	v, _ := h.c.vec(metricName(name), gaugeKind, h.labels()).(*prometheus.GaugeVec)
	if v == nil {
		return client.MetricsNopHandler.Gauge(name)
	}
	return gaugeFunc(v.With(h.tags).Set)
}

func (h temporalHandler) Timer(name string) client.MetricsTimer {
	v, _ := h.c.vec(withSuffix(metricName(name), "_seconds"), timerKind, h.labels()).(*prometheus.HistogramVec)
	if v == nil {
		return client.MetricsNopHandler.Timer(name)
	}
	o := v.With(h.tags)
	return timerFunc(func(d time.Duration) { o.Observe(d.Seconds()) })
}

type (
	counterFunc func(int64)
	gaugeFunc   func(float64)
	timerFunc   func(time.Duration)
)

func (f counterFunc) Inc(n int64)          { f(n) }
func (f gaugeFunc) Update(v float64)       { f(v) }
func (f timerFunc) Record(d time.Duration) { f(d) }

func withSuffix(name, suffix string) string {
	if strings.HasSuffix(name, suffix) {
		return name
	}
	return name + suffix
}

// metricName makes name a valid Prometheus metric name: bytes other than
// letters, digits, '_' and ':' become '_', and a leading digit gets a '_'
// before it.
func metricName(name string) string { return sanitize(name, true) }

// labelName makes a tag a valid label name, as metricName but without ':'
// and clear of the names Prometheus reserves ("__" prefixes, "le",
// "quantile").
func labelName(tag string) string {
	l := sanitize(tag, false)
	if strings.HasPrefix(l, "__") || l == "le" || l == "quantile" {
		l = "tag_" + strings.TrimLeft(l, "_")
	}
	return l
}

func sanitize(s string, colon bool) string {
	var b strings.Builder
	if s == "" || '0' <= s[0] && s[0] <= '9' {
		b.WriteByte('_')
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || colon && c == ':' {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
