package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"handoff/internal/lake"
	"handoff/internal/liveness"
	"handoff/internal/redact"
	"handoff/internal/secure"
	"handoff/internal/storage"
	"handoff/internal/workload"
)

// Config is everything the worker needs, from flags that fall back to
// environment variables. It is validated before any connection opens.
type Config struct {
	// DatabaseURL is the Postgres metadata store (DATABASE_URL). Required.
	DatabaseURL string
	// TemporalAddress is the Temporal frontend (TEMPORAL_ADDRESS). Default localhost:7233.
	TemporalAddress string
	// TemporalNamespace (TEMPORAL_NAMESPACE). Default "default".
	TemporalNamespace string
	// KafkaBrokers are the bootstrap brokers (KAFKA_BROKERS, comma-separated). Default localhost:9092.
	KafkaBrokers []string
	// DeepStorage is where published segments go (HANDOFF_DEEP_STORAGE):
	// a directory, a file:///abs/path URI, or s3://bucket/prefix on an
	// S3-compatible store reached as S3 says. Default ./data/deep.
	DeepStorage string
	// S3 reaches the object store of an s3:// DeepStorage: endpoint,
	// region and credentials from HANDOFF_S3_ENDPOINT, AWS_REGION,
	// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN
	// (storage.S3ConfigFromEnv). Logged without its secrets.
	S3 storage.S3Config
	// Tables names the Iceberg catalog and namespace that hold each
	// datasource's table, and the snapshot retention:
	// HANDOFF_ICEBERG_CATALOG (default handoff), HANDOFF_ICEBERG_NAMESPACE
	// (default handoff), HANDOFF_ICEBERG_SNAPSHOT_MAX_AGE (default 24h) and
	// HANDOFF_ICEBERG_MIN_SNAPSHOTS (default 100).
	Tables lake.Config
	// StagingDir is where open sequences' chunks go (HANDOFF_STAGING_DIR):
	// a directory, file:///abs/path or s3://bucket/prefix; every worker of
	// the task queue must reach the same one (a publish merges chunks
	// other workers wrote). Default ./data/staging.
	StagingDir string
	// ScratchDir is a local directory for a publish's temporary files and
	// chunks fetched from object storage (HANDOFF_SCRATCH_DIR); each
	// worker process takes its own directory under it and removes those
	// of dead ones (internal/scratch). Default: the system's temporary
	// directory.
	ScratchDir string
	// HTTPAddr serves /healthz, /readyz, /metrics and /status
	// (HANDOFF_HTTP_ADDR). Default 127.0.0.1:8081 (DefaultHTTPAddr): this
	// machine only, since /status names supervisors and shows errors; set
	// :8081 or 0.0.0.0:8081 to serve other hosts (in a container, say).
	HTTPAddr string
	// Pprof serves Go's profiles under /debug/pprof/ on HTTPAddr too
	// (HANDOFF_PPROF=true): CPU, heap, goroutines, for a worker that
	// costs more than it should. Default off.
	Pprof bool
	// LogLevel is debug, info, warn or error (HANDOFF_LOG_LEVEL). Default info.
	LogLevel string
	// LogFormat is text or json (HANDOFF_LOG_FORMAT). Default text.
	LogFormat string
	// MaxConsume is how many consume activities run at once; more wait,
	// listed on /status, for a slot (HANDOFF_MAX_CONSUME). Default 4.
	MaxConsume int
	// MaxPublish is how many publish activities run at once
	// (HANDOFF_MAX_PUBLISH). Default 2.
	MaxPublish int
	// MaxStreams is how many long-running activities (a task group's
	// stream, a supervisor's watch) this worker runs at once: each holds a
	// slot while it runs, so it bounds the supervisors and task groups one
	// worker serves (HANDOFF_MAX_STREAMS). Default 1000; size it as
	// supervisors × (taskCount + 1), with room for the groups a dead
	// worker's takeover brings.
	MaxStreams int
	// WorkflowCache is how many workflows this worker keeps in memory
	// between their workflow tasks (the Temporal SDK's sticky cache,
	// HANDOFF_WORKFLOW_CACHE). A workflow not kept replays its history at
	// its next task. 0 keeps the SDK's default (10,000): every supervisor
	// and group of a worker serving up to 5,000 supervisors of taskCount
	// 1. Smaller saves memory where most supervisors are idle
	// (OPERATIONS.md, "Many supervisors on one worker").
	WorkflowCache int
	// MemoryLimit is the heap size in bytes that consume push-back is
	// measured against (HANDOFF_MEMORY_LIMIT: bytes, or a whole number of
	// B, KiB, MiB, GiB or TiB as GOMEMLIMIT takes them). 0 takes GOMEMLIMIT
	// when it is set, else disables push-back. Default 0.
	MemoryLimit int64
	// PushBackFraction: new consume work waits while the heap is above this
	// fraction of MemoryLimit, in (0, 1] (HANDOFF_PUSHBACK_FRACTION).
	// Default 0.8.
	PushBackFraction float64
	// CompactShare: while ingestion makes progress on this worker, a
	// compaction works at most this share of its time, in (0, 1]
	// (HANDOFF_COMPACT_SHARE). Default 0.5; 1 never holds it back.
	CompactShare float64
	// Security holds Kafka's TLS and SASL and Temporal's TLS and API key,
	// from the environment (see Security). Logged without secrets.
	Security Security
	// ShutdownGrace is how long stopping waits for running activities to
	// finish before cancelling them: the Temporal worker's
	// WorkerStopTimeout (HANDOFF_SHUTDOWN_GRACE). Default 30s.
	ShutdownGrace time.Duration
	// LeaseTTL is how long this worker's lease in Postgres lives without a
	// renewal: a worker paused or cut off for longer is taken for dead and
	// its activities are retried on live workers (HANDOFF_LEASE_TTL).
	// Default 10s.
	LeaseTTL time.Duration
	// LeaseRenew is how often the lease is renewed and the other workers'
	// checked; a killed worker is found about three of these after it
	// died (HANDOFF_LEASE_RENEW). Default 1s.
	LeaseRenew time.Duration
}

