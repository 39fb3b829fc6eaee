package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
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
	// DeepStorage is the directory published segments go to (HANDOFF_DEEP_STORAGE). Default ./data/deep.
	DeepStorage string
	// StagingDir is the directory of open sequences' chunks (HANDOFF_STAGING_DIR). Default ./data/staging.
	StagingDir string
	// HTTPAddr serves /healthz, /readyz and /metrics (HANDOFF_HTTP_ADDR). Default :8081.
	HTTPAddr string
	// LogLevel is debug, info, warn or error (HANDOFF_LOG_LEVEL). Default info.
	LogLevel string
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// ParseConfig reads flags (args without the program name), falling back to
// the environment and then to defaults.
func ParseConfig(args []string) (Config, error) {
	var c Config
	var brokers string
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.StringVar(&c.DatabaseURL, "database-url", os.Getenv("DATABASE_URL"), "Postgres URL (env DATABASE_URL)")
	fs.StringVar(&c.TemporalAddress, "temporal-address", envOr("TEMPORAL_ADDRESS", "localhost:7233"), "Temporal frontend host:port (env TEMPORAL_ADDRESS)")
	fs.StringVar(&c.TemporalNamespace, "temporal-namespace", envOr("TEMPORAL_NAMESPACE", "default"), "Temporal namespace (env TEMPORAL_NAMESPACE)")
	fs.StringVar(&brokers, "kafka-brokers", envOr("KAFKA_BROKERS", "localhost:9092"), "comma-separated Kafka bootstrap brokers (env KAFKA_BROKERS)")
	fs.StringVar(&c.DeepStorage, "deep-storage", envOr("HANDOFF_DEEP_STORAGE", "./data/deep"), "directory for published segments (env HANDOFF_DEEP_STORAGE)")
	fs.StringVar(&c.StagingDir, "staging-dir", envOr("HANDOFF_STAGING_DIR", "./data/staging"), "directory for staging chunks (env HANDOFF_STAGING_DIR)")
	fs.StringVar(&c.HTTPAddr, "http-addr", envOr("HANDOFF_HTTP_ADDR", ":8081"), "address of the health and metrics server (env HANDOFF_HTTP_ADDR)")
	fs.StringVar(&c.LogLevel, "log-level", envOr("HANDOFF_LOG_LEVEL", "info"), "debug, info, warn or error (env HANDOFF_LOG_LEVEL)")
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	for _, b := range strings.Split(brokers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			c.KafkaBrokers = append(c.KafkaBrokers, b)
		}
	}
	return c, c.Validate()
}

// Validate names the first setting that is missing or malformed.
func (c Config) Validate() error {
	var errs []error
	if c.DatabaseURL == "" {
		errs = append(errs, errors.New("database URL is required: set DATABASE_URL or --database-url"))
	}
	if _, _, err := net.SplitHostPort(c.TemporalAddress); err != nil {
		errs = append(errs, fmt.Errorf("temporal address %q: want host:port", c.TemporalAddress))
	}
	if len(c.KafkaBrokers) == 0 {
		errs = append(errs, errors.New("no Kafka brokers: set KAFKA_BROKERS or --kafka-brokers"))
	}
	for _, b := range c.KafkaBrokers {
		if _, _, err := net.SplitHostPort(b); err != nil {
			errs = append(errs, fmt.Errorf("kafka broker %q: want host:port", b))
		}
	}
	if c.DeepStorage == "" || c.StagingDir == "" {
		errs = append(errs, errors.New("deep storage and staging directories must be set"))
	}
	if _, err := c.level(); err != nil {
		errs = append(errs, err)
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
