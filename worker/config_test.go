package main

import (
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// clearWorkerEnv unsets the worker's optional variables, so the tests see
// defaults whatever the environment they run in.
func clearWorkerEnv(t *testing.T) {
	for _, name := range []string{
		"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "KAFKA_BROKERS", "HANDOFF_DEEP_STORAGE", "HANDOFF_STAGING_DIR",
		"HANDOFF_HTTP_ADDR", "HANDOFF_LOG_LEVEL", "HANDOFF_LOG_FORMAT", "HANDOFF_MAX_CONSUME", "HANDOFF_MAX_PUBLISH",
		"HANDOFF_MAX_STREAMS", "HANDOFF_WORKFLOW_CACHE",
		"HANDOFF_MEMORY_LIMIT", "HANDOFF_PUSHBACK_FRACTION", "HANDOFF_SHUTDOWN_GRACE", "HANDOFF_SCRATCH_DIR",
		"HANDOFF_COMPACT_SHARE",
	} {
		t.Setenv(name, "")
	}
}

func TestConfigWorkloadDefaults(t *testing.T) {
	clearWorkerEnv(t)
	cfg, err := ParseConfig([]string{"--database-url", "postgres://x@h/db"})
	require.NoError(t, err)
	require.Equal(t, "text", cfg.LogFormat)
	require.Equal(t, 4, cfg.MaxConsume)
	require.Equal(t, 2, cfg.MaxPublish)
	require.Equal(t, 1000, cfg.MaxStreams)
	require.Zero(t, cfg.WorkflowCache, "the SDK's default")
	require.Zero(t, cfg.MemoryLimit)
	require.Equal(t, 0.8, cfg.PushBackFraction)
	require.Equal(t, 0.5, cfg.CompactShare)
	require.Equal(t, 30*time.Second, cfg.ShutdownGrace)
}

func TestConfigWorkloadFromEnvironmentAndFlags(t *testing.T) {
	clearWorkerEnv(t)
	t.Setenv("DATABASE_URL", "postgres://x@h/db")
	t.Setenv("HANDOFF_LOG_FORMAT", "json")
	t.Setenv("HANDOFF_MAX_CONSUME", "6")
	t.Setenv("HANDOFF_MAX_PUBLISH", "3")
	t.Setenv("HANDOFF_MAX_STREAMS", "4000")
	t.Setenv("HANDOFF_WORKFLOW_CACHE", "300")
	t.Setenv("HANDOFF_MEMORY_LIMIT", "512MiB")
	t.Setenv("HANDOFF_PUSHBACK_FRACTION", "0.5")
	t.Setenv("HANDOFF_SHUTDOWN_GRACE", "2m")
	t.Setenv("HANDOFF_COMPACT_SHARE", "0.25")
	cfg, err := ParseConfig(nil)
	require.NoError(t, err)
	require.Equal(t, "json", cfg.LogFormat)
	require.Equal(t, 6, cfg.MaxConsume)
	require.Equal(t, 3, cfg.MaxPublish)
	require.Equal(t, 4000, cfg.MaxStreams)
	require.Equal(t, 300, cfg.WorkflowCache)
	require.Equal(t, int64(512<<20), cfg.MemoryLimit)
	require.Equal(t, 0.5, cfg.PushBackFraction)
	require.Equal(t, 2*time.Minute, cfg.ShutdownGrace)
	require.Equal(t, 0.25, cfg.CompactShare)

	cfg, err = ParseConfig([]string{"--log-format", "text", "--max-consume", "1", "--max-publish", "1",
		"--memory-limit", "2GiB", "--pushback-fraction", "1", "--shutdown-grace", "0s", "--compact-share", "1"})
	require.NoError(t, err)
	require.Equal(t, "text", cfg.LogFormat, "a flag wins over the environment")
	require.Equal(t, 1, cfg.MaxConsume)
	require.Equal(t, 1, cfg.MaxPublish)
	require.Equal(t, int64(2<<30), cfg.MemoryLimit)
	require.Equal(t, 1.0, cfg.PushBackFraction)
	require.Zero(t, cfg.ShutdownGrace)
	require.Equal(t, 1.0, cfg.CompactShare)
}

func TestParseBytes(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"0": 0, "1024": 1024, "1B": 1, "2KiB": 2 << 10, "512MiB": 512 << 20, "2GiB": 2 << 30,
		"1TiB": 1 << 40, "3gib": 3 << 30, "4 MiB": 4 << 20,
	} {
		got, err := parseBytes(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "2GB", "2G", "1.5GiB", "-1", "-1MiB", "lots", "MiB", "9999999999TiB"} {
		_, err := parseBytes(in)
		require.Error(t, err, in)
	}
}

func TestConfigNamesWhatIsWrongWithTheWorkload(t *testing.T) {
	clearWorkerEnv(t)
	t.Setenv("DATABASE_URL", "postgres://x@h/db")
	_, err := ParseConfig([]string{"--max-consume", "many", "--memory-limit", "2GB", "--pushback-fraction", "most", "--shutdown-grace", "soon", "--compact-share", "half"})
	require.Error(t, err)
	for _, want := range []string{`max consume "many"`, `memory limit "2GB"`, `push-back fraction "most"`, `shutdown grace "soon"`, `compact share "half"`} {
		require.Contains(t, err.Error(), want)
	}

	_, err = ParseConfig([]string{"--log-format", "xml", "--max-consume", "0", "--max-publish", "-1", "--max-streams", "1",
		"--workflow-cache", "-5", "--pushback-fraction", "1.5", "--shutdown-grace", "-1s"})
	require.Error(t, err)
	for _, want := range []string{`log format "xml"`, "max consume 0", "max publish -1", "max streams 1", "workflow cache -5", "push-back fraction 1.5", "shutdown grace -1s"} {
		require.Contains(t, err.Error(), want)
	}
	_, err = ParseConfig([]string{"--pushback-fraction", "0"})
	require.ErrorContains(t, err, "push-back fraction 0")
	for _, share := range []string{"0", "1.5", "-0.5"} {
		_, err = ParseConfig([]string{"--compact-share", share})
		require.ErrorContains(t, err, "compact share "+share)
	}
}

func TestConfigNeverShowsPasswords(t *testing.T) {
	clearWorkerEnv(t)
	t.Setenv("DATABASE_URL", "postgres://u:secret@h/db")
	t.Setenv("KAFKA_BROKERS", "alice:secret@b1:9092")

	_, err := ParseConfig(nil)
	require.ErrorContains(t, err, `kafka broker "alice:xxxxx@b1:9092"`)
	require.NotContains(t, err.Error(), "secret")

	// Usage lists the defaults, taken from the environment.
	usage := captureStderr(t, func() { _, _ = ParseConfig([]string{"-h"}) })
	require.Contains(t, usage, "database-url")
	require.NotContains(t, usage, "secret")

	t.Setenv("KAFKA_BROKERS", "b1:9092")
	cfg, err := ParseConfig(nil)
	require.NoError(t, err)
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "config", cfg)
	require.Contains(t, logged.String(), "postgres://u:xxxxx@h/db")
	require.NotContains(t, logged.String(), "secret")
}

