package metrics

import "github.com/prometheus/client_golang/prometheus"

// schemaRegistry is the schema registry's part: reads that stopped because
// the registry could not give a record's schema (counted where the read
// ran), and whether a supervisor's groups are held up by it now (as its
// watch last saw them).
type schemaRegistry struct {
	failures    *prometheus.CounterVec
	unavailable *prometheus.GaugeVec
}

func newSchemaRegistry() schemaRegistry {
	return schemaRegistry{
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "handoff_schema_registry_failures_total",
			Help: "Reads stopped (and retried later) because the schema registry did not give a record's schema: down, slow, or refusing the credentials.",
		}, []string{"supervisor"}),
		unavailable: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "handoff_schema_registry_unavailable",
			Help: "1 while a supervisor's groups wait for the schema registry (their reads fail and are retried), else 0; set by its watch.",
		}, []string{"supervisor"}),
	}
}

func (s schemaRegistry) collectors() []prometheus.Collector {
	return []prometheus.Collector{s.failures, s.unavailable}
}

// SchemaRegistryFailed counts one read stopped by the registry.
func (m *Metrics) SchemaRegistryFailed(supervisor string) {
	if m == nil {
		return
	}
	m.registry.failures.WithLabelValues(supervisor).Inc()
}

// SchemaRegistryUnavailable sets whether the supervisor's groups wait for
// the registry.
func (m *Metrics) SchemaRegistryUnavailable(supervisor string, waiting bool) {
	if m == nil {
		return
	}
	v := 0.0
	if waiting {
		v = 1
	}
	m.registry.unavailable.WithLabelValues(supervisor).Set(v)
}
