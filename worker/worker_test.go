package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
)

func TestModulesWireUp(t *testing.T) {
	cfg, err := ParseConfig([]string{"--database-url", "postgres://x@127.0.0.1:1/db"})
	require.NoError(t, err)
	require.NoError(t, fx.ValidateApp(Modules(cfg)))
}

func TestConfigFallsBackToEnvironmentAndDefaults(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://env@127.0.0.1/db")
	t.Setenv("KAFKA_BROKERS", "k1:9092, k2:9093")
	cfg, err := ParseConfig(nil)
	require.NoError(t, err)
	require.Equal(t, "postgres://env@127.0.0.1/db", cfg.DatabaseURL)
	require.Equal(t, []string{"k1:9092", "k2:9093"}, cfg.KafkaBrokers)
	require.Equal(t, "localhost:7233", cfg.TemporalAddress)
	require.Equal(t, "127.0.0.1:8081", cfg.HTTPAddr)

	cfg, err = ParseConfig([]string{"--kafka-brokers", "flag:1"})
	require.NoError(t, err)
	require.Equal(t, []string{"flag:1"}, cfg.KafkaBrokers, "a flag wins over the environment")
}

func TestConfigNamesWhatIsWrong(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	_, err := ParseConfig([]string{"--temporal-address", "nohost", "--kafka-brokers", "broker", "--log-level", "loud"})
	require.Error(t, err)
	for _, want := range []string{"DATABASE_URL", `temporal address "nohost"`, `kafka broker "broker"`, `log level "loud"`} {
		require.True(t, strings.Contains(err.Error(), want), "error %q should mention %q", err, want)
	}
}
