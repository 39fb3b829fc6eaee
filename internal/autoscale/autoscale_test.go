package autoscale_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/autoscale"
	"handoff/internal/domain"
)

func config() domain.AutoScalerConfig {
	return domain.AutoScalerConfig{
		EnableTaskAutoScaler: true, AutoScalerStrategy: domain.AutoScalerLagBased,
		TaskCountMin: 1, TaskCountMax: 4,
		LagCollectionInterval: domain.Duration(time.Second), LagCollectionRange: domain.Duration(10 * time.Second),
		ScaleOutThreshold: 1000, TriggerScaleOutFractionThreshold: 0.3,
		ScaleInThreshold: 100, TriggerScaleInFractionThreshold: 0.9,
		ScaleActionStartDelay: domain.Duration(time.Minute), ScaleActionPeriod: domain.Duration(time.Second),
		MinTriggerScaleActionFrequency: domain.Duration(5 * time.Minute),
		ScaleOutStep:                   2, ScaleInStep: 1, LagAggregate: domain.LagAggregateSum,
	}
}

// window takes lags one interval apart.
func window(c domain.AutoScalerConfig, lags ...int64) autoscale.Window {
	var w autoscale.Window
	at := time.Unix(1_000_000, 0)
	for _, l := range lags {
		w.Add(c, at, l)
		at = at.Add(c.LagCollectionInterval.D())
	}
	return w
}

func TestWindowKeepsOneSamplePerIntervalOverTheRange(t *testing.T) {
	c := config()
	var w autoscale.Window
	at := time.Unix(1_000_000, 0)
	require.True(t, w.Add(c, at, 1))
	require.False(t, w.Add(c, at.Add(500*time.Millisecond), 2), "a sample sooner than lagCollectionInterval is not taken")
	for i := range 15 {
		require.True(t, w.Add(c, at.Add(time.Duration(i+1)*time.Second), int64(i+2)))
	}
	require.Len(t, w.Lags, 10, "lagCollectionRange / lagCollectionInterval samples")
	require.Equal(t, int64(7), w.Lags[0], "the oldest are dropped")
	require.Equal(t, int64(16), w.Lags[9])
}

func TestAggregateSumsOrTakesTheMaximum(t *testing.T) {
	c := config()
	lags := map[domain.Partition]int64{domain.P(0): 5, domain.P(1): 30, domain.P(2): 7}
	require.Equal(t, int64(42), autoscale.Aggregate(c, lags))
	c.LagAggregate = domain.LagAggregateMax
	require.Equal(t, int64(30), autoscale.Aggregate(c, lags))
}

func TestDecide(t *testing.T) {
	c := config()
	high, low, mid := int64(5000), int64(10), int64(500)
	repeat := func(n int, l int64) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = l
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		lags       []int64
		current    int
		partitions int
		want       int // 0: no action
		direction  string
	}{
		{"not full: no action", repeat(9, high), 1, 8, 0, ""},
		{"3 of 10 above: out by scaleOutStep", append(repeat(7, mid), high, high, high), 1, 8, 3, autoscale.Out},
		{"2 of 10 above: below the fraction", append(repeat(8, mid), high, high), 1, 8, 0, ""},
		{"out is capped at taskCountMax", repeat(10, high), 3, 8, 4, autoscale.Out},
		{"out is capped at the partition count", repeat(10, high), 1, 2, 2, autoscale.Out},
		{"at the cap: no action", repeat(10, high), 4, 8, 0, ""},
		{"9 of 10 below: in by scaleInStep", append(repeat(9, low), mid), 3, 8, 2, autoscale.In},
		{"8 of 10 below: below the fraction", append(repeat(8, low), mid, mid), 3, 8, 0, ""},
		{"at taskCountMin: no action", repeat(10, low), 1, 8, 0, ""},
		{"more groups than partitions: in to the partition count", repeat(10, mid), 4, 3, 3, autoscale.In},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := autoscale.Decide(c, window(c, tc.lags...), tc.current, tc.partitions)
			if tc.want == 0 {
				require.False(t, ok, "%+v", d)
				return
			}
			require.True(t, ok)
			require.Equal(t, tc.want, d.TaskCount)
			require.Equal(t, tc.current, d.From)
			require.Equal(t, tc.direction, d.Direction)
			require.NotEmpty(t, d.Reason)
		})
	}
}

func TestAllowedAtWaitsForStartDelayAndFrequency(t *testing.T) {
	c := config()
	since := time.Unix(1_000_000, 0)
	require.Equal(t, since.Add(time.Minute), autoscale.AllowedAt(c, since, time.Time{}))
	last := since.Add(2 * time.Minute)
	require.Equal(t, last.Add(5*time.Minute), autoscale.AllowedAt(c, since, last))
}

func TestSummarizeCountsAgainstTheThresholds(t *testing.T) {
	c := config()
	s := autoscale.Summarize(c, window(c, 5000, 10, 500, 20))
	require.Equal(t, autoscale.Summary{Samples: 4, Capacity: 10, Latest: 20, Min: 10, Max: 5000, AboveOut: 1, BelowIn: 2}, s)
}
