package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	tlog "go.temporal.io/sdk/log"
	"go.uber.org/fx/fxtest"

	"handoff/internal/workload"
)

// The passwords these tests configure. Each is looked for in everything
// the worker writes: logs (text and JSON), returned and printed errors,
// usage, /status (JSON and HTML) and /readyz.
const (
	pgPassword    = "Pg-s3cr3t-4321"
	kafkaPassword = "Kafka-s3cr3t-8765"
)

var secrets = []string{pgPassword, kafkaPassword, "s3cr3t"}

func requireNoSecret(t *testing.T, where, text string) {
	t.Helper()
	for _, s := range secrets {
		require.NotContains(t, text, s, "%s shows a password:\n%s", where, text)
	}
}

// closedPort is a local port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	return port
}

// databaseURLs are DATABASE_URLs with a password, pointing at a closed
// port: as a URL, as a keyword/value DSN, with the password in the query,
// and malformed in ways that make Postgres's driver quote them back.
func databaseURLs(port int) map[string]string {
	p := strconv.Itoa(port)
	return map[string]string{
		"url":               "postgres://handoff:" + pgPassword + "@127.0.0.1:" + p + "/handoff?sslmode=disable&connect_timeout=2",
		"dsn":               "host=127.0.0.1 port=" + p + " user=handoff password=" + pgPassword + " dbname=handoff sslmode=disable connect_timeout=2",
		"quoted dsn":        "host=127.0.0.1 port=" + p + " user=handoff password='" + pgPassword + " x' dbname=handoff connect_timeout=2",
		"query password":    "postgres://handoff@127.0.0.1:" + p + "/handoff?password=" + pgPassword + "&sslmode=disable&connect_timeout=2",
		"bad port":          "postgres://handoff:" + pgPassword + "@127.0.0.1:notaport/handoff",
		"bad option":        "postgres://handoff:" + pgPassword + "@127.0.0.1:" + p + "/handoff?sslmode=maybe",
		"missing colon":     "postgres//handoff:" + pgPassword + "@127.0.0.1:" + p + "/handoff",
		"missing scheme":    "handoff:" + pgPassword + "@127.0.0.1:" + p + "/handoff",
		"dsn bad timeout":   "host=127.0.0.1 password=" + pgPassword + " connect_timeout=soon",
		"url with @ in pw":  "postgres://handoff:" + pgPassword + "@x@127.0.0.1:" + p + "/handoff?connect_timeout=2",
		"url with / in pw":  "postgres://handoff:" + pgPassword + "/x@127.0.0.1:" + p + "/handoff?connect_timeout=2",
		"percent-encoded":   "postgres://handoff:" + pgPassword + "%21@127.0.0.1:" + p + "/handoff?connect_timeout=2",
		"password, no user": "postgres://:" + pgPassword + "@127.0.0.1:" + p + "/handoff?connect_timeout=2",
	}
}

// Configuration errors and usage never show a password, whether it is in
// DATABASE_URL or in a Kafka broker (which may not carry one).
func TestSecretsNeverInConfigErrorsOrUsage(t *testing.T) {
	clearWorkerEnv(t)
	for name, dbURL := range databaseURLs(closedPort(t)) {
		for _, brokers := range []string{
			"alice:" + kafkaPassword + "@b1:9092",
			"sasl_ssl://alice:" + kafkaPassword + "@b1:9093",
			"b1:9092,kafka://b2:9092?sasl.password=" + kafkaPassword,
		} {
			t.Setenv("DATABASE_URL", dbURL)
			t.Setenv("KAFKA_BROKERS", brokers)
			_, err := ParseConfig([]string{"--log-level", "loud", "--max-consume", "0"})
			require.Error(t, err, "%s, brokers %s", name, brokers)
			require.Contains(t, err.Error(), "kafka broker", "%s: the error names the broker", name)
			requireNoSecret(t, name+": config error", err.Error())

			usage := captureOutput(t, func() { _, _ = ParseConfig([]string{"-h"}) })
			require.Contains(t, usage, "-database-url")
			requireNoSecret(t, name+": usage", usage)

			// What main prints for it, and its exit code.
			var code int
			printed := captureOutput(t, func() { code = run(nil) })
			require.Equal(t, 2, code)
			require.Contains(t, printed, "worker: ")
			requireNoSecret(t, name+": printed config error", printed)
		}
	}
}