// DefaultMaxStreams is room for the streams and watches of about 500
// supervisors of one task group each.
const DefaultMaxStreams = 1000

// DefaultHTTPAddr binds the worker's HTTP server to the loopback
// interface unless HANDOFF_HTTP_ADDR or --http-addr says otherwise.
const DefaultHTTPAddr = "127.0.0.1:8081"

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// ParseConfig reads flags (args without the program name), falling back to
// the environment and then to defaults.
func ParseConfig(args []string) (Config, error) {
	c := Config{MaxConsume: 4, MaxPublish: 2, MaxStreams: DefaultMaxStreams, PushBackFraction: 0.8, CompactShare: workload.DefaultCompactShare, ShutdownGrace: 30 * time.Second}
	var brokers, maxConsume, maxPublish, maxStreams, workflowCache, memoryLimit, fraction, compactShare, grace, snapAge, minSnaps, leaseTTL, leaseRenew string
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.StringVar(&c.DatabaseURL, "database-url", os.Getenv("DATABASE_URL"), "Postgres URL (env DATABASE_URL)")
	fs.StringVar(&c.TemporalAddress, "temporal-address", envOr("TEMPORAL_ADDRESS", "localhost:7233"), "Temporal frontend host:port (env TEMPORAL_ADDRESS)")
	fs.StringVar(&c.TemporalNamespace, "temporal-namespace", envOr("TEMPORAL_NAMESPACE", "default"), "Temporal namespace (env TEMPORAL_NAMESPACE)")
	fs.StringVar(&brokers, "kafka-brokers", envOr("KAFKA_BROKERS", "localhost:9092"), "comma-separated Kafka bootstrap brokers (env KAFKA_BROKERS)")
	fs.StringVar(&c.DeepStorage, "deep-storage", envOr("HANDOFF_DEEP_STORAGE", "./data/deep"), "published segments: a directory, file:///abs/path or s3://bucket/prefix (env HANDOFF_DEEP_STORAGE; S3 from HANDOFF_S3_ENDPOINT, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN)")
	fs.StringVar(&c.Tables.Catalog, "iceberg-catalog", envOr("HANDOFF_ICEBERG_CATALOG", lake.DefaultCatalog), "catalog_name of the Iceberg tables in Postgres (env HANDOFF_ICEBERG_CATALOG)")
	fs.StringVar(&c.Tables.Namespace, "iceberg-namespace", envOr("HANDOFF_ICEBERG_NAMESPACE", lake.DefaultNamespace), "namespace of the Iceberg tables, one per datasource (env HANDOFF_ICEBERG_NAMESPACE)")
	fs.StringVar(&snapAge, "iceberg-snapshot-max-age", envOr("HANDOFF_ICEBERG_SNAPSHOT_MAX_AGE", lake.DefaultMaxAge.String()), "table snapshots older than this expire (env HANDOFF_ICEBERG_SNAPSHOT_MAX_AGE)")
	fs.StringVar(&minSnaps, "iceberg-min-snapshots", envOr("HANDOFF_ICEBERG_MIN_SNAPSHOTS", strconv.Itoa(lake.DefaultMinSnapshots)), "the last this many table snapshots never expire (env HANDOFF_ICEBERG_MIN_SNAPSHOTS)")
	fs.StringVar(&c.StagingDir, "staging-dir", envOr("HANDOFF_STAGING_DIR", "./data/staging"), "staging chunks: a directory, file:///abs/path or s3://bucket/prefix, shared by every worker (env HANDOFF_STAGING_DIR)")
	fs.StringVar(&c.ScratchDir, "scratch-dir", envOr("HANDOFF_SCRATCH_DIR", filepath.Join(os.TempDir(), "handoff-scratch")), "local directory for temporary files (env HANDOFF_SCRATCH_DIR)")
	fs.StringVar(&c.HTTPAddr, "http-addr", envOr("HANDOFF_HTTP_ADDR", DefaultHTTPAddr), "address of the health, metrics and status server; :8081 serves every interface (env HANDOFF_HTTP_ADDR)")
	fs.BoolVar(&c.Pprof, "pprof", envOr("HANDOFF_PPROF", "") == "true", "serve Go's profiles under /debug/pprof/ on the HTTP address (env HANDOFF_PPROF=true)")
	fs.StringVar(&c.LogLevel, "log-level", envOr("HANDOFF_LOG_LEVEL", "info"), "debug, info, warn or error (env HANDOFF_LOG_LEVEL)")
	fs.StringVar(&c.LogFormat, "log-format", envOr("HANDOFF_LOG_FORMAT", "text"), "text or json (env HANDOFF_LOG_FORMAT)")
	fs.StringVar(&maxConsume, "max-consume", envOr("HANDOFF_MAX_CONSUME", "4"), "consume activities run at once (env HANDOFF_MAX_CONSUME)")
	fs.StringVar(&maxPublish, "max-publish", envOr("HANDOFF_MAX_PUBLISH", "2"), "publish activities run at once (env HANDOFF_MAX_PUBLISH)")
	fs.StringVar(&maxStreams, "max-streams", envOr("HANDOFF_MAX_STREAMS", strconv.Itoa(DefaultMaxStreams)), "long-running activities (streams, watches) run at once: supervisors × (taskCount + 1) this worker serves (env HANDOFF_MAX_STREAMS)")
	fs.StringVar(&workflowCache, "workflow-cache", envOr("HANDOFF_WORKFLOW_CACHE", "0"), "workflows kept in memory between their workflow tasks (the SDK's sticky cache); 0: the SDK's default, 10,000 (env HANDOFF_WORKFLOW_CACHE)")
	fs.StringVar(&memoryLimit, "memory-limit", envOr("HANDOFF_MEMORY_LIMIT", "0"), "heap limit for push-back, e.g. 2GiB; 0: GOMEMLIMIT if set, else none (env HANDOFF_MEMORY_LIMIT)")
	fs.StringVar(&fraction, "pushback-fraction", envOr("HANDOFF_PUSHBACK_FRACTION", "0.8"), "new consume work waits above this fraction of the memory limit (env HANDOFF_PUSHBACK_FRACTION)")
	fs.StringVar(&compactShare, "compact-share", envOr("HANDOFF_COMPACT_SHARE", strconv.FormatFloat(workload.DefaultCompactShare, 'g', -1, 64)), "while ingestion is busy, a compaction works at most this share of its time, in (0, 1]; 1: never held back (env HANDOFF_COMPACT_SHARE)")
	fs.StringVar(&grace, "shutdown-grace", envOr("HANDOFF_SHUTDOWN_GRACE", "30s"), "how long stopping waits for running activities (env HANDOFF_SHUTDOWN_GRACE)")
	fs.StringVar(&leaseTTL, "lease-ttl", envOr("HANDOFF_LEASE_TTL", liveness.DefaultTTL.String()), "a worker whose lease goes unrenewed this long is taken for dead and its activities retried elsewhere (env HANDOFF_LEASE_TTL)")
	fs.StringVar(&leaseRenew, "lease-renew", envOr("HANDOFF_LEASE_RENEW", liveness.DefaultRenew.String()), "how often the lease is renewed and the other workers' checked (env HANDOFF_LEASE_RENEW)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage of worker:\n")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), envOnlyUsage)
	}
	// Usage shows defaults, which come from the environment: never a password.
	fs.VisitAll(func(f *flag.Flag) { f.DefValue = redact.Userinfo(f.DefValue) })
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	c.S3 = storage.S3ConfigFromEnv(os.Getenv)
	var errs []error
	c.Security, errs = securityFromEnv()
	for _, b := range strings.Split(brokers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			c.KafkaBrokers = append(c.KafkaBrokers, b)
		}
	}
	parse := func(name, s string, set func(string) error) {
		if err := set(strings.TrimSpace(s)); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", name, s, err))
		}
	}
	parse("max consume", maxConsume, func(s string) (err error) { c.MaxConsume, err = parseInt(s); return err })
	parse("max publish", maxPublish, func(s string) (err error) { c.MaxPublish, err = parseInt(s); return err })
	parse("max streams", maxStreams, func(s string) (err error) { c.MaxStreams, err = parseInt(s); return err })
	parse("workflow cache", workflowCache, func(s string) (err error) { c.WorkflowCache, err = parseInt(s); return err })
	parse("memory limit", memoryLimit, func(s string) (err error) { c.MemoryLimit, err = parseBytes(s); return err })
	parse("push-back fraction", fraction, func(s string) (err error) {
		c.PushBackFraction, err = strconv.ParseFloat(s, 64)
		if err != nil {
			return errors.New("want a number in (0, 1]")
		}
		return nil
	})
	parse("compact share", compactShare, func(s string) (err error) {
		c.CompactShare, err = strconv.ParseFloat(s, 64)
		if err != nil {
			return errors.New("want a number in (0, 1]")
		}
		return nil
	})
	parse("shutdown grace", grace, func(s string) (err error) {
		c.ShutdownGrace, err = time.ParseDuration(s)
		if err != nil {
			return errors.New("want a duration such as 30s or 2m")
		}
		return nil
	})
	parse("lease TTL", leaseTTL, func(s string) (err error) { c.LeaseTTL, err = positiveDuration(s); return err })
	parse("lease renew", leaseRenew, func(s string) (err error) { c.LeaseRenew, err = positiveDuration(s); return err })
	parse("iceberg snapshot max age", snapAge, func(s string) (err error) {
		c.Tables.MaxSnapshotAge, err = time.ParseDuration(s)
		if err != nil || c.Tables.MaxSnapshotAge <= 0 {
			return errors.New("want a positive duration such as 24h")
		}
		return nil
	})
	parse("iceberg min snapshots", minSnaps, func(s string) (err error) {
		c.Tables.MinSnapshots, err = parseInt(s)
		if err == nil && c.Tables.MinSnapshots < 1 {
			err = errors.New("want 1 or more")
		}
		return err
	})
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	return c, c.Validate()
}

func positiveDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, errors.New("want a positive duration such as 10s")
	}
	return d, nil
}

func parseInt(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, errors.New("want a whole number")
	}
	return n, nil
}

// byteUnits are the suffixes parseBytes takes, as GOMEMLIMIT does.
var byteUnits = []struct {
	suffix string
	size   int64
}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40}, {"b", 1}}

// parseBytes reads a byte count: a whole number, optionally followed by B,
// KiB, MiB, GiB or TiB (in any case).
func parseBytes(s string) (int64, error) {
	num, size := s, int64(1)
	lower := strings.ToLower(s)
	for _, u := range byteUnits {
		if strings.HasSuffix(lower, u.suffix) {
			num, size = strings.TrimSpace(s[:len(s)-len(u.suffix)]), u.size
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, errors.New("want a whole number of bytes, or of KiB, MiB, GiB or TiB (e.g. 2GiB)")
	}
	if n > math.MaxInt64/size {
		return 0, errors.New("too large")
	}
	return n * size, nil
}

// Validate names every setting that is missing or malformed.
func (c Config) Validate() error {
	var errs []error
	if c.DatabaseURL == "" {
		errs = append(errs, errors.New("database URL is required: set DATABASE_URL or --database-url"))
	}
	if _, _, err := net.SplitHostPort(c.TemporalAddress); err != nil {
		errs = append(errs, fmt.Errorf("temporal address %q: want host:port", redact.Userinfo(c.TemporalAddress)))
	}
	if len(c.KafkaBrokers) == 0 {
		errs = append(errs, errors.New("no Kafka brokers: set KAFKA_BROKERS or --kafka-brokers"))
	}
	for _, b := range c.KafkaBrokers {
		if _, _, err := net.SplitHostPort(b); err != nil || strings.Contains(b, "@") {
			errs = append(errs, fmt.Errorf("kafka broker %q: want host:port", redact.Userinfo(b)))
		}
	}
	if c.DeepStorage == "" || c.StagingDir == "" {
		errs = append(errs, errors.New("deep storage and staging directories must be set"))
	}
	if err := checkStorage("deep storage", c.DeepStorage); err != nil {
		errs = append(errs, err)
	}
	if err := checkStorage("staging", c.StagingDir); err != nil {
		errs = append(errs, err)
	}
	if c.ScratchDir == "" || strings.Contains(c.ScratchDir, "://") {
		errs = append(errs, fmt.Errorf("scratch dir %q: want a local directory", redact.Userinfo(c.ScratchDir)))
	}
	if _, err := c.level(); err != nil {
		errs = append(errs, err)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("log format %q: want text or json", c.LogFormat))
	}
	if c.MaxConsume < 1 {
		errs = append(errs, fmt.Errorf("max consume %d: want at least 1", c.MaxConsume))
	}
	if c.MaxPublish < 1 {
		errs = append(errs, fmt.Errorf("max publish %d: want at least 1", c.MaxPublish))
	}
	if c.MaxStreams < 2 {
		errs = append(errs, fmt.Errorf("max streams %d: want at least 2 (a supervisor's watch and one group's stream)", c.MaxStreams))
	}
	if c.WorkflowCache < 0 {
		errs = append(errs, fmt.Errorf("workflow cache %d: want 0 (the SDK's default) or more workflows", c.WorkflowCache))
	}
	if c.MemoryLimit < 0 {
		errs = append(errs, fmt.Errorf("memory limit %d: want 0 or more bytes", c.MemoryLimit))
	}
	if !(c.PushBackFraction > 0 && c.PushBackFraction <= 1) {
		errs = append(errs, fmt.Errorf("push-back fraction %g: want a number in (0, 1]", c.PushBackFraction))
	}
	if !(c.CompactShare > 0 && c.CompactShare <= 1) {
		errs = append(errs, fmt.Errorf("compact share %g: want a number in (0, 1]", c.CompactShare))
	}
	if c.ShutdownGrace < 0 {
		errs = append(errs, fmt.Errorf("shutdown grace %s: want 0 or more", c.ShutdownGrace))
	}
	if c.LeaseTTL > 0 && c.LeaseRenew > 0 && c.LeaseTTL < 3*c.LeaseRenew {
		errs = append(errs, fmt.Errorf("lease TTL %s: want at least three renewals (lease renew %s), or a live worker is taken for dead", c.LeaseTTL, c.LeaseRenew))
	}
	return errors.Join(errs...)
}

