package cli

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"handoff/internal/lake"
	"handoff/internal/restcatalog"
	"handoff/internal/secure"
	"handoff/internal/storage"
)

// defaultCatalogListen is the port Iceberg REST catalogs usually take.
const defaultCatalogListen = ":8181"

// catalogFlags are catalog serve's settings.
type catalogFlags struct {
	lake             lakeFlags
	listen           string
	tokensFile       string
	tls              secure.ServerTLS
	clientS3Endpoint string
	cacheMiB         int64
	logFormat        string
}

func (a *app) catalogCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "catalog",
		Short: "Serve the datasources' Iceberg tables to other engines (Iceberg REST catalog)",
	}
	cmd.AddCommand(a.catalogServeCommand())
	return cmd
}

func (a *app) catalogServeCommand() *cobra.Command {
	var f catalogFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the Iceberg REST catalog protocol over the tables' catalog rows, read-only",
		Long: `serve answers the Iceberg REST catalog protocol (GET /v1/config, namespaces,
tables, loadTable) over the catalog rows the workers' publish transactions
commit, so DuckDB, Trino, Spark, pyiceberg or Snowflake attach by URL. A
load returns the committed snapshot: its metadata location is read from
Postgres in one statement, then its file from deep storage. Read-only:
every write is refused (403), the tables belong to their supervisors. Its
connections to Postgres are read-only transactions.

Every request but /healthz and /readyz needs a bearer token: the lines
NAME TOKEN [EXPIRES] of --tokens-file, and HANDOFF_CATALOG_TOKEN. TLS with
--tls-cert-file and --tls-key-file (mutual TLS with --tls-client-ca-file).
For S3 deep storage, loadTable tells clients the S3 endpoint
(--client-s3-endpoint, default HANDOFF_S3_ENDPOINT), path-style access and
AWS_REGION, and hands out the HANDOFF_CATALOG_VENDED_* credentials to
clients that ask for vended credentials, only when they are set. It runs
until interrupted (SIGINT, SIGTERM), letting loads in flight finish.`,
		Example: `  HANDOFF_CATALOG_TOKEN=$(openssl rand -hex 24) starter catalog serve --deep-storage .dev/deep
  starter catalog serve --listen :8181 --tokens-file /etc/handoff/catalog-tokens \
      --tls-cert-file /etc/handoff/tls.crt --tls-key-file /etc/handoff/tls.key
  curl -H "Authorization: Bearer $TOKEN" http://localhost:8181/v1/handoff/namespaces/handoff/tables`,
		Args: cobra.NoArgs,
		RunE: a.action(func(cmd *cobra.Command, _ []string) error { return a.serveCatalog(cmd, f) }),
	}
	fs := cmd.Flags()
	f.lake.add(fs)
	fs.StringVar(&f.listen, "listen", defaultCatalogListen, "address to listen on, host:port")
	bindEnv(fs, "listen", "HANDOFF_CATALOG_ADDR")
	fs.StringVar(&f.tokensFile, "tokens-file", "", "file of bearer tokens, a line each: NAME TOKEN [EXPIRES (RFC 3339)]")
	bindEnv(fs, "tokens-file", "HANDOFF_CATALOG_TOKENS_FILE")
	fs.StringVar(&f.tls.CertFile, "tls-cert-file", "", "PEM certificate to serve TLS with")
	bindEnv(fs, "tls-cert-file", "HANDOFF_CATALOG_TLS_CERT_FILE")
	fs.StringVar(&f.tls.KeyFile, "tls-key-file", "", "PEM key of --tls-cert-file")
	bindEnv(fs, "tls-key-file", "HANDOFF_CATALOG_TLS_KEY_FILE")
	fs.StringVar(&f.tls.ClientCAFile, "tls-client-ca-file", "", "PEM CAs whose client certificates are required (mutual TLS)")
	bindEnv(fs, "tls-client-ca-file", "HANDOFF_CATALOG_TLS_CLIENT_CA_FILE")
	fs.StringVar(&f.clientS3Endpoint, "client-s3-endpoint", "", "S3 endpoint clients reach deep storage at (default: HANDOFF_S3_ENDPOINT)")
	bindEnv(fs, "client-s3-endpoint", "HANDOFF_CATALOG_CLIENT_S3_ENDPOINT")
	fs.Int64Var(&f.cacheMiB, "metadata-cache-mib", restcatalog.DefaultMetadataCacheBytes>>20, "MiB of table metadata files kept in memory")
	fs.StringVar(&f.logFormat, "log-format", "text", "request log on stderr: text or json")
	bindEnv(fs, "log-format", "HANDOFF_LOG_FORMAT")
	return cmd
}

