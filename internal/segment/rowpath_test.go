package segment

import (
	"io"

	"github.com/parquet-go/parquet-go"

	"handoff/internal/domain"
)

// writeRowPath writes rows as Writer did before it wrote column-wise: rows
// of parquet.Values through parquet.Writer.WriteRows, batchRows at a time,
// row groups cut at maxRows rows or maxBytes raw bytes. It is the reference
// the column path must match.
func writeRowPath(out io.Writer, schema domain.Schema, ids FieldIDs, rows []domain.Row, maxRows, maxBytes int64) error {
	meta, err := encodeSchema(schema)
	if err != nil {
		return err
	}
	pw := parquet.NewWriter(out, newParquetSchema(schema, ids),
		parquet.Compression(codec),
		parquet.DictionaryMaxBytes(maxDictBytes),
		parquet.KeyValueMetadata(SchemaKey, meta),
	)
	nd, nm := len(schema.Dims), len(schema.Metrics)
	width := nd + nm + 1
	values := make([]parquet.Value, batchRows*width)
	batch := make([]parquet.Row, 0, batchRows)
	flush := func() error {
		_, err := pw.WriteRows(batch)
		batch = batch[:0]
		return err
	}
	var groupRows, groupBytes int64
	for _, r := range rows {
		if groupRows > 0 && (groupRows >= maxRows || groupBytes >= maxBytes) {
			if err := flush(); err != nil {
				return err
			}
			if err := pw.Flush(); err != nil {
				return err
			}
			groupRows, groupBytes = 0, 0
		}
		i := len(batch)
		row := values[i*width : (i+1)*width : (i+1)*width]
		row[0] = parquet.Int64Value(r.Time * 1000)
		row[0].SetColumnIndex(0)
		size := int64(8)
		for d, c := range schema.Dims {
			size += rowPathValue(&row[1+d], r.Dim(d), c.Type, 1+d)
		}
		for m, spec := range schema.Metrics {
			size += rowPathValue(&row[1+nd+m], r.Metrics[m], spec.ColumnType(), 1+nd+m)
		}
		batch = append(batch, row)
		groupRows++
		groupBytes += size
		if len(batch) == batchRows {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return pw.Close()
}

// rowPathValue encodes v as column col's cell and returns its raw size.
func rowPathValue(dst *parquet.Value, v domain.Value, t domain.ColumnType, col int) int64 {
	if v.Null {
		*dst = parquet.NullValue()
		dst.SetColumnIndex(col)
		return 1
	}
	var size int64 = 8
	switch t {
	case domain.TypeLong:
		*dst = parquet.Int64Value(v.Long())
	case domain.TypeDouble:
		*dst = parquet.DoubleValue(v.Double())
	default:
		*dst = parquet.ByteArrayValue(stringBytes(v.S))
		size = int64(len(v.S)) + 4
	}
	dst.SetDefinitionLevel(1)
	dst.SetColumnIndex(col)
	return size
}
