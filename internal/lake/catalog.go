package lake

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// txCatalog is the catalog iceberg-go commits a table through, bound to one
// Postgres transaction: CommitTable checks the requirements against the
// table as the transaction sees it, writes the new metadata file and swaps
// metadata_location by compare-and-swap in that transaction. Nothing is
// visible to anyone before the caller commits the transaction; if it rolls
// back, the metadata file is an orphan for maintenance to sweep.
type txCatalog struct {
	l  *Lake
	tx pgx.Tx
	ds string

	committed string // the metadata location this transaction swapped in
	meta      table.Metadata
}

var _ table.CatalogIO = (*txCatalog)(nil)

func (l *Lake) fsys() table.FSysF {
	return func(ctx context.Context) (iceio.IO, error) { return newStoreIO(ctx, l.deep), nil }
}

// load returns the table as tx sees it, its row locked until tx ends, or
// nil when there is none.
func (c *txCatalog) load(ctx context.Context) (*table.Table, error) {
	loc, err := c.l.pointer(ctx, c.tx, c.ds, true)
	if err != nil || loc == "" {
		return nil, err
	}
	meta, err := c.l.metadata(ctx, loc)
	if err != nil {
		return nil, err
	}
	return table.New(c.l.ident(c.ds), meta, loc, c.l.fsys(), c), nil
}

func (c *txCatalog) LoadTable(ctx context.Context, _ table.Identifier) (*table.Table, error) {
	t, err := c.load(ctx)
	if err == nil && t == nil {
		err = fmt.Errorf("table %s does not exist", c.l.Identifier(c.ds))
	}
	return t, err
}

func (c *txCatalog) CommitTable(ctx context.Context, _ table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	cur, err := c.load(ctx)
	if err != nil {
		return nil, "", err
	}
	if cur == nil {
		return nil, "", fmt.Errorf("%w: table %s does not exist", table.ErrCommitFailed, c.l.Identifier(c.ds))
	}
	for _, r := range reqs {
		if err := r.Validate(cur.Metadata()); err != nil {
			return nil, "", fmt.Errorf("%w: %w", table.ErrCommitFailed, err)
		}
	}
	loc := nextMetadataLocation(cur.Metadata().Location(), cur.MetadataLocation())
	// The base's own location goes into the new metadata's log.
	meta, err := table.UpdateTableMetadata(cur.Metadata(), updates, cur.MetadataLocation())
	if err != nil {
		return nil, "", err
	}
	if err := c.l.writeMetadata(ctx, loc, meta); err != nil {
		return nil, "", err
	}
	tag, err := c.tx.Exec(ctx, `UPDATE iceberg_tables SET metadata_location = $1, previous_metadata_location = $2, iceberg_type = 'TABLE'
		WHERE catalog_name = $3 AND table_namespace = $4 AND table_name = $5 AND metadata_location = $2`,
		loc, cur.MetadataLocation(), c.l.cfg.Catalog, c.l.cfg.Namespace, c.ds)
	if err != nil {
		return nil, "", fmt.Errorf("swap metadata location of %s: %w", c.l.Identifier(c.ds), err)
	}
	if tag.RowsAffected() != 1 {
		return nil, "", fmt.Errorf("%w: table %s moved from %s", table.ErrCommitFailed, c.l.Identifier(c.ds), cur.MetadataLocation())
	}
	c.committed, c.meta = loc, meta
	return meta, loc, nil
}

// writeMetadata puts a metadata file; it is cached, since it becomes the
// current one when the transaction commits. The cache holds the file parsed
// back rather than meta: metadata built by iceberg-go's builder (v0.7.0)
// keeps a reference to the metadata it was built from, so each cached
// version held every version before it and a worker's heap grew with the
// square of the table's snapshots (measured: 164 MiB live after 400
// publications, under 6 MiB with the parsed file).
func (l *Lake) writeMetadata(ctx context.Context, loc string, meta table.Metadata) error {
	b, err := json.Marshal(meta)
	if err != nil {
		return fmt.Errorf("encode table metadata: %w", err)
	}
	if err := newStoreIO(ctx, l.deep).WriteFile(loc, b); err != nil {
		return fmt.Errorf("write table metadata %s: %w", loc, err)
	}
	parsed, err := table.ParseMetadataBytes(b)
	if err != nil {
		return fmt.Errorf("parse table metadata %s: %w", loc, err)
	}
	l.remember(loc, parsed)
	return nil
}

// nextMetadataLocation names the metadata file after prev as Iceberg's own
// catalogs do: <table>/metadata/<version>-<uuid>.metadata.json.
func nextMetadataLocation(tableLoc, prev string) string {
	version := 0
	if prev != "" {
		base := path.Base(prev)
		if i := strings.IndexByte(base, '-'); i > 0 {
			if v, err := strconv.Atoi(base[:i]); err == nil {
				version = v + 1
			}
		}
	}
	return fmt.Sprintf("%s/metadata/%05d-%s.metadata.json", strings.TrimSuffix(tableLoc, "/"), version, uuid.New())
}