// serveCatalog checks the settings, opens Postgres (read-only) and deep
// storage, and serves until the command's context ends.
func (a *app) serveCatalog(cmd *cobra.Command, f catalogFlags) error {
	ctx := cmd.Context()
	cfg, err := a.catalogConfig(f)
	if err != nil {
		return err
	}
	tc, err := f.tls.Config()
	if err != nil {
		return usageErrorf("%v", err)
	}
	pool, err := a.openPool(ctx, f.lake.dbURL, readOnly)
	if err != nil {
		return err
	}
	defer pool.Close()
	deep, err := a.openDeep(ctx, f.lake.deep)
	if err != nil {
		return err
	}
	cfg.Storage.Properties = clientStorage(f.lake.deep, f.clientS3Endpoint, a.s3Config())
	srv, err := restcatalog.New(lake.NewCatalogRows(pool, cfg.Catalog), deep, cfg)
	if err != nil {
		return usageErrorf("%v", err)
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", f.listen, err)
	}
	cfg.Log.Info("serving the Iceberg REST catalog", "url", catalogURL(ln.Addr(), tc != nil), "catalog", cfg.Catalog,
		"namespace", cfg.Namespace, "warehouse", deep.URI(""), "tokens", len(cfg.Tokens), "tls", f.tls, "clientStorage", cfg.Storage)
	if tc == nil && !isLoopback(ln.Addr()) {
		cfg.Log.Warn("serving without TLS on a non-loopback address: bearer tokens cross the network in clear text; set --tls-cert-file and --tls-key-file")
	}
	err = srv.Serve(ctx, ln, tc)
	cfg.Log.Info("stopped serving the Iceberg REST catalog")
	return err
}

// readOnly makes every transaction of the pool's sessions read-only:
// belt and braces, the server's statements only read.
func readOnly(c *pgxpool.Config) { c.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on" }

// catalogConfig reads the tokens, the secrets and the logger's format.
func (a *app) catalogConfig(f catalogFlags) (restcatalog.Config, error) {
	var cfg restcatalog.Config
	switch f.logFormat {
	case "text":
		cfg.Log = slog.New(slog.NewTextHandler(a.io.Stderr, nil))
	case "json":
		cfg.Log = slog.New(slog.NewJSONHandler(a.io.Stderr, nil))
	default:
		return cfg, usageErrorf("--log-format %q: want text or json", f.logFormat)
	}
	if err := f.tls.Validate(); err != nil {
		return cfg, usageErrorf("%v", err)
	}
	if f.cacheMiB < 1 {
		return cfg, usageErrorf("--metadata-cache-mib %d: want 1 or more", f.cacheMiB)
	}
	cfg.MetadataCacheBytes = f.cacheMiB << 20
	envTokens, vended, err := restcatalog.SecretsFromEnv(a.io.Getenv)
	if err != nil {
		return cfg, usageErrorf("%v", err)
	}
	if f.tokensFile != "" {
		file, err := os.Open(f.tokensFile)
		if err != nil {
			return cfg, usageErrorf("--tokens-file: %v", err)
		}
		defer file.Close()
		if cfg.Tokens, err = restcatalog.ParseTokens(file, f.tokensFile); err != nil {
			return cfg, usageErrorf("%v", err)
		}
	}
	cfg.Tokens = append(cfg.Tokens, envTokens...)
	if len(cfg.Tokens) == 0 {
		return cfg, usageErrorf("no bearer token: give --tokens-file (HANDOFF_CATALOG_TOKENS_FILE) or set %s", restcatalog.EnvToken)
	}
	cfg.Catalog, cfg.Namespace = f.lake.catalog, f.lake.namespace
	cfg.Storage.Vended = vended
	return cfg, nil
}

// clientStorage is what clients are told about an s3:// deep storage:
// the endpoint (with path-style access, as MinIO and most non-AWS stores
// want) and the region. A local deep storage needs nothing.
func clientStorage(deep, endpoint string, s3 storage.S3Config) map[string]string {
	if !strings.HasPrefix(deep, "s3://") {
		return nil
	}
	props := map[string]string{}
	if endpoint == "" {
		endpoint = s3.Endpoint
	}
	if endpoint != "" {
		props["s3.endpoint"] = endpoint
		props["s3.path-style-access"] = "true"
	}
	if s3.Region != "" {
		props["client.region"] = s3.Region
	}
	return props
}

// catalogURL is the URL a client on this machine reaches addr at.
func catalogURL(addr net.Addr, tls bool) string {
	scheme := "http"
	if tls {
		scheme = "https"
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return scheme + "://" + addr.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}
