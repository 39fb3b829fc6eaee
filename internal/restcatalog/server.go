package restcatalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"handoff/internal/lake"
	"handoff/internal/storage"
)

// Defaults of Config.
const (
	DefaultMetadataCacheBytes = 256 << 20
	DefaultMaxMetadataBytes   = 256 << 20
	DefaultMaxReads           = 8
)

// Config says what the server serves and to whom.
type Config struct {
	// Catalog is the catalog_name of the rows served, and the prefix of
	// every route (/v1/config hands it to clients). Default "handoff".
	Catalog string
	// Namespace is the one namespace served: the one handoff writes its
	// tables to. A multi-level namespace is written with "." between its
	// parts, as the JDBC catalog stores it. Default "handoff".
	Namespace string
	// Tokens are the bearer tokens accepted; at least one.
	Tokens []Token
	// Storage is what loadTable tells clients about deep storage.
	Storage ClientStorage
	// MetadataCacheBytes bounds the metadata files kept in memory.
	// Default 256 MiB.
	MetadataCacheBytes int64
	// MaxMetadataBytes is the largest metadata file served. Default 256 MiB.
	MaxMetadataBytes int64
	// MaxReads bounds the metadata files read from deep storage at once.
	// Default 8.
	MaxReads int
	// Log gets one line per request (never a token) and the errors
	// behind every 5xx. Default: discard.
	Log *slog.Logger
	// Now is the clock token expiry is checked against. Default time.Now.
	Now func() time.Time
}

// catalogName is what a catalog name may be: it becomes a path segment.
var catalogName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func (c Config) withDefaults() Config {
	if c.Catalog == "" {
		c.Catalog = lake.DefaultCatalog
	}
	if c.Namespace == "" {
		c.Namespace = lake.DefaultNamespace
	}
	if c.MetadataCacheBytes <= 0 {
		c.MetadataCacheBytes = DefaultMetadataCacheBytes
	}
	if c.MaxMetadataBytes <= 0 {
		c.MaxMetadataBytes = DefaultMaxMetadataBytes
	}
	if c.MaxReads <= 0 {
		c.MaxReads = DefaultMaxReads
	}
	if c.Log == nil {
		c.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Server answers the Iceberg REST catalog protocol over one catalog's
// rows and deep storage. It is an http.Handler.
type Server struct {
	cfg       Config
	rows      *lake.CatalogRows
	files     *metadataFiles
	auth      *authenticator
	namespace []string // cfg.Namespace's parts
	warehouse string   // deep storage's URI, with its trailing "/"
}

// New returns the server of rows (the catalog cfg.Catalog) and deep, the
// storage the tables' files are in.
func New(rows *lake.CatalogRows, deep storage.Store, cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if !catalogName.MatchString(cfg.Catalog) {
		return nil, fmt.Errorf("catalog %q: want 1-128 ASCII letters, digits, '.', '_' or '-', starting with a letter or digit", cfg.Catalog)
	}
	ns, nsErr := parseNamespace(strings.ReplaceAll(cfg.Namespace, ".", namespaceSeparator))
	if nsErr != nil {
		return nil, fmt.Errorf("namespace %q: %s", cfg.Namespace, nsErr.Message)
	}
	if len(cfg.Tokens) == 0 {
		return nil, errors.New("no bearer tokens: the catalog serves no one without one")
	}
	auth, err := newAuthenticator(cfg.Tokens, cfg.Now)
	if err != nil {
		return nil, err
	}
	if err := cfg.Storage.validate(); err != nil {
		return nil, err
	}
	return &Server{
		cfg: cfg, rows: rows, auth: auth, namespace: ns,
		files:     newMetadataFiles(deep, cfg.MetadataCacheBytes, cfg.MaxMetadataBytes, cfg.MaxReads),
		warehouse: strings.TrimSuffix(deep.URI("x"), "x"),
	}, nil
}

// ServeHTTP answers one request: health checks without a token; the rest
// authenticated first, then routed, then read or refused.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &recorder{ResponseWriter: w, code: http.StatusOK}
	who := "-"
	defer func() {
		if p := recover(); p != nil {
			s.cfg.Log.Error("panic serving a request", "method", r.Method, "path", logPath(r), "panic", p, "stack", string(debug.Stack()))
			if !rec.wrote {
				internalError().write(rec, r)
			}
		}
		s.cfg.Log.Info("request", "method", r.Method, "path", logPath(r), "status", rec.code,
			"bytes", rec.bytes, "token", who, "ms", float64(time.Since(start).Microseconds())/1000)
	}()
	if err := s.serve(rec, r, &who); err != nil {
		err.write(rec, r)
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, who *string) *apiError {
	switch r.URL.Path {
	case "/healthz":
		return s.healthz(w, r)
	case "/readyz":
		return s.readyz(w, r)
	case "/v1/oauth/tokens":
		// The token endpoint takes client credentials, not a token.
		if r.Method != http.MethodPost {
			return methodNotAllowed(r.Method, "/v1/oauth/tokens", http.MethodPost)
		}
		return s.oauthTokens(w, r, request{})
	}
	name, err := s.auth.check(r.Header.Get("Authorization"))
	if err != nil {
		return err
	}
	*who = name
	req, err := parsePath(r.URL.EscapedPath())
	if err != nil {
		return err
	}
	o, ok := methods[req.route][r.Method]
	if !ok {
		return methodNotAllowed(r.Method, r.URL.Path, allowed(req.route))
	}
	if req.route != routeConfig && req.route != routeOAuthTokens && req.prefix != s.cfg.Catalog {
		return notFound("NoSuchWarehouseException", "no catalog %s here: this server serves catalog %q (GET /v1/config gives the prefix)", quote(req.prefix), s.cfg.Catalog)
	}
	if o.write != "" {
		return s.refuse(o.write, req)
	}
	return o.read(s, w, r, req)
}

// healthz: the process answers.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) *apiError {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return methodNotAllowed(r.Method, r.URL.Path, "GET, HEAD")
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// readyz: the catalog database answers too.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) *apiError {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return methodNotAllowed(r.Method, r.URL.Path, "GET, HEAD")
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.rows.Ping(ctx); err != nil {
		s.cfg.Log.Warn("not ready", "err", err)
		return unavailable()
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	return nil
}

// failed logs err and returns the answer for it: 503 when the database
// is out of reach (or the client gave up), else 500.
func (s *Server) failed(r *http.Request, what string, err error) *apiError {
	s.cfg.Log.Error(what, "method", r.Method, "path", logPath(r), "err", err)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || isConnError(err) {
		return unavailable()
	}
	return internalError()
}

// logPath is the request's path as it came, cut to 200 bytes: it may be
// anything a client sent.
func logPath(r *http.Request) string {
	p := r.URL.EscapedPath()
	if len(p) > 200 {
		p = p[:200] + "..."
	}
	return p
}

// recorder remembers what the handler answered, for the request's log.
type recorder struct {
	http.ResponseWriter
	code  int
	bytes int64
	wrote bool
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.code, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// isConnError says whether err is the database being out of reach rather
// than a query failing.
func isConnError(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.Timeout(err)
}
