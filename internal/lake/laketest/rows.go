package laketest

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/jackc/pgx/v5/pgxpool"

	"handoff/internal/lake"
)

// ReadRows loads the table through iceberg-go's SQL catalog and returns
// every row of its current snapshot, column name to value: string,
// int64, float64, []byte, time.Time (UTC, for timestamps in whatever unit
// the scan gives) or nil for a null.
func ReadRows(ctx context.Context, pool *pgxpool.Pool, cfg lake.Config, ds string, props ...iceberg.Properties) ([]map[string]any, error) {
	t, err := Load(ctx, pool, cfg, ds, props...)
	if err != nil {
		return nil, err
	}
	if t.CurrentSnapshot() == nil {
		return nil, nil
	}
	_, records, err := t.Scan().ToArrowRecords(ctx)
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	var rows []map[string]any
	for rec, err := range records {
		if err != nil {
			return nil, fmt.Errorf("scan: %w", err)
		}
		for i := range int(rec.NumRows()) {
			row := make(map[string]any, rec.NumCols())
			for c, f := range rec.Schema().Fields() {
				v, err := value(rec.Column(c), i)
				if err != nil {
					rec.Release()
					return nil, fmt.Errorf("column %q: %w", f.Name, err)
				}
				row[f.Name] = v
			}
			rows = append(rows, row)
		}
		rec.Release()
	}
	return rows, nil
}

func value(col arrow.Array, i int) (any, error) {
	if col.IsNull(i) {
		return nil, nil
	}
	switch c := col.(type) {
	case *array.String:
		return c.Value(i), nil
	case *array.LargeString:
		return c.Value(i), nil
	case *array.Int64:
		return c.Value(i), nil
	case *array.Float64:
		return c.Value(i), nil
	case *array.Binary:
		return append([]byte(nil), c.Value(i)...), nil
	case *array.LargeBinary:
		return append([]byte(nil), c.Value(i)...), nil
	case *array.Timestamp:
		unit := c.DataType().(*arrow.TimestampType).Unit
		return c.Value(i).ToTime(unit).UTC(), nil
	}
	return nil, fmt.Errorf("type %s not handled", col.DataType())
}
