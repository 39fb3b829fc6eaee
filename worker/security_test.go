package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	tlog "go.temporal.io/sdk/log"
	"go.uber.org/fx/fxtest"
)

const (
	saslPassword = "Sasl-s3cr3t-1357"
	temporalKey  = "tmprl-ApiKey-s3cr3t-9753"
)

// pemFiles writes a self-signed certificate and its key; it returns their
// paths and a piece of the key that must never be shown.
func pemFiles(t *testing.T) (certFile, keyFile, keyPiece string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "handoff"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, keyPEM, 0o600))
	return certFile, keyFile, strings.Split(string(keyPEM), "\n")[1][:40]
}

func clearSecurityEnv(t *testing.T) {
	for _, k := range []string{"KAFKA_TLS", "KAFKA_TLS_CA_FILE", "KAFKA_TLS_CERT_FILE", "KAFKA_TLS_KEY_FILE", "KAFKA_TLS_SERVER_NAME",
		"KAFKA_TLS_INSECURE_SKIP_VERIFY", "KAFKA_SASL_MECHANISM", "KAFKA_SASL_USERNAME", "KAFKA_SASL_PASSWORD",
		"TEMPORAL_TLS", "TEMPORAL_TLS_SERVER_CA_CERT_PATH", "TEMPORAL_TLS_CLIENT_CERT_PATH", "TEMPORAL_TLS_CLIENT_KEY_PATH",
		"TEMPORAL_TLS_SERVER_NAME", "TEMPORAL_TLS_DISABLE_HOST_VERIFICATION", "TEMPORAL_API_KEY"} {
		t.Setenv(k, "")
	}
}

// setSecureEnv configures Kafka SASL_SSL with mTLS and Temporal mTLS with
// an API key, and returns what must never be shown.
func setSecureEnv(t *testing.T) (certFile string, secrets []string) {
	clearWorkerEnv(t)
	clearSecurityEnv(t)
	certFile, keyFile, keyPiece := pemFiles(t)
	t.Setenv("DATABASE_URL", "postgres://handoff@127.0.0.1/handoff")
	t.Setenv("KAFKA_TLS_CA_FILE", certFile)
	t.Setenv("KAFKA_TLS_CERT_FILE", certFile)
	t.Setenv("KAFKA_TLS_KEY_FILE", keyFile)
	t.Setenv("KAFKA_SASL_MECHANISM", "SCRAM-SHA-512")
	t.Setenv("KAFKA_SASL_USERNAME", "handoff")
	t.Setenv("KAFKA_SASL_PASSWORD", saslPassword)
	t.Setenv("TEMPORAL_TLS_SERVER_CA_CERT_PATH", certFile)
	t.Setenv("TEMPORAL_TLS_CLIENT_CERT_PATH", certFile)
	t.Setenv("TEMPORAL_TLS_CLIENT_KEY_PATH", keyFile)
	t.Setenv("TEMPORAL_TLS_SERVER_NAME", "temporal.example.com")
	t.Setenv("TEMPORAL_API_KEY", temporalKey)
	return certFile, []string{saslPassword, temporalKey, keyPiece}
}

func requireNone(t *testing.T, where, text string, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		require.NotContains(t, text, s, "%s shows a secret:\n%s", where, text)
	}
}

func TestConfigReadsSecureConnections(t *testing.T) {
	certFile, _ := setSecureEnv(t)
	cfg, err := ParseConfig(nil)
	require.NoError(t, err)
	k := cfg.Security.Kafka
	require.True(t, k.TLS.Enabled)
	require.Equal(t, certFile, k.TLS.CAFile)
	require.Equal(t, "SCRAM-SHA-512", k.SASL.Mechanism)
	require.Equal(t, saslPassword, k.SASL.Password)

	o, err := cfg.temporalOptions()
	require.NoError(t, err)
	require.Equal(t, "localhost:7233", o.HostPort)
	require.NotNil(t, o.ConnectionOptions.TLS)
	require.Equal(t, "temporal.example.com", o.ConnectionOptions.TLS.ServerName)
	require.Len(t, o.ConnectionOptions.TLS.Certificates, 1)
	require.NotNil(t, o.Credentials, "the API key")

	clearSecurityEnv(t)
	cfg, err = ParseConfig(nil)
	require.NoError(t, err)
	o, err = cfg.temporalOptions()
	require.NoError(t, err)
	require.Nil(t, o.ConnectionOptions.TLS, "plaintext unless configured")
	require.Nil(t, o.Credentials)
}

func TestSecureConnectionSecretsNeverLoggedOrPrinted(t *testing.T) {
	certFile, secrets := setSecureEnv(t)
	cfg, err := ParseConfig(nil)
	require.NoError(t, err)
	for _, format := range []string{"text", "json"} {
		cfg.LogFormat = format
		var logged strings.Builder
		log := buildLogger(cfg, &logged)
		logConfig(cfg, log)
		log.Info("printed", "cfg", fmt.Sprintf("%+v", cfg), "v", fmt.Sprintf("%v", cfg), "gov", fmt.Sprintf("%#v", cfg.Security.Kafka.SASL))
		tlog.NewStructuredLogger(log).Info("temporal", "Config", cfg)
		out := logged.String()
		for _, want := range []string{"SCRAM-SHA-512", "handoff", certFile, "temporal.example.com", "apiKey"} {
			require.Contains(t, out, want, format)
		}
		requireNone(t, format+" log", out, secrets)
	}
	requireNone(t, "String", cfg.String(), secrets)
}

