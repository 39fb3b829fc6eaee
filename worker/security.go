package main

import (
	"fmt"
	"log/slog"
	"os"

	"go.temporal.io/sdk/client"

	"handoff/internal/kafka"
	"handoff/internal/secure"
)

// Security is how the worker authenticates to Kafka and Temporal, from
// the environment only (a password on the command line would show in ps):
//
//	KAFKA_TLS, KAFKA_TLS_CA_FILE, KAFKA_TLS_CERT_FILE, KAFKA_TLS_KEY_FILE,
//	KAFKA_TLS_SERVER_NAME, KAFKA_TLS_INSECURE_SKIP_VERIFY,
//	KAFKA_SASL_MECHANISM (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512),
//	KAFKA_SASL_USERNAME, KAFKA_SASL_PASSWORD            (kafka.SecurityFromEnv)
//	TEMPORAL_TLS, TEMPORAL_TLS_SERVER_CA_CERT_PATH,
//	TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH,
//	TEMPORAL_TLS_SERVER_NAME, TEMPORAL_TLS_DISABLE_HOST_VERIFICATION,
//	TEMPORAL_API_KEY                                    (secure.TemporalFromEnv)
//
// Postgres's TLS is DATABASE_URL's: sslmode, sslrootcert, sslcert, sslkey.
type Security struct {
	Kafka    kafka.Security
	Temporal secure.Temporal
}

// envOnlyUsage follows the flags in -h: the settings read from the
// environment only.
const envOnlyUsage = `
Environment only (kept off the command line, where ps would show them):
  HANDOFF_S3_ENDPOINT, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
  AWS_SESSION_TOKEN            S3 for an s3:// --deep-storage
  KAFKA_TLS, KAFKA_TLS_CA_FILE, KAFKA_TLS_CERT_FILE, KAFKA_TLS_KEY_FILE,
  KAFKA_TLS_SERVER_NAME, KAFKA_TLS_INSECURE_SKIP_VERIFY
                               Kafka TLS (mTLS with a certificate and key)
  KAFKA_SASL_MECHANISM (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512),
  KAFKA_SASL_USERNAME, KAFKA_SASL_PASSWORD
                               Kafka SASL
  TEMPORAL_TLS, TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_CLIENT_CERT_PATH,
  TEMPORAL_TLS_CLIENT_KEY_PATH, TEMPORAL_TLS_SERVER_NAME,
  TEMPORAL_TLS_DISABLE_HOST_VERIFICATION, TEMPORAL_API_KEY
                               Temporal TLS, mTLS and API key (the Temporal CLI's names)
  Postgres TLS: sslmode, sslrootcert, sslcert, sslkey in DATABASE_URL
`

// securityFromEnv reads both; errors name the variables.
func securityFromEnv() (Security, []error) {
	var s Security
	var errs []error
	var err error
	if s.Kafka, err = kafka.SecurityFromEnv(os.Getenv); err != nil {
		errs = append(errs, err)
	}
	if s.Temporal, err = secure.TemporalFromEnv(os.Getenv); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		errs = s.check()
	}
	return s, errs
}

// check reads the TLS files now, so that a missing or malformed one stops
// the worker before it starts, with an error naming the file.
func (s Security) check() []error {
	var errs []error
	if _, err := s.Kafka.TLS.Config(); err != nil {
		errs = append(errs, fmt.Errorf("kafka: %w", err))
	}
	if err := s.Temporal.Apply(&client.Options{}); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// warnInsecure logs, once at start, the settings that weaken a secured
// connection: a SASL PLAIN password sent without TLS, and certificate
// checks turned off.
func warnInsecure(cfg Config, log *slog.Logger) {
	k, t := cfg.Security.Kafka, cfg.Security.Temporal
	if k.SASL.Mechanism == kafka.SASLPlain && !k.TLS.Enabled {
		log.Warn("Kafka SASL PLAIN without TLS: the password crosses the network in clear; set KAFKA_TLS=true or KAFKA_TLS_CA_FILE")
	}
	if k.TLS.Enabled && k.TLS.InsecureSkipVerify {
		log.Warn("Kafka TLS does not verify the brokers' certificates (KAFKA_TLS_INSECURE_SKIP_VERIFY=true)")
	}
	if t.TLS.Enabled && t.TLS.InsecureSkipVerify {
		log.Warn("Temporal TLS does not verify the server's certificate (TEMPORAL_TLS_DISABLE_HOST_VERIFICATION=true)")
	}
	if t.APIKey != "" && !t.TLS.Enabled {
		log.Warn("Temporal API key without TLS: the key crosses the network in clear (TEMPORAL_TLS=false)")
	}
}

// LogValue shows file names, mechanisms and user names: no password, key
// or API key.
func (s Security) LogValue() slog.Value {
	return slog.GroupValue(slog.Any("kafka", s.Kafka), slog.Any("temporal", s.Temporal))
}

// String shows what LogValue shows.
func (s Security) String() string { return secure.GroupString(s.LogValue()) }

// temporalOptions are the Temporal client's connection options: address,
// namespace, TLS and credentials.
func (c Config) temporalOptions() (client.Options, error) {
	o := client.Options{HostPort: c.TemporalAddress, Namespace: c.TemporalNamespace}
	if err := c.Security.Temporal.Apply(&o); err != nil {
		return client.Options{}, err
	}
	return o, nil
}
