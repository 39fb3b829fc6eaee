package domain

import (
	"fmt"
	"time"
)

// AutoScalerConfig is ioConfig.autoScalerConfig: the supervisor changes its
// own taskCount from the lag it measures, as Apache Druid's lagBased
// autoscaler does, with Druid's field names. Durations take Go or ISO-8601
// syntax (Druid's *Millis fields are the same settings in milliseconds).
//
// Every lagCollectionInterval the supervisor's watch takes one lag sample
// (the partitions' lags, summed or their maximum per lagAggregate) and
// keeps the samples of the last lagCollectionRange. Every scaleActionPeriod,
// once scaleActionStartDelay has passed since the autoscaler began and
// minTriggerScaleActionFrequency since its last action, it looks at a full
// window: if at least triggerScaleOutFractionThreshold of the samples are
// above scaleOutThreshold, taskCount grows by scaleOutStep (up to
// taskCountMax and the partition count); else if at least
// triggerScaleInFractionThreshold are below scaleInThreshold, it shrinks by
// scaleInStep (down to taskCountMin).
type AutoScalerConfig struct {
	// EnableTaskAutoScaler turns the autoscaler on. Default false.
	EnableTaskAutoScaler bool `json:"enableTaskAutoScaler"`
	// AutoScalerStrategy is the only strategy there is: "lagBased".
	AutoScalerStrategy string `json:"autoScalerStrategy,omitempty"`
	// TaskCountMin and TaskCountMax bound taskCount. Required when enabled.
	TaskCountMin int `json:"taskCountMin,omitempty"`
	TaskCountMax int `json:"taskCountMax,omitempty"`
	// LagCollectionInterval is the time between lag samples. Default 30s.
	LagCollectionInterval Duration `json:"lagCollectionInterval,omitempty"`
	// LagCollectionRange is how far back samples count. Default 10m.
	LagCollectionRange Duration `json:"lagCollectionRange,omitempty"`
	// ScaleOutThreshold is the lag above which a sample counts for scaling
	// out. Default 6,000,000.
	ScaleOutThreshold int64 `json:"scaleOutThreshold,omitempty"`
	// TriggerScaleOutFractionThreshold is the share of samples above
	// scaleOutThreshold that scales out. Default 0.3.
	TriggerScaleOutFractionThreshold float64 `json:"triggerScaleOutFractionThreshold,omitempty"`
	// ScaleInThreshold is the lag below which a sample counts for scaling
	// in. Default 1,000,000.
	ScaleInThreshold int64 `json:"scaleInThreshold,omitempty"`
	// TriggerScaleInFractionThreshold is the share of samples below
	// scaleInThreshold that scales in. Default 0.9.
	TriggerScaleInFractionThreshold float64 `json:"triggerScaleInFractionThreshold,omitempty"`
	// ScaleActionStartDelay: no action this soon after the autoscaler
	// began. Default 5m.
	ScaleActionStartDelay Duration `json:"scaleActionStartDelay,omitempty"`
	// ScaleActionPeriod is how often the samples are judged. Default 1m.
	ScaleActionPeriod Duration `json:"scaleActionPeriod,omitempty"`
	// MinTriggerScaleActionFrequency is the least time between two
	// actions. Default 10m.
	MinTriggerScaleActionFrequency Duration `json:"minTriggerScaleActionFrequency,omitempty"`
	// ScaleOutStep and ScaleInStep are how many groups an action adds or
	// removes. Defaults 2 and 1.
	ScaleOutStep int `json:"scaleOutStep,omitempty"`
	ScaleInStep  int `json:"scaleInStep,omitempty"`
	// LagAggregate makes one sample of the partitions' lags: "sum" (the
	// default) or "max".
	LagAggregate string `json:"lagAggregate,omitempty"`
}

// The autoscaler's strategy and lag aggregates.
const (
	AutoScalerLagBased = "lagBased"
	LagAggregateSum    = "sum"
	LagAggregateMax    = "max"
)

// The autoscaler's defaults, Druid's.
const (
	DefaultLagCollectionInterval          = Duration(30 * time.Second)
	DefaultLagCollectionRange             = Duration(10 * time.Minute)
	DefaultScaleOutThreshold              = 6_000_000
	DefaultTriggerScaleOutFraction        = 0.3
	DefaultScaleInThreshold               = 1_000_000
	DefaultTriggerScaleInFraction         = 0.9
	DefaultScaleActionStartDelay          = Duration(5 * time.Minute)
	DefaultScaleActionPeriod              = Duration(time.Minute)
	DefaultMinTriggerScaleActionFrequency = Duration(10 * time.Minute)
	DefaultScaleOutStep                   = 2
	DefaultScaleInStep                    = 1
)