func TestConfigNamesWhatIsWrongWithSecureConnections(t *testing.T) {
	_, secrets := setSecureEnv(t)
	t.Setenv("KAFKA_SASL_MECHANISM", "GSSAPI")
	t.Setenv("TEMPORAL_TLS_CLIENT_KEY_PATH", "")
	_, err := ParseConfig(nil)
	require.ErrorContains(t, err, `KAFKA_SASL_MECHANISM="GSSAPI": want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512`)
	require.ErrorContains(t, err, "TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH: set both")
	requireNone(t, "error", err.Error(), secrets)

	// Files are read at start-up: a missing or wrong one is named.
	_, secrets = setSecureEnv(t)
	t.Setenv("KAFKA_TLS_CA_FILE", "/nonexistent/ca.pem")
	keyFile := os.Getenv("TEMPORAL_TLS_CLIENT_KEY_PATH")
	t.Setenv("TEMPORAL_TLS_CLIENT_CERT_PATH", keyFile)
	_, err = ParseConfig(nil)
	require.ErrorContains(t, err, "kafka: TLS CA file: open /nonexistent/ca.pem")
	require.ErrorContains(t, err, "temporal: TLS client certificate "+keyFile)
	requireNone(t, "error", err.Error(), secrets)
	var printed strings.Builder
	fmt.Fprintf(&printed, "%v %+v %q", err, err, err)
	requireNone(t, "printed error", printed.String(), secrets)
}

// Postgres's TLS comes with DATABASE_URL: pgx reads sslmode, sslrootcert,
// sslcert and sslkey from it. verify-full with a CA file is accepted, the
// pool's TLS checks the server's name against that CA, and the password
// stays masked.
func TestConfigPostgresVerifyFull(t *testing.T) {
	clearWorkerEnv(t)
	clearSecurityEnv(t)
	ca, _, _ := pemFiles(t)
	const pw = "Pg-s3cr3t-4321"
	t.Setenv("DATABASE_URL", "postgres://handoff:"+pw+"@db.example.com:5432/handoff?sslmode=verify-full&sslrootcert="+ca)
	cfg, err := ParseConfig(nil)
	require.NoError(t, err)

	pc, err := pgxpool.ParseConfig(cfg.DatabaseURL)
	require.NoError(t, err)
	tc := pc.ConnConfig.TLSConfig
	require.NotNil(t, tc, "sslmode=verify-full: TLS")
	require.Equal(t, "db.example.com", tc.ServerName)
	require.NotNil(t, tc.RootCAs, "sslrootcert: the CA")
	require.False(t, tc.InsecureSkipVerify && tc.VerifyPeerCertificate == nil, "verify-full verifies")
	require.Empty(t, pc.ConnConfig.Fallbacks, "verify-full: no plaintext fallback")

	var logged strings.Builder
	logConfig(cfg, buildLogger(cfg, &logged))
	require.Contains(t, logged.String(), "sslmode=verify-full")
	require.Contains(t, logged.String(), "handoff:xxxxx@db.example.com")
	require.NotContains(t, logged.String(), pw)

	// A CA file that is not there: the worker's Postgres module names it.
	cfg.DatabaseURL = "postgres://handoff:" + pw + "@db.example.com:5432/handoff?sslmode=verify-full&sslrootcert=/nonexistent/root.crt"
	_, err = newPostgres(fxtest.NewLifecycle(t), cfg, buildLogger(cfg, &logged))
	require.ErrorContains(t, err, "/nonexistent/root.crt")
	require.NotContains(t, err.Error(), pw)
}

func TestUsageListsEnvironmentOnlySettings(t *testing.T) {
	setSecureEnv(t)
	usage := captureStderr(t, func() { _, _ = ParseConfig([]string{"-h"}) })
	for _, want := range []string{"-database-url", "KAFKA_SASL_PASSWORD", "TEMPORAL_API_KEY", "AWS_SECRET_ACCESS_KEY", "sslrootcert"} {
		require.Contains(t, usage, want)
	}
	requireNone(t, "usage", usage, []string{saslPassword, temporalKey})
}

func TestWarnsAboutWeakenedSecurity(t *testing.T) {
	setSecureEnv(t)
	cfg, err := ParseConfig(nil)
	require.NoError(t, err)
	var logged strings.Builder
	warnInsecure(cfg, buildLogger(cfg, &logged))
	require.Empty(t, logged.String(), "SCRAM over verified TLS: nothing to warn about")

	clearSecurityEnv(t)
	t.Setenv("KAFKA_SASL_MECHANISM", "PLAIN")
	t.Setenv("KAFKA_SASL_USERNAME", "handoff")
	t.Setenv("KAFKA_SASL_PASSWORD", saslPassword)
	t.Setenv("TEMPORAL_API_KEY", temporalKey)
	t.Setenv("TEMPORAL_TLS", "false")
	cfg, err = ParseConfig(nil)
	require.NoError(t, err)
	warnInsecure(cfg, buildLogger(cfg, &logged))
	require.Contains(t, logged.String(), "Kafka SASL PLAIN without TLS")
	require.Contains(t, logged.String(), "Temporal API key without TLS")
	requireNone(t, "warnings", logged.String(), []string{saslPassword, temporalKey})

	logged.Reset()
	clearSecurityEnv(t)
	t.Setenv("KAFKA_TLS_INSECURE_SKIP_VERIFY", "true")
	t.Setenv("TEMPORAL_TLS_DISABLE_HOST_VERIFICATION", "true")
	cfg, err = ParseConfig(nil)
	require.NoError(t, err)
	warnInsecure(cfg, buildLogger(cfg, &logged))
	require.Contains(t, logged.String(), "Kafka TLS does not verify")
	require.Contains(t, logged.String(), "Temporal TLS does not verify")
}
