// Package segment writes, reads and merges the Parquet files that hold rows,
// both the staging chunks a consumer flushes and the segments it publishes:
// a "__time" timestamp column, then one typed column per dimension, then one
// per metric. Each file carries its domain.Schema in its key/value metadata,
// so a reader recovers the metric specs, not only the column types.
package segment

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"handoff/internal/domain"
)

// TimeColumn is the name of the first column: the row time, stored as
// TIMESTAMP(isAdjustedToUTC=true, MICROS), the physical type Iceberg reads
// as timestamptz. Rows keep Unix milliseconds; files written before
// microseconds (MILLIS) still read.
const TimeColumn = "__time"

// FieldIDs gives Parquet field ids by column name (TimeColumn included):
// the ids of the Iceberg table the file belongs to. A column without one
// gets none.
type FieldIDs map[string]int

// SchemaKey is the key/value metadata entry holding the file's schema as
// JSON (see fileSchema).
const SchemaKey = "handoff.schema"

// fileSchema is the JSON form of a domain.Schema in a file's metadata.
// Version changes when the file layout does.
type fileSchema struct {
	Version    int                 `json:"version"`
	Dimensions []fileColumn        `json:"dimensions,omitempty"`
	Metrics    []domain.MetricSpec `json:"metrics,omitempty"`
}

type fileColumn struct {
	Name string            `json:"name"`
	Type domain.ColumnType `json:"type"`
}

const fileSchemaVersion = 1

func encodeSchema(s domain.Schema) (string, error) {
	fs := fileSchema{Version: fileSchemaVersion, Metrics: s.Metrics}
	for _, d := range s.Dims {
		fs.Dimensions = append(fs.Dimensions, fileColumn(d))
	}
	b, err := json.Marshal(fs)
	return string(b), err
}

func decodeSchema(js string) (domain.Schema, error) {
	var fs fileSchema
	if err := json.Unmarshal([]byte(js), &fs); err != nil {
		return domain.Schema{}, fmt.Errorf("metadata %s: %w", SchemaKey, err)
	}
	if fs.Version != fileSchemaVersion {
		return domain.Schema{}, fmt.Errorf("metadata %s: version %d, want %d", SchemaKey, fs.Version, fileSchemaVersion)
	}
	s := domain.Schema{Metrics: fs.Metrics}
	for _, d := range fs.Dimensions {
		s.Dims = append(s.Dims, domain.Column(d))
	}
	return s, checkSchema(s)
}

// checkSchema rejects names a file cannot hold and types it cannot store.
func checkSchema(s domain.Schema) error {
	seen := make(map[string]bool, len(s.Dims)+len(s.Metrics))
	for i, c := range s.Columns() {
		switch {
		case c.Name == "":
			return fmt.Errorf("column %d has an empty name", i)
		case c.Name == TimeColumn:
			return fmt.Errorf("column name %q is reserved", c.Name)
		case strings.ContainsRune(c.Name, ','):
			// parquet-go derives Go struct tags from field names.
			return fmt.Errorf("column name %q contains a comma", c.Name)
		case seen[c.Name]:
			return fmt.Errorf("column %q appears twice", c.Name)
		}
		seen[c.Name] = true
	}
	for _, d := range s.Dims {
		switch d.Type {
		case domain.TypeString, domain.TypeLong, domain.TypeDouble:
		default:
			return fmt.Errorf("dimension %q has type %q: want string, long or double", d.Name, d.Type)
		}
	}
	return nil
}

// columnNode is the Parquet node of one column after __time. Every one is
// optional: dimensions are null where a row lacks them, and a metric is null
// where its aggregator saw no input; a definition level costs next to
// nothing on a column without nulls.
func columnNode(t domain.ColumnType, dim bool) parquet.Node {
	switch {
	case t == domain.TypeLong:
		return parquet.Optional(parquet.Leaf(parquet.Int64Type))
	case t == domain.TypeDouble:
		return parquet.Optional(parquet.Leaf(parquet.DoubleType))
	case t == domain.TypeString && dim:
		// Dimensions are mostly low-cardinality: dictionary pages win.
		return parquet.Optional(parquet.Encoded(parquet.String(), &parquet.RLEDictionary))
	}
	// Sketches: opaque, mostly distinct bytes.
	return parquet.Optional(parquet.Leaf(parquet.ByteArrayType))
}

// newParquetSchema builds the file schema for s, which checkSchema accepted.
// parquet.Group alone would sort its fields by name, so the group is wrapped
// to keep "__time" first and the columns in the schema's order.
func newParquetSchema(s domain.Schema, ids FieldIDs) *parquet.Schema {
	group := make(parquet.Group, len(s.Dims)+len(s.Metrics)+1)
	withID := func(name string, n parquet.Node) parquet.Node {
		if id, ok := ids[name]; ok {
			return parquet.FieldID(n, id)
		}
		return n
	}
	// Delta encoding makes sorted, granularity-truncated times nearly free.
	group[TimeColumn] = withID(TimeColumn, parquet.Encoded(parquet.Timestamp(parquet.Microsecond), &parquet.DeltaBinaryPacked))
	for _, d := range s.Dims {
		group[d.Name] = withID(d.Name, columnNode(d.Type, true))
	}
	for _, m := range s.Metrics {
		group[m.Name] = withID(m.Name, columnNode(m.ColumnType(), false))
	}
	byName := make(map[string]parquet.Field, len(group))
	for _, f := range group.Fields() {
		byName[f.Name()] = f
	}
	fields := make([]parquet.Field, 0, len(group))
	fields = append(fields, byName[TimeColumn])
	for _, c := range s.Columns() {
		fields = append(fields, byName[c.Name])
	}
	return parquet.NewSchema("segment", &orderedGroup{Group: group, fields: fields})
}

// checkLayout verifies that a file's Parquet columns are the ones its
// metadata schema implies, in order, so values decode as the types claimed.
func checkLayout(got *parquet.Schema, s domain.Schema) error {
	want := newParquetSchema(s, nil).Fields()
	fields := got.Fields()
	if len(fields) != len(want) {
		return fmt.Errorf("file has %d columns, its schema %d", len(fields), len(want))
	}
	for i, f := range fields {
		w := want[i]
		if f.Name() != w.Name() || !f.Leaf() || f.Optional() != w.Optional() ||
			f.Type().Kind() != w.Type().Kind() {
			return fmt.Errorf("column %d is %q %v, want %q %v", i, f.Name(), f.Type(), w.Name(), w.Type())
		}
	}
	return nil
}

// orderedGroup is a parquet.Group whose fields keep a chosen order. The
// embedded Group supplies GoType (fields are matched by name there, so its
// sorted order does no harm); the file layout follows Fields.
type orderedGroup struct {
	parquet.Group
	fields []parquet.Field
}

func (g *orderedGroup) Fields() []parquet.Field { return g.fields }

func (g *orderedGroup) String() string {
	var b strings.Builder
	_ = parquet.PrintSchema(&b, "", g)
	return b.String()
}

// timeScale is what a file's TimeColumn values are divided by to give Unix
// milliseconds: 1000 for MICROS, 1 for the MILLIS of older files.
func timeScale(got *parquet.Schema) int64 {
	fields := got.Fields()
	if len(fields) == 0 {
		return 1
	}
	if lt := fields[0].Type().LogicalType(); lt != nil {
		if ts, ok := lt.Value.(*format.TimestampType); ok && ts.Unit.Value != nil {
			return int64(time.Millisecond / ts.Unit.Value.Duration())
		}
	}
	return 1
}
