package metrics

import "github.com/prometheus/client_golang/prometheus"

// autoscaler is the lag-based autoscaler's part: the task count each
// supervisor runs with, and its scale actions by direction.
type autoscaler struct {
	taskCount *prometheus.GaugeVec
	actions   *prometheus.CounterVec
}

func newAutoscaler() autoscaler {
	return autoscaler{
		taskCount: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "handoff_autoscaler_task_count",
			Help: "The task count of a supervisor whose autoscaler is on, as its watch last saw it.",
		}, []string{"supervisor"}),
		actions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "handoff_autoscaler_actions_total",
			Help: "Scale actions the autoscaler recorded, by direction (out or in).",
		}, []string{"supervisor", "direction"}),
	}
}

func (a autoscaler) collectors() []prometheus.Collector {
	return []prometheus.Collector{a.taskCount, a.actions}
}

// AutoscalerTaskCount sets the supervisor's task count.
func (m *Metrics) AutoscalerTaskCount(supervisor string, n int) {
	if m == nil {
		return
	}
	m.autoscaler.taskCount.WithLabelValues(supervisor).Set(float64(n))
}

// AutoscalerAction counts one scale action (direction "out" or "in").
func (m *Metrics) AutoscalerAction(supervisor, direction string) {
	if m == nil {
		return
	}
	m.autoscaler.actions.WithLabelValues(supervisor, direction).Inc()
}
