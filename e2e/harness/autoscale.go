package harness

import (
	"time"

	"handoff/internal/domain"
)

// RampAutoScaler is the autoscaler of the tests that ramp a producer from
// 200 events/s to 5,000/s and back over three partitions: with the lag
// the watch samples (the log's end against read positions heartbeat at
// most about 4 s before), 5,000/s stays above scaleOutThreshold and 200/s
// below scaleInThreshold. It scales 1 → 3 groups and back, judging a 4 s
// window every second, at most one action per 8 s.
func RampAutoScaler() *domain.AutoScalerConfig {
	return &domain.AutoScalerConfig{
		EnableTaskAutoScaler: true, TaskCountMin: 1, TaskCountMax: 3,
		LagCollectionInterval: domain.Duration(500 * time.Millisecond), LagCollectionRange: domain.Duration(4 * time.Second),
		ScaleOutThreshold: 2000, TriggerScaleOutFractionThreshold: 0.3,
		ScaleInThreshold: 1000, TriggerScaleInFractionThreshold: 0.9,
		ScaleActionStartDelay: domain.Duration(2 * time.Second), ScaleActionPeriod: domain.Duration(time.Second),
		MinTriggerScaleActionFrequency: domain.Duration(8 * time.Second),
		ScaleOutStep:                   2, ScaleInStep: 2,
	}
}

// Poll checks cond every 100ms until it holds (true) or timeout passes
// (false).
func Poll(timeout time.Duration, cond func() bool) bool {
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}
