package redact_test

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/redact"
)

func TestURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"postgres://u:secret@h/db", "postgres://u:xxxxx@h/db"},
		{"postgres://u:secret@h:5432/db?sslmode=disable", "postgres://u:xxxxx@h:5432/db?sslmode=disable"},
		{"postgresql://u:p%40ss@h", "postgresql://u:xxxxx@h"},
		{"postgres://u:p@ss@h/db?x=a@b", "postgres://u:xxxxx@h/db?x=a@b"},
		{"postgres://u:pa/ss@h/db", "postgres://u:xxxxx@h/db"},
		{"postgres://u:pa#ss@h/db", "postgres://u:xxxxx@h/db"},
		{"postgres://u@h/db", "postgres://u@h/db"},
		{"postgres://h:5432/db?x=a@b", "postgres://h:5432/db?x=a@b"},
		{"postgres://u@h/db?password=secret&sslmode=require", "postgres://u@h/db?password=xxxxx&sslmode=require"},
		{"host=h password=secret dbname=db", "host=h password=xxxxx dbname=db"},
		{"host=h password='se cret\\' x' dbname=db", "host=h password='xxxxx' dbname=db"},
		{"host=h sslpassword=k password = secret", "host=h sslpassword=xxxxx password = xxxxx"},
		{"host=h password=a&b dbname=db", "host=h password=xxxxx dbname=db"},
		{"PGPASSWORD=secret psql", "PGPASSWORD=xxxxx psql"},
		{"sasl_ssl://alice:s3cr3t@broker-1:9093", "sasl_ssl://alice:xxxxx@broker-1:9093"},
		{"kafka+sasl://alice:s3cr3t@b1:9093,kafka+sasl://alice:s3cr3t@b2:9093",
			"kafka+sasl://alice:xxxxx@b1:9093,kafka+sasl://alice:xxxxx@b2:9093"},
		{"kafka://b1:9092?sasl.mechanism=PLAIN&sasl.username=a&sasl.password=s3cr3t",
			"kafka://b1:9092?sasl.mechanism=PLAIN&sasl.username=a&sasl.password=xxxxx"},
		{`dial "postgres://u:secret@h/db": refused`, `dial "postgres://u:xxxxx@h/db": refused`},
		{`{"dsn":"postgres://u:secret@h","x":"a@b"}`, `{"dsn":"postgres://u:xxxxx@h","x":"a@b"}`},
		{"connect postgres://u:secret@h/db and postgres://v:other@g/db",
			"connect postgres://u:xxxxx@h/db and postgres://v:xxxxx@g/db"},
		{"nothing hidden: localhost:7233, a=b", "nothing hidden: localhost:7233, a=b"},
		{"https://example.com:443/path", "https://example.com:443/path"},
		{"", ""},
	} {
		got := redact.URL(tc.in)
		require.Equal(t, tc.want, got, "URL(%q)", tc.in)
		require.NotContains(t, got, "secret", tc.in)
		require.Equal(t, got, redact.URL(got), "redacting twice changes nothing: %q", tc.in)
	}
}

func TestUserinfo(t *testing.T) {
	t.Parallel()
	require.Equal(t, "alice:xxxxx@broker:9092", redact.Userinfo("alice:s3cr3t@broker:9092"))
	require.Equal(t, "broker:9092", redact.Userinfo("broker:9092"))
	require.Equal(t, "sasl_ssl://alice:xxxxx@broker:9093", redact.Userinfo("sasl_ssl://alice:s3cr3t@broker:9093"))
}

func TestError(t *testing.T) {
	t.Parallel()
	require.NoError(t, redact.Error(nil))

	inner := fmt.Errorf("connect postgres://u:secret@h/db (host=h password=secret dbname=db): %w", fs.ErrNotExist)
	err := redact.Error(inner)
	require.Equal(t, "connect postgres://u:xxxxx@h/db (host=h password=xxxxx dbname=db): file does not exist", err.Error())
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.Same(t, inner, errors.Unwrap(err))
	require.Same(t, err, redact.Error(err), "wrapping twice adds nothing")

	wrapped := fmt.Errorf("postgres: %w", err)
	require.False(t, strings.Contains(wrapped.Error(), "secret"), "wrapping keeps the message redacted")
}

func FuzzURL(f *testing.F) {
	f.Add("postgres://u:secret@h/db")
	f.Add("host=h password='a b' x")
	f.Add("a://b:c@d?password=e&f")
	f.Fuzz(func(t *testing.T, s string) {
		got := redact.URL(s)
		require.Equal(t, got, redact.URL(got), "idempotent")
	})
}
