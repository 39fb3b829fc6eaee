package secure

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

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
)

const apiKey = "tmprl-ApiKey-s3cr3t-9753"

// certFiles writes a self-signed certificate and its key as PEM files.
func certFiles(t *testing.T) (certFile, keyFile string, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "worker"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, keyPEM, 0o600))
	return certFile, keyFile, keyPEM
}

func getenv(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

func TestTemporalFromEnvDefaultsToPlaintext(t *testing.T) {
	tc, err := TemporalFromEnv(getenv(nil))
	require.NoError(t, err)
	require.Equal(t, Temporal{}, tc)
	var o client.Options
	require.NoError(t, tc.Apply(&o))
	require.Nil(t, o.ConnectionOptions.TLS)
	require.Nil(t, o.Credentials)
	require.Equal(t, "{tls:off apiKey:none}", tc.String())
}

func TestTemporalMutualTLSFromEnv(t *testing.T) {
	certFile, keyFile, keyPEM := certFiles(t)
	tc, err := TemporalFromEnv(getenv(map[string]string{
		EnvTemporalTLSCA: certFile, EnvTemporalTLSCert: certFile, EnvTemporalTLSKey: keyFile,
		EnvTemporalTLSServerName: "temporal.example.com",
	}))
	require.NoError(t, err)
	require.True(t, tc.TLS.Enabled, "TLS files turn TLS on")
	var o client.Options
	require.NoError(t, tc.Apply(&o))
	c := o.ConnectionOptions.TLS
	require.NotNil(t, c)
	require.Equal(t, "temporal.example.com", c.ServerName)
	require.Len(t, c.Certificates, 1, "client certificate for mTLS")
	require.NotNil(t, c.RootCAs)
	require.False(t, c.InsecureSkipVerify)
	require.Nil(t, o.Credentials)

	shown := tc.String()
	require.Contains(t, shown, certFile)
	require.Contains(t, shown, "temporal.example.com")
	require.NotContains(t, shown, strings.TrimSpace(string(keyPEM[40:90])))
}

// As with the Temporal CLI, an API key alone means TLS with the system's
// roots (Temporal Cloud); TEMPORAL_TLS=false sends it in plaintext.
func TestTemporalAPIKeyFromEnv(t *testing.T) {
	tc, err := TemporalFromEnv(getenv(map[string]string{EnvTemporalAPIKey: apiKey}))
	require.NoError(t, err)
	var o client.Options
	require.NoError(t, tc.Apply(&o))
	require.NotNil(t, o.ConnectionOptions.TLS)
	require.Nil(t, o.ConnectionOptions.TLS.RootCAs, "the system's roots")
	require.NotNil(t, o.Credentials)

	tc, err = TemporalFromEnv(getenv(map[string]string{EnvTemporalAPIKey: apiKey, EnvTemporalTLS: "false"}))
	require.NoError(t, err)
	o = client.Options{}
	require.NoError(t, tc.Apply(&o))
	require.Nil(t, o.ConnectionOptions.TLS)
	require.NotNil(t, o.Credentials)

	for _, format := range []string{"%v", "%+v", "%s"} {
		out := fmt.Sprintf(format, tc)
		require.NotContains(t, out, apiKey, format)
		require.Contains(t, out, "apiKey:set", format)
	}
}

func TestTemporalFromEnvNamesWhatIsWrong(t *testing.T) {
	certFile, keyFile, keyPEM := certFiles(t)
	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"cert without key":   {map[string]string{EnvTemporalTLSCert: certFile}, "temporal: TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH: set both"},
		"tls off with files": {map[string]string{EnvTemporalTLS: "false", EnvTemporalTLSCA: certFile}, "TEMPORAL_TLS=false, but TLS settings are given (TEMPORAL_TLS_SERVER_CA_CERT_PATH)"},
		"not a bool":         {map[string]string{EnvTemporalTLSDisableVerification: "maybe"}, `TEMPORAL_TLS_DISABLE_HOST_VERIFICATION="maybe": want true or false`},
	} {
		_, err := TemporalFromEnv(getenv(tc.env))
		require.ErrorContains(t, err, tc.want, name)
	}

	// Files are read by Apply: errors name them, never show a key.
	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"missing CA":   {map[string]string{EnvTemporalTLSCA: filepath.Join(t.TempDir(), "none.pem")}, "temporal: TLS CA file: open"},
		"key as CA":    {map[string]string{EnvTemporalTLSCA: keyFile}, "TLS CA file " + keyFile + ": no PEM certificate"},
		"swapped":      {map[string]string{EnvTemporalTLSCert: keyFile, EnvTemporalTLSKey: certFile}, "TLS client certificate " + keyFile + " with key " + certFile},
		"key w/ space": {map[string]string{EnvTemporalAPIKey: "a b" + apiKey}, "TEMPORAL_API_KEY contains white space"},
	} {
		tc0, err := TemporalFromEnv(getenv(tc.env))
		require.NoError(t, err, name)
		err = tc0.Apply(&client.Options{})
		require.ErrorContains(t, err, tc.want, name)
		require.NotContains(t, err.Error(), strings.TrimSpace(string(keyPEM[40:90])), name)
		require.NotContains(t, err.Error(), apiKey, name)
	}
}

func TestTLSInsecureSkipVerifyIsOffByDefault(t *testing.T) {
	c, err := TLS{Enabled: true}.Config()
	require.NoError(t, err)
	require.False(t, c.InsecureSkipVerify)
	tc, err := TemporalFromEnv(getenv(map[string]string{EnvTemporalTLSDisableVerification: "true"}))
	require.NoError(t, err)
	c, err = tc.TLS.Config()
	require.NoError(t, err)
	require.True(t, c.InsecureSkipVerify, "only when asked for")
	require.Contains(t, tc.String(), "insecureSkipVerify:true")
	c, err = TLS{}.Config()
	require.NoError(t, err)
	require.Nil(t, c)
}
