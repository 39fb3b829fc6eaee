package lake

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"handoff/internal/storage"
)

// Defaults of Config.
const (
	DefaultCatalog      = "handoff"
	DefaultNamespace    = "handoff"
	DefaultMaxAge       = 24 * time.Hour
	DefaultMinSnapshots = 100
)

// Config says where the tables live and how long their history is kept.
type Config struct {
	// Catalog is the catalog_name of every row (the name a JDBC or SQL
	// catalog is opened with). Default "handoff".
	Catalog string
	// Namespace holds the tables; each is named after its datasource.
	// Default "handoff".
	Namespace string
	// MaxSnapshotAge and MinSnapshots: snapshots older than MaxSnapshotAge
	// expire, but the last MinSnapshots always stay. Default 1 day and 100.
	MaxSnapshotAge time.Duration
	MinSnapshots   int
}

func (c Config) withDefaults() Config {
	if c.Catalog == "" {
		c.Catalog = DefaultCatalog
	}
	if c.Namespace == "" {
		c.Namespace = DefaultNamespace
	}
	if c.MaxSnapshotAge <= 0 {
		c.MaxSnapshotAge = DefaultMaxAge
	}
	if c.MinSnapshots <= 0 {
		c.MinSnapshots = DefaultMinSnapshots
	}
	return c
}

// Lake is the datasources' tables: catalog rows in Postgres, files in deep
// storage (the warehouse).
type Lake struct {
	pool *pgxpool.Pool
	deep storage.Store
	cfg  Config

	mu      sync.Mutex
	cache   map[string]cachedMetadata // by the table's metadata directory
	commits map[string]int            // by datasource, since its last maintenance
}

// New returns the tables kept in pool's database and deep.
func New(pool *pgxpool.Pool, deep storage.Store, cfg Config) *Lake {
	return &Lake{pool: pool, deep: deep, cfg: cfg.withDefaults(), cache: map[string]cachedMetadata{}}
}

// Config returns the configuration with defaults filled in.
func (l *Lake) Config() Config { return l.cfg }

// Deep is the deep storage the tables (and segments) live in.
func (l *Lake) Deep() storage.Store { return l.deep }

// Warehouse is the URI tables live under.
func (l *Lake) Warehouse() string { return baseURI(l.deep) }

// Identifier names a datasource's table: namespace.datasource.
func (l *Lake) Identifier(ds string) string { return l.cfg.Namespace + "." + ds }

func (l *Lake) ident(ds string) table.Identifier { return table.Identifier{l.cfg.Namespace, ds} }

// location is the table's location: the datasource's directory in deep
// storage, where its segments already are; metadata goes to metadata/.
func (l *Lake) location(ds string) string { return l.deep.URI(ds) }

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// pointer reads the table's metadata location ("" and no error when the
// table does not exist). forUpdate locks the row for the transaction.
func (l *Lake) pointer(ctx context.Context, q querier, ds string, forUpdate bool) (string, error) {
	var loc *string
	var err error
	if forUpdate {
		err = q.QueryRow(ctx, `SELECT metadata_location FROM iceberg_tables
			WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3 AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)
			FOR UPDATE`, l.cfg.Catalog, l.cfg.Namespace, ds).Scan(&loc)
	} else {
		err = q.QueryRow(ctx, `SELECT metadata_location FROM iceberg_tables
			WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3 AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)`,
			l.cfg.Catalog, l.cfg.Namespace, ds).Scan(&loc)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read table %s: %w", l.Identifier(ds), err)
	}
	if loc == nil {
		return "", fmt.Errorf("table %s has no metadata location", l.Identifier(ds))
	}
	return *loc, nil
}

// metadata reads (or recalls) the metadata file at loc.
func (l *Lake) metadata(ctx context.Context, loc string) (table.Metadata, error) {
	l.mu.Lock()
	c, ok := l.cache[path.Dir(loc)]
	l.mu.Unlock()
	if ok && c.loc == loc {
		return c.meta, nil
	}
	b, err := newStoreIO(ctx, l.deep).ReadFile(loc)
	if err != nil {
		return nil, fmt.Errorf("read table metadata %s: %w", loc, err)
	}
	m, err := table.ParseMetadataBytes(b)
	if err != nil {
		return nil, fmt.Errorf("parse table metadata %s: %w", loc, err)
	}
	l.remember(loc, m)
	return m, nil
}

// cachedMetadata is the metadata file at loc, parsed (files never change).
type cachedMetadata struct {
	loc  string
	meta table.Metadata
}

// remember caches m as its table's metadata, in place of any other: a
// worker needs only the current metadata of the datasources it publishes,
// and each version holds every snapshot the table keeps (a day of
// publications by default), so keeping older versions would cost memory
// that grows with the square of the snapshots.
func (l *Lake) remember(loc string, m table.Metadata) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cache[path.Dir(loc)] = cachedMetadata{loc: loc, meta: m}
}

// tableProperties are set on every table this package creates.
func (l *Lake) tableProperties() iceberg.Properties {
	return iceberg.Properties{
		table.PropertyFormatVersion: "2",
		// Appends every few seconds would pile up one manifest each.
		table.ManifestMergeEnabledKey:  "true",
		table.ManifestMinMergeCountKey: "50",
		// Metadata JSON files beyond the log are swept by maintenance.
		table.MetadataPreviousVersionsMaxKey: "20",
		table.MinSnapshotsToKeepKey:          strconv.Itoa(l.cfg.MinSnapshots),
		table.MaxSnapshotAgeMsKey:            strconv.FormatInt(l.cfg.MaxSnapshotAge.Milliseconds(), 10),
		// A conflict inside the publish transaction means another writer
		// moved the table: fail the publish (it retries), never loop.
		table.CommitNumRetriesKey: "0",
		"handoff.managed-by":      "handoff",
	}
}
