package kafka_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"handoff/internal/kafka"
	"handoff/internal/secure"
)

const saslPassword = "Sasl-s3cr3t-1357"

// secureBroker starts a one-broker kfake cluster with topic t (3
// partitions) and the given TLS and SASL options.
func secureBroker(t *testing.T, opts ...kfake.Opt) []string {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(3, topic)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

func newSecureClient(t *testing.T, brokers []string, sec kafka.Security) *kafka.Client {
	t.Helper()
	c, err := kafka.New(brokers, kafka.WithSecurity(sec))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// requireWorks produces three messages and reads them back through
// Partitions, Bounds and Fetch.
func requireWorks(t *testing.T, c *kafka.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	msgs := []kafka.Message{{Value: []byte("a")}, {Value: []byte("b")}, {Value: []byte("c")}}
	require.NoError(t, c.Produce(ctx, topic, msgs))
	ps, err := c.Partitions(ctx, topic)
	require.NoError(t, err)
	require.Equal(t, []int32{0, 1, 2}, ps)
	earliest, latest, err := c.Bounds(ctx, topic, ps, kafka.ReadUncommitted)
	require.NoError(t, err)
	var got []string
	for _, p := range ps {
		require.Zero(t, earliest[p])
		for off := int64(0); off < latest[p]; {
			res, err := c.Fetch(ctx, kafka.FetchRequest{Topic: topic, Partition: p, Offset: off, MaxBytes: 1 << 20, MaxWait: 100 * time.Millisecond})
			require.NoError(t, err)
			for _, r := range res.Records {
				got = append(got, string(r.Value))
			}
			off = res.Next
		}
	}
	require.ElementsMatch(t, []string{"a", "b", "c"}, got)
}

// requireFails checks that Partitions and Fetch fail, quickly, with an
// error that says want and shows no secret.
func requireFails(t *testing.T, c *kafka.Client, want ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	_, err := c.Partitions(ctx, topic)
	require.Error(t, err)
	_, ferr := c.Fetch(ctx, kafka.FetchRequest{Topic: topic, Partition: 0, Offset: 0, MaxBytes: 1 << 20, MaxWait: 100 * time.Millisecond})
	require.Error(t, ferr)
	for _, e := range []error{err, ferr} {
		t.Logf("error: %v", e)
		require.NotContains(t, e.Error(), saslPassword)
		for _, w := range want {
			require.Contains(t, strings.ToLower(e.Error()), strings.ToLower(w))
		}
		require.NotErrorIs(t, e, context.DeadlineExceeded, "a refused connection must fail at once, not time out")
	}
}

func TestTLS(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "kafka")
	brokers := secureBroker(t, kfake.TLS(ca.serverTLS(nil)))
	requireWorks(t, newSecureClient(t, brokers, kafka.Security{TLS: secure.TLS{Enabled: true, CAFile: ca.CAFile}}))

	other := newTestCA(t, "other")
	requireFails(t, newSecureClient(t, brokers, kafka.Security{TLS: secure.TLS{Enabled: true, CAFile: other.CAFile}}),
		"certificate signed by unknown authority", "not signed by a CA in KAFKA_TLS_CA_FILE")
	requireFails(t, newSecureClient(t, brokers, kafka.Security{TLS: secure.TLS{Enabled: true, CAFile: ca.CAFile, ServerName: "kafka.example.com"}}),
		"kafka.example.com", "set KAFKA_TLS_SERVER_NAME")
}

func TestMutualTLS(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "kafka")
	clients := newTestCA(t, "clients")
	brokers := secureBroker(t, kfake.TLS(ca.serverTLS(clients)))
	_, certFile, keyFile := clients.issue("handoff", x509.ExtKeyUsageClientAuth)
	requireWorks(t, newSecureClient(t, brokers, kafka.Security{TLS: secure.TLS{Enabled: true, CAFile: ca.CAFile, CertFile: certFile, KeyFile: keyFile}}))

	// Without a client certificate the broker hangs up during the handshake.
	c := newSecureClient(t, brokers, kafka.Security{TLS: secure.TLS{Enabled: true, CAFile: ca.CAFile}})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	_, err := c.Partitions(ctx, topic)
	require.Error(t, err)
	require.NotErrorIs(t, err, context.DeadlineExceeded)
}

func TestSASL(t *testing.T) {
	t.Parallel()
	for _, mech := range []string{kafka.SASLPlain, kafka.SASLScramSHA256, kafka.SASLScramSHA512} {
		t.Run(mech, func(t *testing.T) {
			t.Parallel()
			brokers := secureBroker(t, kfake.EnableSASL(), kfake.Superuser(mech, "handoff", saslPassword))
			requireWorks(t, newSecureClient(t, brokers, kafka.Security{SASL: kafka.SASL{Mechanism: mech, Username: "handoff", Password: saslPassword}}))
			requireFails(t, newSecureClient(t, brokers, kafka.Security{SASL: kafka.SASL{Mechanism: mech, Username: "handoff", Password: "wrong-" + saslPassword[:4]}}),
				"may have refused SASL "+mech+` as user "handoff"`, "KAFKA_SASL_PASSWORD")
		})
	}
}

