package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/require"

	"handoff/internal/storage"
)

const s3Secret = "S3-s3cr3t-key-2468"

func setS3Env(t *testing.T, endpoint string) {
	t.Setenv("HANDOFF_S3_ENDPOINT", endpoint)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "handoff-key")
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3Secret)
	t.Setenv("AWS_SESSION_TOKEN", "")
}

func TestConfigDeepStorageURIs(t *testing.T) {
	clearWorkerEnv(t)
	t.Setenv("DATABASE_URL", "postgres://x@h/db")
	setS3Env(t, "http://minio:9000")
	for _, loc := range []string{"./data/deep", "/abs/deep", "file:///abs/deep", "s3://handoff/segments", "s3://handoff"} {
		t.Setenv("HANDOFF_DEEP_STORAGE", loc)
		cfg, err := ParseConfig(nil)
		require.NoError(t, err, loc)
		require.Equal(t, loc, cfg.DeepStorage)
		require.Equal(t, storage.S3Config{Endpoint: "http://minio:9000", Region: "us-east-1",
			AccessKeyID: "handoff-key", SecretAccessKey: s3Secret}, cfg.S3)
	}

	for loc, want := range map[string]string{
		"gs://bucket/p":                 `scheme "gs" not supported`,
		"s3:///prefix":                  "no bucket",
		"file://":                       "no path",
		"s3://key:" + s3Secret + "@b/p": "credentials do not belong in the URI",
	} {
		t.Setenv("HANDOFF_DEEP_STORAGE", loc)
		_, err := ParseConfig(nil)
		require.ErrorContains(t, err, "deep storage", loc)
		require.ErrorContains(t, err, want, loc)
		require.NotContains(t, err.Error(), s3Secret)
	}
	t.Setenv("HANDOFF_DEEP_STORAGE", "")
	// Staging takes the same locations: workers on several hosts share it.
	t.Setenv("HANDOFF_STAGING_DIR", "s3://handoff/staging")
	cfg, err := ParseConfig(nil)
	require.NoError(t, err)
	require.Equal(t, "s3://handoff/staging", cfg.StagingDir)
	t.Setenv("HANDOFF_STAGING_DIR", "gs://bucket/staging")
	_, err = ParseConfig(nil)
	require.ErrorContains(t, err, `staging "gs://bucket/staging": scheme "gs" not supported`)
	// Scratch is local.
	t.Setenv("HANDOFF_STAGING_DIR", "")
	t.Setenv("HANDOFF_SCRATCH_DIR", "s3://handoff/tmp")
	_, err = ParseConfig(nil)
	require.ErrorContains(t, err, `scratch dir "s3://handoff/tmp": want a local directory`)
}

func TestConfigLogsS3WithoutSecret(t *testing.T) {
	clearWorkerEnv(t)
	t.Setenv("DATABASE_URL", "postgres://x@h/db")
	t.Setenv("HANDOFF_DEEP_STORAGE", "s3://handoff/segments")
	setS3Env(t, "http://minio:9000")
	cfg, err := ParseConfig(nil)
	require.NoError(t, err)
	for _, format := range []string{"text", "json"} {
		var out bytes.Buffer
		cfg.LogFormat = format
		logConfig(cfg, buildLogger(cfg, &out))
		require.Contains(t, out.String(), "s3://handoff/segments", format)
		require.Contains(t, out.String(), "http://minio:9000", format)
		require.Contains(t, out.String(), "handoff-key", format)
		require.NotContains(t, out.String(), s3Secret, format)
	}
	require.NotContains(t, cfg.String(), s3Secret)
}

// fakeS3 serves an in-process S3 with bucket "handoff".
func fakeS3(t *testing.T) string {
	t.Helper()
	backend := s3mem.New()
	require.NoError(t, backend.CreateBucket("handoff"))
	srv := httptest.NewServer(gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog())).Server())
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestNewStorageOpensS3DeepStorage(t *testing.T) {
	endpoint := fakeS3(t)
	cfg := Config{DeepStorage: "s3://handoff/segments", StagingDir: t.TempDir(), S3: storage.S3Config{
		Endpoint: endpoint, Region: "us-east-1", AccessKeyID: "handoff-key", SecretAccessKey: s3Secret,
	}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := newStorage(cfg, log)
	require.NoError(t, err)
	require.IsType(t, &storage.S3{}, s.Deep)
	require.Equal(t, "s3://handoff/segments/ds/a.parquet", s.Deep.URI("ds/a.parquet"))
	require.NoError(t, s.Deep.Put(context.Background(), "ds/a.parquet", func(w io.Writer) error {
		_, err := io.WriteString(w, "segment")
		return err
	}))
	keys, err := s.Deep.List(context.Background(), "ds/")
	require.NoError(t, err)
	require.Equal(t, []string{"ds/a.parquet"}, keys)
	require.True(t, strings.HasPrefix(s.Staging.URI("x"), "file://"))

	cfg.DeepStorage = "s3://missing/segments"
	_, err = newStorage(cfg, log)
	require.ErrorContains(t, err, "deep storage")
	require.ErrorContains(t, err, "missing does not exist")
	require.NotContains(t, err.Error(), s3Secret)

	cfg.DeepStorage = "file://" + t.TempDir()
	s, err = newStorage(cfg, log)
	require.NoError(t, err)
	require.IsType(t, &storage.Local{}, s.Deep)
}