// AutoScalerOn reports whether the spec's autoscaler is enabled.
func (c IOConfig) AutoScalerOn() bool {
	return c.AutoScalerConfig != nil && c.AutoScalerConfig.EnableTaskAutoScaler
}

func (a *AutoScalerConfig) applyDefaults() {
	orDefault(&a.AutoScalerStrategy, AutoScalerLagBased)
	orDefault(&a.LagCollectionInterval, DefaultLagCollectionInterval)
	orDefault(&a.LagCollectionRange, DefaultLagCollectionRange)
	orDefault(&a.ScaleOutThreshold, DefaultScaleOutThreshold)
	orDefault(&a.TriggerScaleOutFractionThreshold, DefaultTriggerScaleOutFraction)
	orDefault(&a.ScaleInThreshold, DefaultScaleInThreshold)
	orDefault(&a.TriggerScaleInFractionThreshold, DefaultTriggerScaleInFraction)
	orDefault(&a.ScaleActionStartDelay, DefaultScaleActionStartDelay)
	orDefault(&a.ScaleActionPeriod, DefaultScaleActionPeriod)
	orDefault(&a.MinTriggerScaleActionFrequency, DefaultMinTriggerScaleActionFrequency)
	orDefault(&a.ScaleOutStep, DefaultScaleOutStep)
	orDefault(&a.ScaleInStep, DefaultScaleInStep)
	orDefault(&a.LagAggregate, LagAggregateSum)
}

// validate reports the first autoscaler field out of range; taskCount is
// the spec's ioConfig.taskCount, which must lie within the bounds.
func (a AutoScalerConfig) validate(taskCount int) error {
	const p = "ioConfig.autoScalerConfig."
	if !a.EnableTaskAutoScaler {
		return nil
	}
	checks := []struct {
		bad  bool
		path string
		msg  string
	}{
		{a.AutoScalerStrategy != AutoScalerLagBased, "autoScalerStrategy", fmt.Sprintf("want %q, got %q", AutoScalerLagBased, a.AutoScalerStrategy)},
		{a.TaskCountMin < 1, "taskCountMin", "required with enableTaskAutoScaler: want 1 or more"},
		{a.TaskCountMax < a.TaskCountMin, "taskCountMax", fmt.Sprintf("want taskCountMin (%d) or more", a.TaskCountMin)},
		{a.LagCollectionInterval.D() < 100*time.Millisecond, "lagCollectionInterval", "want 100ms or more"},
		{a.LagCollectionRange < a.LagCollectionInterval, "lagCollectionRange", "want lagCollectionInterval or more"},
		{a.LagCollectionRange.D()/a.LagCollectionInterval.D() > 10_000, "lagCollectionRange", "want at most 10000 samples (lagCollectionRange / lagCollectionInterval)"},
		{a.ScaleOutThreshold < 0, "scaleOutThreshold", "want 0 or more"},
		{a.ScaleInThreshold < 0 || a.ScaleInThreshold > a.ScaleOutThreshold, "scaleInThreshold", "want 0 to scaleOutThreshold"},
		{!(a.TriggerScaleOutFractionThreshold > 0 && a.TriggerScaleOutFractionThreshold <= 1), "triggerScaleOutFractionThreshold", "want more than 0, at most 1"},
		{!(a.TriggerScaleInFractionThreshold > 0 && a.TriggerScaleInFractionThreshold <= 1), "triggerScaleInFractionThreshold", "want more than 0, at most 1"},
		{a.ScaleActionPeriod.D() < 100*time.Millisecond, "scaleActionPeriod", "want 100ms or more"},
		{a.ScaleOutStep < 1, "scaleOutStep", "want 1 or more"},
		{a.ScaleInStep < 1, "scaleInStep", "want 1 or more"},
		{a.LagAggregate != LagAggregateSum && a.LagAggregate != LagAggregateMax, "lagAggregate", fmt.Sprintf("want %q or %q, got %q", LagAggregateSum, LagAggregateMax, a.LagAggregate)},
		{taskCount < a.TaskCountMin || taskCount > a.TaskCountMax, "", ""},
	}
	for _, c := range checks {
		if !c.bad {
			continue
		}
		if c.path == "" {
			return &FieldError{Path: "ioConfig.taskCount", Msg: fmt.Sprintf("with the autoscaler on, want taskCountMin to taskCountMax (%d to %d), got %d", a.TaskCountMin, a.TaskCountMax, taskCount)}
		}
		return &FieldError{Path: p + c.path, Msg: c.msg}
	}
	return nil
}
