package kafka

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"

	"handoff/internal/secure"
)

// The variables SecurityFromEnv reads.
const (
	EnvTLS                = "KAFKA_TLS"
	EnvTLSCAFile          = "KAFKA_TLS_CA_FILE"
	EnvTLSCertFile        = "KAFKA_TLS_CERT_FILE"
	EnvTLSKeyFile         = "KAFKA_TLS_KEY_FILE"
	EnvTLSServerName      = "KAFKA_TLS_SERVER_NAME"
	EnvTLSInsecure        = "KAFKA_TLS_INSECURE_SKIP_VERIFY"
	EnvSASLMechanism      = "KAFKA_SASL_MECHANISM"
	EnvSASLUsername       = "KAFKA_SASL_USERNAME"
	EnvSASLPassword       = "KAFKA_SASL_PASSWORD"
	SASLPlain             = "PLAIN"
	SASLScramSHA256       = "SCRAM-SHA-256"
	SASLScramSHA512       = "SCRAM-SHA-512"
	saslMechanismsAllowed = SASLPlain + ", " + SASLScramSHA256 + " or " + SASLScramSHA512
)

var tlsEnv = secure.TLSEnv{
	Enabled: EnvTLS, CAFile: EnvTLSCAFile, CertFile: EnvTLSCertFile, KeyFile: EnvTLSKeyFile,
	ServerName: EnvTLSServerName, InsecureSkipVerify: EnvTLSInsecure,
}

// SecurityEnvNames are the variables SecurityFromEnv reads.
var SecurityEnvNames = append(tlsEnv.Names(), EnvSASLMechanism, EnvSASLUsername, EnvSASLPassword)

// Security is how the client reaches the brokers: TLS (with a client
// certificate for mTLS) and SASL. The zero value is plaintext without
// authentication.
type Security struct {
	TLS  secure.TLS
	SASL SASL
}

// SASL authenticates the client: Mechanism is "" (none), PLAIN,
// SCRAM-SHA-256 or SCRAM-SHA-512.
type SASL struct {
	Mechanism, Username, Password string
}

// SecurityFromEnv reads the variables of SecurityEnvNames through getenv
// (os.Getenv, or a map's lookup in tests) and checks them.
func SecurityFromEnv(getenv func(string) string) (Security, error) {
	t, err := secure.TLSFromEnv(getenv, tlsEnv, false)
	s := Security{TLS: t, SASL: SASL{
		Mechanism: strings.ToUpper(strings.TrimSpace(getenv(EnvSASLMechanism))),
		Username:  getenv(EnvSASLUsername),
		Password:  getenv(EnvSASLPassword),
	}}
	if verr := s.SASL.validate(); verr != nil {
		err = errors.Join(err, verr)
	}
	if err != nil {
		return Security{}, fmt.Errorf("kafka: %w", err)
	}
	return s, nil
}

func (s SASL) validate() error {
	switch s.Mechanism {
	case "":
		if s.Username != "" || s.Password != "" {
			return fmt.Errorf("%s or %s set without %s: set it to %s", EnvSASLUsername, EnvSASLPassword, EnvSASLMechanism, saslMechanismsAllowed)
		}
		return nil
	case SASLPlain, SASLScramSHA256, SASLScramSHA512:
		if s.Username == "" || s.Password == "" {
			return fmt.Errorf("%s=%s needs %s and %s", EnvSASLMechanism, s.Mechanism, EnvSASLUsername, EnvSASLPassword)
		}
		return nil
	}
	return fmt.Errorf("%s=%q: want %s", EnvSASLMechanism, s.Mechanism, saslMechanismsAllowed)
}

// mechanism is kafka-go's SASL mechanism; nil without SASL.
func (s SASL) mechanism() (sasl.Mechanism, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	switch s.Mechanism {
	case SASLPlain:
		return plain.Mechanism{Username: s.Username, Password: s.Password}, nil
	case SASLScramSHA256, SASLScramSHA512:
		algo := scram.SHA256
		if s.Mechanism == SASLScramSHA512 {
			algo = scram.SHA512
		}
		m, err := scram.Mechanism(algo, s.Username, s.Password)
		if err != nil {
			// The error may quote the name, never the password.
			return nil, fmt.Errorf("SASL %s for user %q: %w", s.Mechanism, s.Username, err)
		}
		return m, nil
	}
	return nil, nil
}

// connection is what the transport and the dialer need.
func (s Security) connection() (*tls.Config, sasl.Mechanism, error) {
	tc, err := s.TLS.Config()
	if err != nil {
		return nil, nil, fmt.Errorf("kafka: %w", err)
	}
	m, err := s.SASL.mechanism()
	if err != nil {
		return nil, nil, fmt.Errorf("kafka: %w", err)
	}
	return tc, m, nil
}

// LogValue shows the security settings without the password.
func (s Security) LogValue() slog.Value {
	sl := slog.StringValue("off")
	if s.SASL.Mechanism != "" {
		sl = slog.GroupValue(slog.String("mechanism", s.SASL.Mechanism), slog.String("username", s.SASL.Username))
	}
	return slog.GroupValue(slog.Any("tls", s.TLS), slog.Any("sasl", sl))
}

// String shows what LogValue shows.
func (s Security) String() string { return secure.GroupString(s.LogValue()) }

// String keeps the password out of fmt's output.
func (s SASL) String() string {
	if s.Mechanism == "" {
		return "off"
	}
	return s.Mechanism + " as " + s.Username
}

// GoString keeps the password out of %#v.
func (s SASL) GoString() string { return "kafka.SASL{" + s.String() + "}" }
