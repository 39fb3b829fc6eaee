package cli

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"go.temporal.io/sdk/client"

	hkafka "handoff/internal/kafka"
)

const (
	saslPassword = "Sasl-s3cr3t-1357"
	apiKey       = "tmprl-ApiKey-s3cr3t-9753"
)

// tlsFiles makes a CA and a certificate it signs for 127.0.0.1, and
// returns the broker's TLS config and the CA's PEM file.
func tlsFiles(t *testing.T) (server *tls.Config, caFile string) {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	caCert, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	caFile = filepath.Join(dir, "ca.pem")
	require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600))

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "broker"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	require.NoError(t, err)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}, caFile
}

// saslSSLBroker is a kfake broker with topic t (2 partitions) behind TLS
// and SCRAM-SHA-256; it returns its address and the environment that
// reaches it.
func saslSSLBroker(t *testing.T) (string, map[string]string) {
	t.Helper()
	server, caFile := tlsFiles(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "t"), kfake.TLS(server),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "starter", saslPassword))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	broker := c.ListenAddrs()[0]
	return broker, map[string]string{
		"KAFKA_BROKERS": broker, "KAFKA_TLS_CA_FILE": caFile,
		"KAFKA_SASL_MECHANISM": "SCRAM-SHA-256", "KAFKA_SASL_USERNAME": "starter", "KAFKA_SASL_PASSWORD": saslPassword,
	}
}

// countSecure reads topic t through the worker's Kafka client with the
// same environment and returns how many messages it holds.
func countSecure(t *testing.T, env map[string]string) int64 {
	t.Helper()
	sec, err := hkafka.SecurityFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	kc, err := hkafka.New([]string{env["KAFKA_BROKERS"]}, hkafka.WithSecurity(sec))
	require.NoError(t, err)
	defer kc.Close()
	_, latest, err := kc.Bounds(t.Context(), "t", []int32{0, 1}, hkafka.ReadUncommitted)
	require.NoError(t, err)
	return latest[0] + latest[1]
}

func TestProduceOverSASLSSL(t *testing.T) {
	t.Parallel()
	_, env := saslSSLBroker(t)
	r := runCLI(t, runOpts{env: env, stdin: "{\"id\":1}\n{\"id\":2}\n"}, "produce", "--topic", "t", "-f", "-", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.JSONEq(t, `{"topic": "t", "sent": 2}`, r.stdout)
	r = runCLI(t, runOpts{env: env}, "produce", "--topic", "t", "--generate", "30", "--run-id", "s", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var got produceResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	assert.EqualValues(t, 30, got.Sent)
	assert.EqualValues(t, 32, countSecure(t, env))

	// A wrong password: a failure that names the brokers and shows no secret.
	wrong := map[string]string{}
	for k, v := range env {
		wrong[k] = v
	}
	wrong["KAFKA_SASL_PASSWORD"] = "wrong-password"
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r = runCLI(t, runOpts{env: wrong, ctx: ctx}, "produce", "--topic", "t", "--generate", "1")
	t.Logf("wrong password: %s", r.stderr)
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, "cannot reach Kafka at "+env["KAFKA_BROKERS"])
	assert.Contains(t, r.stderr, `the broker may have refused SASL SCRAM-SHA-256 as user "starter": check KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD`)
	assert.NotContains(t, r.stderr, "wrong-password")
	assert.NotContains(t, r.stderr, saslPassword)

	// Without TLS settings the client speaks plaintext to the TLS listener.
	delete(wrong, "KAFKA_TLS_CA_FILE")
	wrong["KAFKA_SASL_PASSWORD"] = saslPassword
	r = runCLI(t, runOpts{env: wrong, ctx: ctx}, "produce", "--topic", "t", "--generate", "1")
	t.Logf("plaintext to TLS: %s", r.stderr)
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, "is TLS missing?")
	assert.NotContains(t, r.stderr, "may have refused SASL", "the hint is for a refusal, not for plaintext to TLS")
	assert.NotContains(t, r.stderr, saslPassword)
	assert.EqualValues(t, 32, countSecure(t, env), "nothing was sent by the failed runs")
}

func TestProduceRefusesBadKafkaSecurity(t *testing.T) {
	t.Parallel()
	for env, want := range map[[2]string]string{
		{"KAFKA_SASL_MECHANISM", "GSSAPI"}:        `KAFKA_SASL_MECHANISM="GSSAPI": want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512`,
		{"KAFKA_SASL_PASSWORD", saslPassword}:     "set without KAFKA_SASL_MECHANISM",
		{"KAFKA_TLS_CA_FILE", "/nonexistent.pem"}: "kafka: TLS CA file: open /nonexistent.pem",
	} {
		r := runCLI(t, runOpts{env: map[string]string{env[0]: env[1]}}, "produce", "--topic", "t", "--generate", "1", "--brokers", "127.0.0.1:1")
		assert.Equal(t, ExitUsage, r.code, env)
		assert.Contains(t, r.stderr, want, env)
		assert.NotContains(t, r.stderr, saslPassword, env)
	}
}

// The Temporal client gets the TLS and API key of the environment, with
// the Temporal CLI's variable names; errors never show the key.
func TestTemporalSecurityFromEnvironment(t *testing.T) {
	t.Parallel()
	_, caFile := tlsFiles(t)
	var got client.Options
	refuse := func(_ context.Context, o client.Options) (client.Client, error) {
		got = o
		return nil, errors.New("test: not dialing")
	}
	env := map[string]string{"TEMPORAL_API_KEY": apiKey, "TEMPORAL_TLS_SERVER_CA_CERT_PATH": caFile, "TEMPORAL_TLS_SERVER_NAME": "temporal.example.com"}
	r := runCLI(t, runOpts{env: env, dial: refuse}, "list")
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, "cannot reach Temporal at localhost:7233")
	assert.NotContains(t, r.stderr, apiKey)
	require.NotNil(t, got.ConnectionOptions.TLS)
	assert.Equal(t, "temporal.example.com", got.ConnectionOptions.TLS.ServerName)
	assert.NotNil(t, got.ConnectionOptions.TLS.RootCAs)
	assert.NotNil(t, got.Credentials)

	got = client.Options{}
	r = runCLI(t, runOpts{dial: refuse}, "list")
	assert.Equal(t, ExitFailure, r.code)
	assert.Nil(t, got.ConnectionOptions.TLS, "plaintext unless configured")
	assert.Nil(t, got.Credentials)

	r = runCLI(t, runOpts{env: map[string]string{"TEMPORAL_TLS_CLIENT_CERT_PATH": caFile, "TEMPORAL_API_KEY": apiKey}, dial: refuse}, "list")
	assert.Equal(t, ExitUsage, r.code)
	assert.Contains(t, r.stderr, "TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH: set both")
	assert.NotContains(t, r.stderr, apiKey)
}