func captureStderr(t *testing.T, f func()) string {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	saved := os.Stderr
	os.Stderr = w
	defer func() { os.Stderr = saved }()
	f()
	require.NoError(t, w.Close())
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	return string(out)
}

// The HTTP server (whose /status shows supervisors and errors) listens on
// this machine only unless told otherwise; a container sets :8081.
func TestConfigHTTPAddrDefaultsToLoopback(t *testing.T) {
	clearWorkerEnv(t)
	t.Setenv("DATABASE_URL", "postgres://x@h/db")
	cfg, err := ParseConfig(nil)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:8081", cfg.HTTPAddr)
	host, _, err := net.SplitHostPort(cfg.HTTPAddr)
	require.NoError(t, err)
	require.True(t, net.ParseIP(host).IsLoopback(), "default %q is not a loopback address", cfg.HTTPAddr)

	for _, addr := range []string{":8081", "0.0.0.0:8081", "[::]:9000"} {
		t.Setenv("HANDOFF_HTTP_ADDR", addr)
		cfg, err := ParseConfig(nil)
		require.NoError(t, err)
		require.Equal(t, addr, cfg.HTTPAddr, "HANDOFF_HTTP_ADDR overrides the default")
	}
	cfg, err = ParseConfig([]string{"--http-addr", "127.0.0.1:0"})
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:0", cfg.HTTPAddr, "a flag wins over the environment")
}
