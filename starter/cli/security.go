package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"go.temporal.io/sdk/client"

	hkafka "handoff/internal/kafka"
	"handoff/internal/secure"
)

// kafkaSecurity are the options of produce's Kafka client for the TLS and
// SASL the environment asks for, read as the worker reads them
// (KAFKA_TLS*, KAFKA_SASL_*: see internal/kafka.SecurityFromEnv).
// The SASL setting it returns explains connection failures (saslHint).
func (a *app) kafkaSecurity() ([]kgo.Opt, hkafka.SASL, error) {
	sec, err := hkafka.SecurityFromEnv(a.io.Getenv)
	if err != nil {
		return nil, hkafka.SASL{}, usageErrorf("%v", err)
	}
	tc, err := sec.TLS.Config()
	if err != nil {
		return nil, hkafka.SASL{}, usageErrorf("kafka: %v", err)
	}
	var opts []kgo.Opt
	if tc != nil {
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	s := sec.SASL
	switch s.Mechanism {
	case hkafka.SASLPlain:
		opts = append(opts, kgo.SASL(plain.Auth{User: s.Username, Pass: s.Password}.AsMechanism()))
	case hkafka.SASLScramSHA256:
		opts = append(opts, kgo.SASL(scram.Auth{User: s.Username, Pass: s.Password}.AsSha256Mechanism()))
	case hkafka.SASLScramSHA512:
		opts = append(opts, kgo.SASL(scram.Auth{User: s.Username, Pass: s.Password}.AsSha512Mechanism()))
	}
	return opts, s, nil
}

// saslHint adds to a failure to reach Kafka that the credentials may be
// what is wrong: a broker may refuse them by closing the connection, which
// the client retries until its deadline.
// franz-go explains a connection closed at once (ErrFirstReadEOF) itself.
func saslHint(err error, s hkafka.SASL) error {
	var firstRead *kgo.ErrFirstReadEOF
	if err == nil || s.Mechanism == "" || errors.As(err, &firstRead) ||
		!(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
		return err
	}
	return fmt.Errorf("%w (the broker may have refused SASL %s as user %q: check %s, %s and %s)",
		err, s.Mechanism, s.Username, hkafka.EnvSASLMechanism, hkafka.EnvSASLUsername, hkafka.EnvSASLPassword)
}

// temporalSecurity sets the TLS and API key the environment asks for on
// the Temporal client's options, read as the worker and the Temporal CLI
// read them (TEMPORAL_TLS*, TEMPORAL_API_KEY: see internal/secure).
func (a *app) temporalSecurity(o *client.Options) error {
	t, err := secure.TemporalFromEnv(a.io.Getenv)
	if err != nil {
		return usageErrorf("%v", err)
	}
	if err := t.Apply(o); err != nil {
		return usageErrorf("%v", err)
	}
	return nil
}