func (c Config) level() (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return 0, fmt.Errorf("log level %q: want debug, info, warn or error", c.LogLevel)
	}
	return l, nil
}

// limits are the workload tracker's.
func (c Config) limits() workload.Limits {
	return workload.Limits{
		Consume: c.MaxConsume, Publish: c.MaxPublish,
		MemoryLimit: c.MemoryLimit, PushBackFraction: c.PushBackFraction, CompactShare: c.CompactShare,
	}
}

// LogValue logs the configuration with its passwords masked. The database
// URL is masked as an address too, so that a malformed one
// ("postgres//u:pw@h/db", "u:pw@h/db"), which is not recognizably a URL,
// still hides its password.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("databaseURL", redact.Userinfo(c.DatabaseURL)),
		slog.String("temporalAddress", c.TemporalAddress),
		slog.String("temporalNamespace", c.TemporalNamespace),
		slog.Any("kafkaBrokers", shownBrokers(c.KafkaBrokers)),
		slog.String("deepStorage", c.DeepStorage),
		slog.Any("s3", c.S3),
		slog.String("icebergCatalog", c.Tables.Catalog),
		slog.String("icebergNamespace", c.Tables.Namespace),
		slog.Duration("icebergSnapshotMaxAge", c.Tables.MaxSnapshotAge),
		slog.Int("icebergMinSnapshots", c.Tables.MinSnapshots),
		slog.String("stagingDir", c.StagingDir),
		slog.String("scratchDir", c.ScratchDir),
		slog.String("httpAddr", c.HTTPAddr),
		slog.Bool("pprof", c.Pprof),
		slog.String("logLevel", c.LogLevel),
		slog.String("logFormat", c.LogFormat),
		slog.Int("maxConsume", c.MaxConsume),
		slog.Int("maxPublish", c.MaxPublish),
		slog.Int("maxStreams", c.MaxStreams),
		slog.Int("workflowCache", c.WorkflowCache),
		slog.Int64("memoryLimit", c.MemoryLimit),
		slog.Float64("pushBackFraction", c.PushBackFraction),
		slog.Float64("compactShare", c.CompactShare),
		slog.Duration("shutdownGrace", c.ShutdownGrace),
		slog.Duration("leaseTTL", c.LeaseTTL), slog.Duration("leaseRenew", c.LeaseRenew),
		slog.Any("security", c.Security),
	)
}

// String shows the configuration as LogValue does, passwords masked, so
// that printing it with fmt (%v, %+v, %s) leaks nothing either.
func (c Config) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, a := range c.LogValue().Group() {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%s", a.Key, secure.GroupString(a.Value)) // resolved: S3Config and Security show their LogValue
	}
	b.WriteByte('}')
	return b.String()
}

// shownBrokers are the brokers with any credentials masked.
func shownBrokers(brokers []string) []string {
	shown := make([]string, len(brokers))
	for i, b := range brokers {
		shown[i] = redact.Userinfo(b)
	}
	return shown
}