// SASL_SSL: SCRAM over TLS, from the environment as the worker reads it.
func TestSASLOverTLSFromEnv(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "kafka")
	brokers := secureBroker(t, kfake.TLS(ca.serverTLS(nil)), kfake.EnableSASL(), kfake.Superuser(kafka.SASLScramSHA512, "handoff", saslPassword))
	env := map[string]string{
		kafka.EnvTLSCAFile: ca.CAFile, kafka.EnvSASLMechanism: "scram-sha-512",
		kafka.EnvSASLUsername: "handoff", kafka.EnvSASLPassword: saslPassword,
	}
	sec, err := kafka.SecurityFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.True(t, sec.TLS.Enabled)
	requireWorks(t, newSecureClient(t, brokers, sec))

	// Plaintext to a TLS listener fails too.
	env = map[string]string{kafka.EnvSASLMechanism: "SCRAM-SHA-512", kafka.EnvSASLUsername: "handoff", kafka.EnvSASLPassword: saslPassword}
	sec, err = kafka.SecurityFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	c := newSecureClient(t, brokers, sec)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	_, err = c.Partitions(ctx, topic)
	require.ErrorContains(t, err, "if its listener is TLS (SSL or SASL_SSL), set KAFKA_TLS=true")
	require.NotContains(t, err.Error(), saslPassword)
}

func TestSecurityFromEnv(t *testing.T) {
	t.Parallel()
	get := func(env map[string]string) func(string) string { return func(k string) string { return env[k] } }

	sec, err := kafka.SecurityFromEnv(get(nil))
	require.NoError(t, err)
	require.Equal(t, kafka.Security{}, sec, "nothing set: plaintext, no SASL")

	sec, err = kafka.SecurityFromEnv(get(map[string]string{kafka.EnvTLS: "true"}))
	require.NoError(t, err)
	require.Equal(t, secure.TLS{Enabled: true}, sec.TLS, "KAFKA_TLS=true: the system's roots")

	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"unknown mechanism":    {map[string]string{kafka.EnvSASLMechanism: "GSSAPI", kafka.EnvSASLUsername: "u", kafka.EnvSASLPassword: saslPassword}, `KAFKA_SASL_MECHANISM="GSSAPI": want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512`},
		"no password":          {map[string]string{kafka.EnvSASLMechanism: "PLAIN", kafka.EnvSASLUsername: "u"}, "KAFKA_SASL_MECHANISM=PLAIN needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD"},
		"password, no mech":    {map[string]string{kafka.EnvSASLPassword: saslPassword}, "set without KAFKA_SASL_MECHANISM"},
		"cert without key":     {map[string]string{kafka.EnvTLSCertFile: "c.pem"}, "KAFKA_TLS_CERT_FILE and KAFKA_TLS_KEY_FILE: set both"},
		"tls off, files given": {map[string]string{kafka.EnvTLS: "false", kafka.EnvTLSCAFile: "ca.pem"}, "KAFKA_TLS=false, but TLS settings are given (KAFKA_TLS_CA_FILE)"},
		"not a bool":           {map[string]string{kafka.EnvTLSInsecure: "yes please"}, `KAFKA_TLS_INSECURE_SKIP_VERIFY="yes please": want true or false`},
	} {
		_, err := kafka.SecurityFromEnv(get(tc.env))
		require.ErrorContains(t, err, tc.want, name)
		require.NotContains(t, err.Error(), saslPassword, name)
	}
}

// New reads the TLS files: a missing or malformed one fails there, named,
// and a key file's contents never appear in the error.
func TestNewNamesBadTLSFiles(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "kafka")
	_, certFile, keyFile := ca.issue("client", x509.ExtKeyUsageClientAuth)
	keyPEM, err := os.ReadFile(keyFile)
	require.NoError(t, err)
	b := []string{"127.0.0.1:9092"}
	for name, tc := range map[string]struct {
		tls  secure.TLS
		want string
	}{
		"missing CA":    {secure.TLS{Enabled: true, CAFile: ca.dir + "/nope.pem"}, "TLS CA file: open " + ca.dir + "/nope.pem"},
		"key as CA":     {secure.TLS{Enabled: true, CAFile: keyFile}, "TLS CA file " + keyFile + ": no PEM certificate in it"},
		"key as cert":   {secure.TLS{Enabled: true, CertFile: keyFile, KeyFile: keyFile}, "TLS client certificate " + keyFile + " with key " + keyFile},
		"cert as key":   {secure.TLS{Enabled: true, CertFile: certFile, KeyFile: certFile}, "TLS client certificate " + certFile + " with key " + certFile},
		"cert, no key":  {secure.TLS{Enabled: true, CertFile: certFile}, "set both the certificate and the key file"},
		"bad mechanism": {secure.TLS{}, ""},
	} {
		if tc.want == "" {
			_, err := kafka.New(b, kafka.WithSecurity(kafka.Security{SASL: kafka.SASL{Mechanism: "NTLM", Username: "u", Password: saslPassword}}))
			require.ErrorContains(t, err, `KAFKA_SASL_MECHANISM="NTLM"`, name)
			require.NotContains(t, err.Error(), saslPassword)
			continue
		}
		_, err := kafka.New(b, kafka.WithSecurity(kafka.Security{TLS: tc.tls}))
		require.ErrorContains(t, err, tc.want, name)
		require.ErrorContains(t, err, "kafka: ", name)
		require.NotContains(t, err.Error(), strings.TrimSpace(string(keyPEM[30:80])), name)
	}
}

func TestSecurityNeverShowsPassword(t *testing.T) {
	t.Parallel()
	sec := kafka.Security{
		TLS:  secure.TLS{Enabled: true, CAFile: "/etc/kafka/ca.pem", CertFile: "/etc/kafka/c.pem", KeyFile: "/etc/kafka/k.pem"},
		SASL: kafka.SASL{Mechanism: kafka.SASLScramSHA256, Username: "handoff", Password: saslPassword},
	}
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(format, sec)
		require.NotContains(t, out, saslPassword, format)
		require.Contains(t, out, "SCRAM-SHA-256", format)
	}
	out := fmt.Sprintf("%+v", struct{ S kafka.Security }{sec})
	require.NotContains(t, out, saslPassword)
	require.Contains(t, sec.String(), "/etc/kafka/ca.pem")
	require.Contains(t, sec.String(), "handoff")
}
