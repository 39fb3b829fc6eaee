// Package autoscale is the supervisor's lag-based autoscaler, the rule of
// Apache Druid's lagBased strategy: a window of lag samples, and the
// decision a full window gives to scale taskCount out, in, or leave it.
// Pure: no I/O, no clock (times are passed in), so the watch activity that
// samples and the supervisor workflow that acts agree on every figure.
package autoscale

import (
	"fmt"
	"time"

	"handoff/internal/domain"
)

// Directions of a scale action.
const (
	Out = "out"
	In  = "in"
)

// Window is the latest lag samples, oldest first, at most Capacity of them.
type Window struct {
	Lags []int64   `json:"lags,omitempty"`
	Last time.Time `json:"last,omitzero"` // when the newest was taken
}

// Capacity is how many samples a full window holds: lagCollectionRange /
// lagCollectionInterval, at least one.
func Capacity(c domain.AutoScalerConfig) int {
	return max(1, int(c.LagCollectionRange.D()/c.LagCollectionInterval.D()))
}

// Add takes a sample at time at unless the previous one is less than
// lagCollectionInterval old; it reports whether it took it.
func (w *Window) Add(c domain.AutoScalerConfig, at time.Time, lag int64) bool {
	if !w.Last.IsZero() && at.Sub(w.Last) < c.LagCollectionInterval.D() {
		return false
	}
	w.Lags = append(w.Lags, lag)
	if n, keep := len(w.Lags), Capacity(c); n > keep {
		w.Lags = append(w.Lags[:0], w.Lags[n-keep:]...)
	}
	w.Last = at
	return true
}

// Aggregate makes one sample of the partitions' lags (lagAggregate: their
// sum or their maximum).
func Aggregate(c domain.AutoScalerConfig, lags map[domain.Partition]int64) int64 {
	var out int64
	for _, l := range lags {
		if c.LagAggregate == domain.LagAggregateMax {
			out = max(out, l)
		} else {
			out += l
		}
	}
	return out
}

// Summary is what status shows of a window.
type Summary struct {
	Samples  int   `json:"samples"`
	Capacity int   `json:"capacity"`
	Latest   int64 `json:"latest"`
	Min      int64 `json:"min"`
	Max      int64 `json:"max"`
	// AboveOut and BelowIn count the samples above scaleOutThreshold and
	// below scaleInThreshold.
	AboveOut int `json:"aboveScaleOut"`
	BelowIn  int `json:"belowScaleIn"`
}

// Summarize counts a window against the thresholds.
func Summarize(c domain.AutoScalerConfig, w Window) Summary {
	s := Summary{Samples: len(w.Lags), Capacity: Capacity(c)}
	for i, l := range w.Lags {
		if i == 0 || l < s.Min {
			s.Min = l
		}
		s.Max = max(s.Max, l)
		if l > c.ScaleOutThreshold {
			s.AboveOut++
		}
		if l < c.ScaleInThreshold {
			s.BelowIn++
		}
	}
	if n := len(w.Lags); n > 0 {
		s.Latest = w.Lags[n-1]
	}
	return s
}

// Decision is a scale action the window calls for.
type Decision struct {
	From      int    `json:"from"`
	TaskCount int    `json:"taskCount"`
	Direction string `json:"direction"`
	Reason    string `json:"reason"`
}

// Decide judges a full window: the task count to move to from current,
// bounded by taskCountMin, taskCountMax and the partition count
// (partitions; 0 when unknown bounds nothing). ok is false when the window
// is not full or calls for no change.
func Decide(c domain.AutoScalerConfig, w Window, current, partitions int) (d Decision, ok bool) {
	s := Summarize(c, w)
	if s.Samples < s.Capacity {
		return Decision{}, false
	}
	upper := c.TaskCountMax
	if partitions > 0 {
		upper = min(upper, partitions)
	}
	upper = max(upper, c.TaskCountMin)
	share := func(n int) float64 { return float64(n) / float64(s.Samples) }
	switch {
	case share(s.AboveOut) >= c.TriggerScaleOutFractionThreshold && current < upper:
		d = Decision{From: current, TaskCount: min(current+c.ScaleOutStep, upper), Direction: Out,
			Reason: fmt.Sprintf("%d of %d lag samples above scaleOutThreshold %d (at least %.2f wanted; max %d)",
				s.AboveOut, s.Samples, c.ScaleOutThreshold, c.TriggerScaleOutFractionThreshold, s.Max)}
	case share(s.BelowIn) >= c.TriggerScaleInFractionThreshold && current > c.TaskCountMin:
		d = Decision{From: current, TaskCount: max(current-c.ScaleInStep, c.TaskCountMin), Direction: In,
			Reason: fmt.Sprintf("%d of %d lag samples below scaleInThreshold %d (at least %.2f wanted; max %d)",
				s.BelowIn, s.Samples, c.ScaleInThreshold, c.TriggerScaleInFractionThreshold, s.Max)}
	case current > upper:
		// The partitions fell below taskCount, or the bounds changed.
		d = Decision{From: current, TaskCount: upper, Direction: In,
			Reason: fmt.Sprintf("taskCount %d is above what %d partitions and taskCountMax %d allow", current, partitions, c.TaskCountMax)}
	default:
		return Decision{}, false
	}
	return d, d.TaskCount != current
}

// AllowedAt is when the next action may be taken: scaleActionStartDelay
// after the autoscaler began (since), and minTriggerScaleActionFrequency
// after the last action (zero: none yet).
func AllowedAt(c domain.AutoScalerConfig, since, lastAction time.Time) time.Time {
	at := since.Add(c.ScaleActionStartDelay.D())
	if !lastAction.IsZero() {
		if next := lastAction.Add(c.MinTriggerScaleActionFrequency.D()); next.After(at) {
			at = next
		}
	}
	return at
}
