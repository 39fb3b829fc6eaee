package secure

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
)

// TLS is a client's TLS: off, or on with the system's roots or a CA file,
// and a client certificate for mutual TLS. Only file names are held, so
// the struct logs and prints safely.
type TLS struct {
	Enabled bool
	// CAFile is a PEM bundle of the CAs that may sign the server's
	// certificate; empty: the system's roots.
	CAFile string
	// CertFile and KeyFile are the client's PEM certificate and key, for
	// servers that require mutual TLS; both or neither.
	CertFile, KeyFile string
	// ServerName is the name the server's certificate must carry; empty:
	// the host dialed.
	ServerName string
	// InsecureSkipVerify accepts any server certificate: for tests only.
	InsecureSkipVerify bool
}

// TLSEnv names the variables of one TLS setting.
type TLSEnv struct {
	Enabled, CAFile, CertFile, KeyFile, ServerName, InsecureSkipVerify string
}

// Names lists the variables.
func (e TLSEnv) Names() []string {
	return []string{e.Enabled, e.CAFile, e.CertFile, e.KeyFile, e.ServerName, e.InsecureSkipVerify}
}

// TLSFromEnv reads a TLS setting through getenv. TLS is on when the
// Enabled variable is true, or when it is unset and any other variable
// is set; an Enabled variable set to false with other variables set is
// an error, as is a certificate without its key.
func TLSFromEnv(getenv func(string) string, e TLSEnv, impliedOn bool) (TLS, error) {
	t := TLS{
		CAFile: strings.TrimSpace(getenv(e.CAFile)), CertFile: strings.TrimSpace(getenv(e.CertFile)),
		KeyFile: strings.TrimSpace(getenv(e.KeyFile)), ServerName: strings.TrimSpace(getenv(e.ServerName)),
	}
	var errs []error
	skip, err := envBool(getenv, e.InsecureSkipVerify)
	if err != nil {
		errs = append(errs, err)
	}
	t.InsecureSkipVerify = skip
	implied := impliedOn || t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" || t.ServerName != "" || t.InsecureSkipVerify
	t.Enabled = implied
	if v := strings.TrimSpace(getenv(e.Enabled)); v != "" {
		on, err := envBool(getenv, e.Enabled)
		switch {
		case err != nil:
			errs = append(errs, err)
		case !on && implied:
			errs = append(errs, fmt.Errorf("%s=%s, but TLS settings are given (%s): remove them or set %s=true", e.Enabled, v, givenNames(getenv, e), e.Enabled))
		}
		t.Enabled = on
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		errs = append(errs, fmt.Errorf("%s and %s: set both (client certificate and its key, for mutual TLS) or neither", e.CertFile, e.KeyFile))
	}
	return t, errors.Join(errs...)
}

func givenNames(getenv func(string) string, e TLSEnv) string {
	var given []string
	for _, n := range []string{e.CAFile, e.CertFile, e.KeyFile, e.ServerName, e.InsecureSkipVerify} {
		if getenv(n) != "" {
			given = append(given, n)
		}
	}
	return strings.Join(given, ", ")
}

// envBool reads a boolean variable; unset is false.
func envBool(getenv func(string) string, name string) (bool, error) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q: want true or false", name, v)
	}
	return b, nil
}

// Config loads the files and returns the client's tls.Config; nil when
// TLS is off. Errors name the file and what is wrong with it, never its
// contents.
func (t TLS) Config() (*tls.Config, error) {
	if !t.Enabled {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify} //nolint:gosec // off unless asked for
	if t.CAFile != "" {
		pool, err := certPool("TLS CA file", t.CAFile)
		if err != nil {
			return nil, err
		}
		c.RootCAs = pool
	}
	if t.CertFile != "" || t.KeyFile != "" {
		if t.CertFile == "" || t.KeyFile == "" {
			return nil, errors.New("TLS client certificate: set both the certificate and the key file, or neither")
		}
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("TLS client certificate %s with key %s: %w", t.CertFile, t.KeyFile, err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

// LogValue shows the setting: file names, never their contents.
func (t TLS) LogValue() slog.Value {
	if !t.Enabled {
		return slog.StringValue("off")
	}
	attrs := []slog.Attr{slog.Bool("enabled", true)}
	add := func(k, v string) {
		if v != "" {
			attrs = append(attrs, slog.String(k, v))
		}
	}
	ca := t.CAFile
	if ca == "" {
		ca = "system roots"
	}
	add("ca", ca)
	add("cert", t.CertFile)
	add("key", t.KeyFile)
	add("serverName", t.ServerName)
	if t.InsecureSkipVerify {
		attrs = append(attrs, slog.Bool("insecureSkipVerify", true))
	}
	return slog.GroupValue(attrs...)
}

// String shows what LogValue shows.
func (t TLS) String() string { return GroupString(t.LogValue()) }

// GroupString prints a slog value as {k:v ...}, resolving nested values:
// the String of types whose LogValue hides their secrets.
func GroupString(v slog.Value) string {
	v = v.Resolve()
	if v.Kind() != slog.KindGroup {
		return v.String()
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, a := range v.Group() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a.Key)
		b.WriteByte(':')
		b.WriteString(GroupString(a.Value))
	}
	b.WriteByte('}')
	return b.String()
}

// certPool reads a PEM bundle of CA certificates; what names the file in
// errors.
func certPool(what, file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s %s: no PEM certificate in it", what, file)
	}
	return pool, nil
}