// Opening Postgres at a closed port, or with a malformed URL, fails with
// an error that names the problem and no password, however it is logged
// (text or JSON, by the worker or through the Temporal SDK's logger) or
// shown (/status, /readyz).
func TestSecretsNeverInConnectionErrorsLogsOrStatus(t *testing.T) {
	clearWorkerEnv(t)
	var failures []error
	for name, dbURL := range databaseURLs(closedPort(t)) {
		cfg := Config{DatabaseURL: dbURL, KafkaBrokers: []string{"127.0.0.1:9092"}, LogLevel: "debug", LogFormat: "text"}
		for _, format := range []string{"text", "json"} {
			cfg.LogFormat = format
			var logged strings.Builder
			log := buildLogger(cfg, &logged)
			logConfig(cfg, log)
			err := openPostgres(t, cfg, log)
			require.Error(t, err, name)
			requireNoSecret(t, name+": error", err.Error())
			requireNoSecret(t, name+": printed error", fmt.Sprintf("%v %+v %s %q", err, err, err, err))

			// Logged every way the worker and the SDK log errors.
			log.Error("start failed", "error", err)
			log.Error("start failed: " + err.Error())
			log.With("error", err).Warn("retrying", "cause", errors.Unwrap(err), "config", cfg)
			log.Debug(fmt.Sprintf("config %v", cfg), "cfg", fmt.Sprintf("%+v", cfg), "s", cfg.String())
			tlog.NewStructuredLogger(log).Error("temporal", "Error", err, "Config", cfg)
			require.Contains(t, logged.String(), "start failed", name)
			requireNoSecret(t, name+": "+format+" log", logged.String())
			if format == "text" {
				failures = append(failures, err)
			}
		}
	}

	// The errors, recorded as failed activities, on /status and /readyz.
	tr := workload.NewTracker(workload.Limits{Consume: 1, Publish: 1})
	for _, err := range failures {
		h, berr := tr.Begin(context.Background(), workload.Work{Kind: workload.Publish, Supervisor: "wiki"})
		require.NoError(t, berr)
		h.End(fmt.Errorf("commit: %w", err))
	}
	readyErr := failures[0]
	mux := testMux(t, tr, func(context.Context) error { return readyErr })
	for _, target := range []string{"/status?format=json", "/status"} {
		res := get(t, mux, target)
		require.Equal(t, http.StatusOK, res.StatusCode, target)
		page := body(t, res)
		require.Contains(t, page, "commit: ", "%s shows the failures", target)
		requireNoSecret(t, target, page)
	}
	for _, err := range failures {
		readyErr = err
		res := get(t, mux, "/readyz")
		require.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
		requireNoSecret(t, "/readyz", body(t, res))
	}
}

// openPostgres builds and starts the worker's Postgres module as the app
// does, returning the constructor's or the start hook's error.
func openPostgres(t *testing.T, cfg Config, log *slog.Logger) error {
	t.Helper()
	lc := fxtest.NewLifecycle(t)
	if _, err := newPostgres(lc, cfg, log); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := lc.Start(ctx)
	if err == nil {
		_ = lc.Stop(ctx)
		return errors.New("postgres started at a closed port")
	}
	return err
}

// captureOutput runs f with os.Stderr sent to a file, so that output of
// any size is caught, and returns what it wrote.
func captureOutput(t *testing.T, f func()) string {
	t.Helper()
	file, err := os.CreateTemp(t.TempDir(), "stderr")
	require.NoError(t, err)
	saved := os.Stderr
	os.Stderr = file
	defer func() { os.Stderr = saved }()
	f()
	_, err = file.Seek(0, io.SeekStart)
	require.NoError(t, err)
	out, err := io.ReadAll(file)
	require.NoError(t, err)
	require.NoError(t, file.Close())
	return string(out)
}
