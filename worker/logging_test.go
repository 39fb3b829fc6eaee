package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	tlog "go.temporal.io/sdk/log"
	"go.uber.org/fx/fxtest"

	"handoff/internal/workload"
)

func TestLoggerMasksPasswords(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"text", "json"} {
		var out strings.Builder
		log := buildLogger(Config{LogLevel: "info", LogFormat: format}, &out)
		log = log.With("dsn", "postgres://u:secret@h/db")
		log.Info("connect postgres://u:secret@h/db",
			"error", fmt.Errorf("ping: %w", errors.New("host=h password=secret")),
			slog.Group("kafka", "broker", "sasl_ssl://alice:secret@b:9093"),
			"brokers", []string{"sasl_ssl://alice:secret@b:9093"},
			"n", 3)
		tlog.NewStructuredLogger(log).Warn("temporal", "Address", "postgres://u:secret@h/db")
		log.Debug("hidden at info")

		text := out.String()
		require.NotContains(t, text, "secret", format)
		require.Contains(t, text, "postgres://u:xxxxx@h/db", format)
		require.Contains(t, text, "password=xxxxx", format)
		require.Contains(t, text, "alice:xxxxx@b:9093", format)
		require.NotContains(t, text, "hidden at info", format)
		lines := strings.Split(strings.TrimSpace(text), "\n")
		require.Len(t, lines, 2, format)
		if format == "json" {
			var rec map[string]any
			require.NoError(t, json.Unmarshal([]byte(lines[0]), &rec))
			require.EqualValues(t, 3, rec["n"], "numbers stay numbers")
		}
	}
}

func TestTrackerMonitorStartsAndStops(t *testing.T) {
	t.Parallel()
	lc := fxtest.NewLifecycle(t)
	tr := newTracker(lc, Config{MaxConsume: 3, MaxPublish: 1, PushBackFraction: 0.8, CompactShare: 0.25})
	require.Equal(t, workload.Limits{Consume: 3, Publish: 1, Compact: 1, CompactShare: 0.25, PushBackFraction: 0.8, CheckEvery: tr.Limits().CheckEvery}, tr.Limits())
	lc.RequireStart()
	lc.RequireStop() // returns once the monitor has
}
