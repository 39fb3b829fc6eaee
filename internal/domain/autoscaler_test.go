package domain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

func TestAutoScalerConfigDefaultsAreDruids(t *testing.T) {
	t.Parallel()
	m := specMap(t)
	set(m, "ioConfig.autoScalerConfig", map[string]any{"enableTaskAutoScaler": true, "taskCountMin": 1, "taskCountMax": 4})
	s, err := domain.ParseSpec(mustJSON(t, m))
	require.NoError(t, err)
	require.True(t, s.IOConfig.AutoScalerOn())
	require.Equal(t, domain.AutoScalerConfig{
		EnableTaskAutoScaler: true, AutoScalerStrategy: "lagBased", TaskCountMin: 1, TaskCountMax: 4,
		LagCollectionInterval: domain.Duration(30 * time.Second), LagCollectionRange: domain.Duration(10 * time.Minute),
		ScaleOutThreshold: 6_000_000, TriggerScaleOutFractionThreshold: 0.3,
		ScaleInThreshold: 1_000_000, TriggerScaleInFractionThreshold: 0.9,
		ScaleActionStartDelay: domain.Duration(5 * time.Minute), ScaleActionPeriod: domain.Duration(time.Minute),
		MinTriggerScaleActionFrequency: domain.Duration(10 * time.Minute),
		ScaleOutStep:                   2, ScaleInStep: 1, LagAggregate: "sum",
	}, *s.IOConfig.AutoScalerConfig)

	plain, err := domain.ParseSpec([]byte(minimalSpec))
	require.NoError(t, err)
	require.False(t, plain.IOConfig.AutoScalerOn())
	require.Nil(t, plain.IOConfig.AutoScalerConfig, "a spec without the autoscaler gains no config")
}

func TestAutoScalerConfigRefusesWhatCannotWork(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		field string
		value any
		path  string
	}{
		{"taskCountMin", 0, "ioConfig.autoScalerConfig.taskCountMin"},
		{"taskCountMax", 0, "ioConfig.autoScalerConfig.taskCountMax"},
		{"autoScalerStrategy", "cpuBased", "ioConfig.autoScalerConfig.autoScalerStrategy"},
		{"lagAggregate", "average", "ioConfig.autoScalerConfig.lagAggregate"},
		{"lagCollectionRange", "1s", "ioConfig.autoScalerConfig.lagCollectionRange"},
		{"scaleInThreshold", 7_000_000, "ioConfig.autoScalerConfig.scaleInThreshold"},
		{"triggerScaleOutFractionThreshold", 1.5, "ioConfig.autoScalerConfig.triggerScaleOutFractionThreshold"},
		{"scaleOutStep", -1, "ioConfig.autoScalerConfig.scaleOutStep"},
		{"taskCountMin", 3, "ioConfig.taskCount"}, // taskCount 2 is below the new minimum
	} {
		t.Run(c.field, func(t *testing.T) {
			t.Parallel()
			m := specMap(t)
			set(m, "ioConfig.taskCount", 2)
			set(m, "ioConfig.autoScalerConfig", map[string]any{
				"enableTaskAutoScaler": true, "taskCountMin": 1, "taskCountMax": 4, "lagCollectionInterval": "5s",
			})
			set(m, "ioConfig.autoScalerConfig."+c.field, c.value)
			_, err := domain.ParseSpec(mustJSON(t, m))
			var fe *domain.FieldError
			require.True(t, errors.As(err, &fe), "%v", err)
			require.Equal(t, c.path, fe.Path, "%v", err)
		})
	}
	t.Run("disabled config is not checked", func(t *testing.T) {
		t.Parallel()
		m := specMap(t)
		set(m, "ioConfig.autoScalerConfig", map[string]any{"enableTaskAutoScaler": false, "taskCountMax": 0})
		_, err := domain.ParseSpec(mustJSON(t, m))
		require.NoError(t, err)
	})
}
