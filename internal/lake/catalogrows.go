package lake

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// CatalogRows reads the JDBC catalog's rows of one catalog and nothing
// else: the statements below only SELECT, each one a single statement, so
// each sees the rows as the last committed transaction left them. It is
// what the REST catalog server (internal/restcatalog) serves from; a
// table's metadata location read here is the one the publish transaction
// committed, never one it has not, and never an older one.
type CatalogRows struct {
	pool    *pgxpool.Pool
	catalog string
}

// NewCatalogRows reads catalog's rows (catalog_name) through pool.
func NewCatalogRows(pool *pgxpool.Pool, catalog string) *CatalogRows {
	return &CatalogRows{pool: pool, catalog: catalog}
}

// NamespaceExists says whether namespace holds a table or has properties.
func (c *CatalogRows) NamespaceExists(ctx context.Context, namespace string) (bool, error) {
	var ok bool
	err := c.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM iceberg_tables WHERE catalog_name = $1 AND table_namespace = $2)
		OR EXISTS (SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = $1 AND namespace = $2)`,
		c.catalog, namespace).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("read namespace %s: %w", namespace, err)
	}
	return ok, nil
}

// NamespaceProperties returns the namespace's properties as stored.
func (c *CatalogRows) NamespaceProperties(ctx context.Context, namespace string) (map[string]string, error) {
	rows, err := c.pool.Query(ctx, `SELECT property_key, coalesce(property_value, '') FROM iceberg_namespace_properties
		WHERE catalog_name = $1 AND namespace = $2 ORDER BY property_key`, c.catalog, namespace)
	if err != nil {
		return nil, fmt.Errorf("read properties of namespace %s: %w", namespace, err)
	}
	props := map[string]string{}
	var k, v string
	_, err = pgx.ForEachRow(rows, []any{&k, &v}, func() error {
		props[k] = v
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read properties of namespace %s: %w", namespace, err)
	}
	return props, nil
}

// Tables lists the names of the namespace's tables after after (""
// from the first), in order, at most limit of them.
func (c *CatalogRows) Tables(ctx context.Context, namespace, after string, limit int) ([]string, error) {
	rows, err := c.pool.Query(ctx, `SELECT table_name FROM iceberg_tables
		WHERE catalog_name = $1 AND table_namespace = $2 AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL) AND table_name > $3
		ORDER BY table_name LIMIT $4`, c.catalog, namespace, after, limit)
	if err != nil {
		return nil, fmt.Errorf("list tables of namespace %s: %w", namespace, err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list tables of namespace %s: %w", namespace, err)
	}
	return names, nil
}

// ErrNoMetadataLocation: a table row without a metadata location (a JDBC
// catalog's table being created by another engine).
var ErrNoMetadataLocation = errors.New("table has no metadata location")

// MetadataLocation is the table's committed metadata location; "" when
// there is no such table.
func (c *CatalogRows) MetadataLocation(ctx context.Context, namespace, table string) (string, error) {
	var loc *string
	err := c.pool.QueryRow(ctx, `SELECT metadata_location FROM iceberg_tables
		WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3 AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)`,
		c.catalog, namespace, table).Scan(&loc)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read table %s.%s: %w", namespace, table, err)
	case loc == nil || *loc == "":
		return "", fmt.Errorf("table %s.%s: %w", namespace, table, ErrNoMetadataLocation)
	}
	return *loc, nil
}

// Ping checks that the catalog's database answers.
func (c *CatalogRows) Ping(ctx context.Context) error {
	if err := c.pool.Ping(ctx); err != nil {
		return fmt.Errorf("ping postgres: %w", err)
	}
	return nil
}
