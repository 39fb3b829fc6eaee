package secure

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"go.temporal.io/sdk/client"
)

// The variables TemporalFromEnv reads: the Temporal CLI's own names, so
// one environment serves the CLI, the worker and the starter.
const (
	EnvTemporalTLS                    = "TEMPORAL_TLS"
	EnvTemporalTLSCA                  = "TEMPORAL_TLS_SERVER_CA_CERT_PATH"
	EnvTemporalTLSCert                = "TEMPORAL_TLS_CLIENT_CERT_PATH"
	EnvTemporalTLSKey                 = "TEMPORAL_TLS_CLIENT_KEY_PATH"
	EnvTemporalTLSServerName          = "TEMPORAL_TLS_SERVER_NAME"
	EnvTemporalTLSDisableVerification = "TEMPORAL_TLS_DISABLE_HOST_VERIFICATION"
	EnvTemporalAPIKey                 = "TEMPORAL_API_KEY"
)

var temporalTLSEnv = TLSEnv{
	Enabled: EnvTemporalTLS, CAFile: EnvTemporalTLSCA, CertFile: EnvTemporalTLSCert, KeyFile: EnvTemporalTLSKey,
	ServerName: EnvTemporalTLSServerName, InsecureSkipVerify: EnvTemporalTLSDisableVerification,
}

// TemporalEnvNames are the variables TemporalFromEnv reads.
var TemporalEnvNames = append(temporalTLSEnv.Names(), EnvTemporalAPIKey)

// Temporal is how a client authenticates to the Temporal frontend: TLS
// (with a client certificate for mTLS) and an API key.
type Temporal struct {
	TLS    TLS
	APIKey string
}

// TemporalFromEnv reads the variables of TemporalEnvNames through getenv.
// As with the Temporal CLI, TLS is on when TEMPORAL_TLS=true or when any
// TLS file, server name or an API key is set; TEMPORAL_TLS=false keeps it
// off for an API key (a plaintext frontend), but contradicts TLS files.
func TemporalFromEnv(getenv func(string) string) (Temporal, error) {
	key := strings.TrimSpace(getenv(EnvTemporalAPIKey))
	t, err := TLSFromEnv(getenv, temporalTLSEnv, false)
	if err != nil {
		return Temporal{}, fmt.Errorf("temporal: %w", err)
	}
	if key != "" && strings.TrimSpace(getenv(EnvTemporalTLS)) == "" {
		t.Enabled = true
	}
	return Temporal{TLS: t, APIKey: key}, nil
}

// Apply sets the connection's TLS and credentials on o.
func (t Temporal) Apply(o *client.Options) error {
	c, err := t.TLS.Config()
	if err != nil {
		return fmt.Errorf("temporal: %w", err)
	}
	o.ConnectionOptions.TLS = c
	if t.APIKey != "" {
		if strings.ContainsAny(t.APIKey, " \t\r\n") {
			return errors.New("temporal: " + EnvTemporalAPIKey + " contains white space")
		}
		o.Credentials = client.NewAPIKeyStaticCredentials(t.APIKey)
	}
	return nil
}

// LogValue shows the TLS setting and whether an API key is set, never
// the key.
func (t Temporal) LogValue() slog.Value {
	key := "none"
	if t.APIKey != "" {
		key = "set"
	}
	return slog.GroupValue(slog.Any("tls", t.TLS), slog.String("apiKey", key))
}

// String shows what LogValue shows.
func (t Temporal) String() string { return GroupString(t.LogValue()) }
