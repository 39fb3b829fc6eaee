package lake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5"

	"handoff/internal/domain"
	"handoff/internal/segment"
)

// ErrNotCreated: the datasource has segments published before it had a
// table, so a table made now would lack them. `starter table create`
// builds it from them (Create with fromSegments).
var ErrNotCreated = errors.New("the datasource has segments published without a table; run `starter table create` to build it from them")

// lockDataSource takes the datasource's transaction-scoped advisory lock,
// the one every publish of the datasource takes (pgstore.Publish): table
// writes, offset moves and maintenance of one datasource are serialized.
func lockDataSource(ctx context.Context, tx pgx.Tx, ds string) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('handoff.datasource:' || $1, 0))`, ds); err != nil {
		return fmt.Errorf("lock datasource %q: %w", ds, err)
	}
	return nil
}

// Ensure makes the datasource's table hold the columns of s: it creates
// the table (partitioned by gran) if there is none and the datasource has
// no segments yet, and adds the columns it lacks (new field ids; files
// written before read null there). It returns the field ids segments are
// to carry. A column whose type differs from the table's is a
// *SchemaError; a datasource with segments but no table is ErrNotCreated.
func (l *Lake) Ensure(ctx context.Context, ds string, s domain.Schema, gran domain.Granularity) (segment.FieldIDs, error) {
	var ids segment.FieldIDs
	err := pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		if err := lockDataSource(ctx, tx, ds); err != nil {
			return err
		}
		cat := &txCatalog{l: l, tx: tx, ds: ds}
		t, err := cat.load(ctx)
		if err != nil {
			return err
		}
		if t == nil {
			var n int64
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM segments WHERE datasource = $1 AND used`, ds).Scan(&n); err != nil {
				return fmt.Errorf("count segments of %q: %w", ds, err)
			}
			if n > 0 {
				return fmt.Errorf("table %s: %w (%d segments)", l.Identifier(ds), ErrNotCreated, n)
			}
			meta, err := l.create(ctx, tx, ds, s, gran)
			if err != nil {
				return err
			}
			ids = fieldIDs(meta.CurrentSchema())
			return nil
		}
		sc, err := l.evolve(ctx, t, s, gran)
		if err != nil {
			return err
		}
		ids = fieldIDs(sc)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// create writes a new table's first metadata and inserts its catalog row
// (and its namespace's, if missing) in tx.
func (l *Lake) create(ctx context.Context, tx pgx.Tx, ds string, s domain.Schema, gran domain.Granularity) (table.Metadata, error) {
	sc, err := newSchema(s)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", l.Identifier(ds), err)
	}
	spec := partitionSpec(gran, 1)
	props := l.tableProperties()
	mapping, err := json.Marshal(sc.NameMapping())
	if err != nil {
		return nil, err
	}
	props[table.DefaultNameMappingKey] = string(mapping)
	props["handoff.segment-granularity"] = string(gran)
	meta, err := table.NewMetadata(sc, &spec, table.UnsortedSortOrder, l.location(ds), props)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", l.Identifier(ds), err)
	}
	loc := nextMetadataLocation(l.location(ds), "")
	if err := l.writeMetadata(ctx, loc, meta); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, property_value)
		VALUES ($1, $2, 'exists', 'true') ON CONFLICT DO NOTHING`, l.cfg.Catalog, l.cfg.Namespace); err != nil {
		return nil, fmt.Errorf("create namespace %s: %w", l.cfg.Namespace, err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, iceberg_type)
		VALUES ($1, $2, $3, $4, 'TABLE')`, l.cfg.Catalog, l.cfg.Namespace, ds, loc); err != nil {
		return nil, fmt.Errorf("create table %s: %w", l.Identifier(ds), err)
	}
	return meta, nil
}

// evolve adds the columns of s that t lacks, in one schema change, keeps
// the default name mapping in step, and moves the partition spec to the
// one gran wants (files written before keep theirs: Iceberg plans each
// file by its own spec). It returns the schema segments are written
// against.
func (l *Lake) evolve(ctx context.Context, t *table.Table, s domain.Schema, gran domain.Granularity) (*iceberg.Schema, error) {
	ident := l.Identifier(t.Identifier()[len(t.Identifier())-1])
	missing, err := missingColumns(ident, t.Schema(), s)
	if err != nil {
		return nil, err
	}
	respec := !sameTransform(t.Spec(), partitionTransform(gran))
	if len(missing) == 0 && !respec {
		return t.Schema(), nil
	}
	txn := t.NewTransaction()
	if len(missing) > 0 {
		if err := addColumns(txn, s, missing); err != nil {
			return nil, fmt.Errorf("table %s: add columns: %w", ident, err)
		}
	}
	if respec {
		if err := repartition(txn, t.Spec(), gran); err != nil {
			return nil, fmt.Errorf("table %s: partition by segment granularity %s: %w", ident, gran, err)
		}
	}
	nt, err := txn.Commit(ctx)
	if err != nil {
		return nil, fmt.Errorf("table %s: evolve: %w", ident, err)
	}
	return nt.Schema(), nil
}

// addColumns adds the missing columns as optional and rewrites the
// default name mapping to the new schema.
func addColumns(txn *table.Transaction, s domain.Schema, missing []domain.Column) error {
	upd := txn.UpdateSchema(true, false)
	for _, c := range missing {
		typ, err := icebergType(c.Type)
		if err != nil {
			return err
		}
		upd = upd.AddColumn([]string{c.Name}, typ, columnDoc(s, c.Name), false, nil)
	}
	if err := upd.Commit(); err != nil {
		return err
	}
	staged, err := txn.StagedTable()
	if err != nil {
		return err
	}
	mapping, err := json.Marshal(staged.Schema().NameMapping())
	if err != nil {
		return err
	}
	return txn.SetProperties(iceberg.Properties{table.DefaultNameMappingKey: string(mapping)})
}

// sameTransform: spec partitions by exactly want on __time (nil: not at
// all).
func sameTransform(spec iceberg.PartitionSpec, want iceberg.Transform) bool {
	if want == nil {
		return spec.NumFields() == 0
	}
	return spec.NumFields() == 1 && spec.Field(0).Transform.Equals(want)
}

// repartition replaces the spec's fields with the transform gran wants.
func repartition(txn *table.Transaction, spec iceberg.PartitionSpec, gran domain.Granularity) error {
	upd := txn.UpdateSpec(true)
	for _, f := range spec.Fields() {
		upd = upd.RemoveField(f.Name)
	}
	if t := partitionTransform(gran); t != nil {
		upd = upd.AddField(segment.TimeColumn, t, segment.TimeColumn+"_"+t.String())
	}
	if err := upd.Commit(); err != nil {
		return err
	}
	return txn.SetProperties(iceberg.Properties{"handoff.segment-granularity": string(gran)})
}

// CheckSchema reports, as a *SchemaError, a column of s that the
// datasource's table holds with another type; nil when s fits (new columns
// are fine: a publish adds them) or there is no table.
func (l *Lake) CheckSchema(ctx context.Context, ds string, s domain.Schema) error {
	loc, err := l.pointer(ctx, l.pool, ds, false)
	if err != nil || loc == "" {
		return err
	}
	meta, err := l.metadata(ctx, loc)
	if err != nil {
		return err
	}
	_, err = missingColumns(l.Identifier(ds), meta.CurrentSchema(), s)
	return err
}
