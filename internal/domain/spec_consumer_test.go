package domain_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

func TestIsolationLevelDefaultsToReadCommitted(t *testing.T) {
	t.Parallel()
	s := validSpec()
	require.Equal(t, domain.IsolationReadCommitted, s.IOConfig.IsolationLevel())

	for _, level := range []string{domain.IsolationReadCommitted, domain.IsolationReadUncommitted} {
		m := specMap(t)
		set(m, "ioConfig.consumerProperties", map[string]any{"isolation.level": level})
		s, err := domain.ParseSpec(mustJSON(t, m))
		require.NoError(t, err)
		require.Equal(t, level, s.IOConfig.IsolationLevel())
	}
}

func TestConsumerPropertiesRefusals(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		props map[string]any
		path  string
		msg   string
	}{
		"unknown level":  {map[string]any{"isolation.level": "read_latest"}, `ioConfig.consumerProperties."isolation.level"`, "want read_committed"},
		"not a string":   {map[string]any{"isolation.level": 1}, `ioConfig.consumerProperties."isolation.level"`, "want a string"},
		"brokers":        {map[string]any{"bootstrap.servers": "kafka:9092", "isolation.level": "read_committed"}, `ioConfig.consumerProperties."bootstrap.servers"`, "KAFKA_BROKERS"},
		"other property": {map[string]any{"fetch.min.bytes": 1}, `ioConfig.consumerProperties."fetch.min.bytes"`, "only isolation.level"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := specMap(t)
			set(m, "ioConfig.consumerProperties", tc.props)
			_, err := domain.ParseSpec(mustJSON(t, m))
			var fe *domain.FieldError
			require.True(t, errors.As(err, &fe), "%v", err)
			require.Equal(t, tc.path, fe.Path)
			require.Contains(t, fe.Msg, tc.msg)
		})
	}
}
