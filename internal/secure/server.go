package secure

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
)

// ServerTLS is a server's TLS: its certificate and key, and the CAs that
// sign the client certificates it requires, for mutual TLS. Only file
// names are held, so the struct logs and prints safely.
type ServerTLS struct {
	// CertFile and KeyFile are the server's PEM certificate (chain) and
	// key; both or neither (neither: plain TCP).
	CertFile, KeyFile string
	// ClientCAFile is a PEM bundle of the CAs whose client certificates
	// the server requires; empty: no client certificate asked for.
	ClientCAFile string
}

// Enabled says whether the server speaks TLS.
func (t ServerTLS) Enabled() bool { return t.CertFile != "" || t.KeyFile != "" }

// Validate checks that the setting is whole, before any file is read.
func (t ServerTLS) Validate() error {
	switch {
	case (t.CertFile == "") != (t.KeyFile == ""):
		return errors.New("TLS: give both the certificate and its key file, or neither")
	case t.ClientCAFile != "" && !t.Enabled():
		return errors.New("TLS: a client CA (mutual TLS) needs the server's certificate and key too")
	}
	return nil
}

// Config loads the files and returns the server's tls.Config (TLS 1.2 or
// later); nil when TLS is off. Errors name the file and what is wrong
// with it, never its contents.
func (t ServerTLS) Config() (*tls.Config, error) {
	if err := t.Validate(); err != nil || !t.Enabled() {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate %s with key %s: %w", t.CertFile, t.KeyFile, err)
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	if t.ClientCAFile != "" {
		pool, err := certPool("TLS client CA file", t.ClientCAFile)
		if err != nil {
			return nil, err
		}
		c.ClientCAs, c.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return c, nil
}

// LogValue shows the setting: file names, never their contents.
func (t ServerTLS) LogValue() slog.Value {
	if !t.Enabled() {
		return slog.StringValue("off")
	}
	attrs := []slog.Attr{slog.String("cert", t.CertFile), slog.String("key", t.KeyFile)}
	if t.ClientCAFile != "" {
		attrs = append(attrs, slog.String("clientCA", t.ClientCAFile))
	}
	return slog.GroupValue(attrs...)
}

// String shows what LogValue shows.
func (t ServerTLS) String() string { return GroupString(t.LogValue()) }
