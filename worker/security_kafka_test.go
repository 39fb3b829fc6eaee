package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"go.uber.org/fx/fxtest"
)

// brokerCert is a self-signed certificate for 127.0.0.1, as the broker's
// certificate and as the CA that the worker trusts.
func brokerCert(t *testing.T) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "broker"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, caFile
}

// The worker's Kafka module connects as the environment says: SCRAM over
// TLS against kfake, and a wrong password fails its readiness check with an
// error that says why and shows no password.
func TestWorkerKafkaOverSASLSSL(t *testing.T) {
	cert, caFile := brokerCert(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "wiki"),
		kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "handoff", saslPassword))
	require.NoError(t, err)
	t.Cleanup(c.Close)

	clearWorkerEnv(t)
	clearSecurityEnv(t)
	t.Setenv("DATABASE_URL", "postgres://handoff@127.0.0.1/handoff")
	t.Setenv("KAFKA_BROKERS", c.ListenAddrs()[0])
	t.Setenv("KAFKA_TLS_CA_FILE", caFile)
	t.Setenv("KAFKA_SASL_MECHANISM", "SCRAM-SHA-512")
	t.Setenv("KAFKA_SASL_USERNAME", "handoff")
	t.Setenv("KAFKA_SASL_PASSWORD", saslPassword)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	cfg, err := ParseConfig(nil)
	require.NoError(t, err)
	kc, err := newKafka(fxtest.NewLifecycle(t), cfg)
	require.NoError(t, err)
	require.NoError(t, kc.Ping(ctx))
	ps, err := kc.Partitions(ctx, "wiki")
	require.NoError(t, err)
	require.Equal(t, []int32{0, 1}, ps)

	t.Setenv("KAFKA_SASL_PASSWORD", "Wrong-"+saslPassword[:6])
	cfg, err = ParseConfig(nil)
	require.NoError(t, err)
	kc, err = newKafka(fxtest.NewLifecycle(t), cfg)
	require.NoError(t, err)
	err = kc.Ping(ctx)
	require.ErrorContains(t, err, `it may have refused SASL SCRAM-SHA-512 as user "handoff"`)
	require.False(t, strings.Contains(err.Error(), "Wrong-"), "error shows the password: %v", err)
}
