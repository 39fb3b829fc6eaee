package storage

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
)

func TestS3ConfigFromEnv(t *testing.T) {
	env := map[string]string{
		"HANDOFF_S3_ENDPOINT":   "http://minio:9000",
		"AWS_REGION":            "eu-west-1",
		"AWS_ACCESS_KEY_ID":     "id",
		"AWS_SECRET_ACCESS_KEY": "secret",
		"AWS_SESSION_TOKEN":     "token",
	}
	var asked []string
	cfg := S3ConfigFromEnv(func(name string) string {
		asked = append(asked, name)
		return env[name]
	})
	want := S3Config{Endpoint: "http://minio:9000", Region: "eu-west-1", AccessKeyID: "id", SecretAccessKey: "secret", SessionToken: "token"}
	if cfg != want {
		t.Fatalf("cfg = %+v, want %+v", cfg, want)
	}
	slices.Sort(asked)
	names := slices.Sorted(slices.Values(S3EnvNames))
	if !slices.Equal(asked, names) {
		t.Fatalf("read %q, but S3EnvNames lists %q", asked, names)
	}
}

func TestS3ConfigEndpoint(t *testing.T) {
	cases := map[string]struct {
		host   string
		secure bool
	}{
		"":                       {"s3.amazonaws.com", true},
		"http://minio:9000":      {"minio:9000", false},
		"http://minio:9000/":     {"minio:9000", false},
		"https://s3.example.com": {"s3.example.com", true},
		"https://10.0.0.1:9000":  {"10.0.0.1:9000", true},
	}
	for endpoint, want := range cases {
		host, secure, err := S3Config{Endpoint: endpoint}.endpoint()
		if err != nil || host != want.host || secure != want.secure {
			t.Errorf("%q: %s %v %v, want %s %v", endpoint, host, secure, err, want.host, want.secure)
		}
	}
}

func TestS3ConfigLogValueHidesSecrets(t *testing.T) {
	cfg := S3Config{Endpoint: "http://minio:9000", AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI", SessionToken: "tok3n"}
	var b strings.Builder
	slog.New(slog.NewTextHandler(&b, nil)).Info("s3", "cfg", cfg)
	out := b.String()
	if strings.Contains(out, "wJalrXUtnFEMI") || strings.Contains(out, "tok3n") {
		t.Fatalf("secret logged: %s", out)
	}
	for _, want := range []string{"http://minio:9000", "AKIDEXAMPLE", fmt.Sprint(defaultS3PartSize)} {
		if !strings.Contains(out, want) {
			t.Fatalf("log %s lacks %s", out, want)
		}
	}
}

func TestS3ConfigPrintsWithoutSecrets(t *testing.T) {
	c := S3Config{Endpoint: "http://minio:9000", AccessKeyID: "key-id", SecretAccessKey: "the-secret-key", SessionToken: "the-session-token"}
	for _, format := range []string{"%v", "%+v", "%s"} {
		got := fmt.Sprintf(format, c)
		if strings.Contains(got, "the-secret-key") || strings.Contains(got, "the-session-token") {
			t.Errorf("%s shows a secret: %s", format, got)
		}
		if !strings.Contains(got, "key-id") || !strings.Contains(got, "http://minio:9000") {
			t.Errorf("%s does not show the endpoint and key id: %s", format, got)
		}
	}
	if got := fmt.Sprintf("%+v", struct{ S3 S3Config }{c}); strings.Contains(got, "the-secret-key") {
		t.Errorf("a struct holding the config shows its secret: %s", got)
	}
}
