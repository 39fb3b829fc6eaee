package registry

import (
	"fmt"
	"net/http"
	"time"

	"handoff/internal/secure"
)

// tlsFromEnv is the transport of registry requests: the default one's
// settings, with the TLS the SCHEMA_REGISTRY_TLS* variables describe.
func tlsFromEnv(getenv func(string) string) (*http.Transport, error) {
	t, err := secure.TLSFromEnv(getenv, tlsEnv, false)
	if err != nil {
		return nil, fmt.Errorf("schema registry TLS: %w", err)
	}
	tc, err := t.Config()
	if err != nil {
		return nil, fmt.Errorf("schema registry TLS: %w", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tc
	tr.ResponseHeaderTimeout = requestTimeout
	tr.IdleConnTimeout = time.Minute
	return tr, nil
}
