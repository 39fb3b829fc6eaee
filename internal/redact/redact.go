// Package redact hides the passwords that connection strings carry, so the
// worker can log and show errors, configuration and DSNs without leaking
// credentials: URL user-info (postgres://user:secret@host/db,
// sasl_ssl://user:secret@broker:9093) and key=value passwords
// (host=h password=secret, ?password=secret, PGPASSWORD=secret).
package redact

import (
	"strings"
)

// Mask replaces every hidden password, as net/url's URL.Redacted does.
const Mask = "xxxxx"

// URL returns s with the password of every URL and DSN inside it masked;
// the rest of s is left as it was. s may be a bare URL or DSN, or any text
// (an error message, a log line) with them inside.
func URL(s string) string {
	if !strings.Contains(s, "://") && !strings.Contains(s, "=") {
		return s
	}
	return keyValues(userinfos(s))
}

// Userinfo masks the password of a scheme-less address such as a Kafka
// broker given as user:secret@host:9092, and of any URL or DSN inside it.
func Userinfo(addr string) string {
	if !strings.Contains(addr, "://") {
		if at := strings.LastIndexByte(addr, '@'); at >= 0 {
			if colon := strings.IndexByte(addr[:at], ':'); colon >= 0 {
				addr = addr[:colon+1] + Mask + addr[at:]
			}
		}
	}
	return URL(addr)
}

// Error wraps err so that its message has its passwords masked. Unwrap
// returns err, so errors.Is and errors.As see through it (and whoever
// takes the wrapped error out is responsible for redacting it). Nil stays nil.
func Error(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*redacted); ok {
		return err
	}
	return &redacted{err: err}
}

type redacted struct{ err error }

func (r *redacted) Error() string { return URL(r.err.Error()) }
func (r *redacted) Unwrap() error { return r.err }
