package metrics

import "github.com/prometheus/client_golang/prometheus"

// takenOver counts the activity attempts this worker failed on dead
// workers' behalf, for live ones to retry (internal/liveness).
var takenOverHelp = "Activity attempts of dead workers this worker failed by id (WorkerLost) so that they are retried on live workers at once."

func newTakenOver() prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: "handoff_lease_takeover_attempts_total", Help: takenOverHelp})
}

// TakenOver counts n attempts taken over from a dead worker.
func (m *Metrics) TakenOver(n int) {
	if m == nil || n <= 0 {
		return
	}
	m.takenOver.Add(float64(n))
}
