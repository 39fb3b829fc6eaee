package kafka

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"

	kafkago "github.com/segmentio/kafka-go"
)

// auth is what the client says about its security in errors: never the
// password.
type auth struct {
	tls       bool
	mechanism string
	username  string
}

func authOf(s Security) auth {
	return auth{tls: s.TLS.Enabled, mechanism: s.SASL.Mechanism, username: s.SASL.Username}
}

// explain adds to a connection error what the client's security settings
// make of it. Brokers refuse wrong SASL credentials with an error
// (SASLAuthenticationFailed) or by closing the connection, and a TLS
// listener answers a plaintext client by closing it too: a bare "EOF"
// would leave the operator guessing. A hint is added once.
func (a auth) explain(err error) error {
	var done *explained
	if err == nil || errors.As(err, &done) {
		return err
	}
	hint := a.hint(err)
	if hint == "" {
		return err
	}
	return &explained{err: err, hint: hint}
}

// explained is an error with what the security settings make of it.
type explained struct {
	err  error
	hint string
}

func (e *explained) Error() string { return e.err.Error() + " (" + e.hint + ")" }
func (e *explained) Unwrap() error { return e.err }

func (a auth) hint(err error) string {
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var recordHeader tls.RecordHeaderError
	eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
	switch {
	case errors.Is(err, kafkago.SASLAuthenticationFailed):
		return fmt.Sprintf("SASL %s as user %q refused: check %s and %s", a.mechanism, a.username, EnvSASLUsername, EnvSASLPassword)
	case errors.As(err, &unknownCA):
		return fmt.Sprintf("the broker's certificate is not signed by a CA in %s, or the system's roots when it is unset", EnvTLSCAFile)
	case errors.As(err, &hostname):
		return fmt.Sprintf("the broker's certificate does not name the host dialed: set %s to a name it carries", EnvTLSServerName)
	case errors.As(err, &recordHeader):
		return fmt.Sprintf("TLS is on, and the broker does not speak TLS on this port: unset %s and the other %s variables, or use its TLS listener", EnvTLS, "KAFKA_TLS_*")
	case eof && a.mechanism != "":
		return fmt.Sprintf("the broker closed the connection: it may have refused SASL %s as user %q, so check %s, %s and %s%s",
			a.mechanism, a.username, EnvSASLMechanism, EnvSASLUsername, EnvSASLPassword, a.tlsHint())
	case eof:
		return fmt.Sprintf("the broker closed the connection%s", a.tlsHint())
	}
	return ""
}

func (a auth) tlsHint() string {
	if a.tls {
		return ""
	}
	return "; if its listener is TLS (SSL or SASL_SSL), set " + EnvTLS + "=true or " + EnvTLSCAFile
}
