package activities

import (
	"time"

	"handoff/internal/autoscale"
	"handoff/internal/lagview"
	"handoff/internal/protocol"
)

// The autoscaler's share of a watch: each look that reads Kafka becomes a
// lag sample once lagCollectionInterval has passed since the last one, and
// every scaleActionPeriod, once an action is allowed, the window is judged.
// Samples live in the watch; they reach history only with a result the
// watch returns anyway, or with a decision, so a scaling supervisor at rest
// costs what one without the autoscaler does.

// lookEvery is how often a watch looks: ioConfig.period, or the
// autoscaler's lagCollectionInterval when that is shorter.
func lookEvery(in protocol.WatchInput) time.Duration {
	every := in.Every
	if sc := in.AutoScaler; sc != nil && sc.Config.LagCollectionInterval.D() < every {
		every = sc.Config.LagCollectionInterval.D()
	}
	return max(every, 100*time.Millisecond)
}

// sampleLag takes the look's lag into the window and returns the action
// it calls for, if one is due now.
func (w *watcher) sampleLag(at time.Time, in lagview.Input, partitions int) *autoscale.Decision {
	sc := w.in.AutoScaler
	if sc == nil {
		return nil
	}
	if w.a.Metrics != nil {
		w.a.Metrics.AutoscalerTaskCount(w.in.SupervisorID, sc.TaskCount)
	}
	sc.Window.Add(sc.Config, at, autoscale.Aggregate(sc.Config, lagview.Compute(in).Lags()))
	if at.Before(sc.AllowedAt) || at.Sub(w.judgedAt) < sc.Config.ScaleActionPeriod.D() {
		return nil
	}
	w.judgedAt = at
	d, ok := autoscale.Decide(sc.Config, sc.Window, sc.TaskCount, partitions)
	if !ok {
		return nil
	}
	return &d
}

// lagWindow is the window to return with a result (nil without an
// autoscaler).
func (w *watcher) lagWindow() *autoscale.Window {
	if w.in.AutoScaler == nil {
		return nil
	}
	win := w.in.AutoScaler.Window
	return &win
}
