package domain

import "strings"

// Row is one row of a datasource: its time (Unix milliseconds, truncated to
// the query granularity), its dimension values and its metric values,
// aligned with a Schema's columns. A row holding fewer Dims than the schema
// has nulls for the rest (schemaless discovery adds columns as it goes).
type Row struct {
	Time    int64
	Dims    []Value
	Metrics []Value
}

// Schema is the layout of rows after __time: dimensions, then metrics.
type Schema struct {
	Dims    []Column
	Metrics []MetricSpec
}

// Columns lists every column after __time: dimensions, then metrics.
func (s Schema) Columns() []Column {
	cols := make([]Column, 0, len(s.Dims)+len(s.Metrics))
	cols = append(cols, s.Dims...)
	for _, m := range s.Metrics {
		cols = append(cols, Column{Name: m.Name, Type: m.ColumnType()})
	}
	return cols
}

// Dim returns the value of dimension i, null past the row's end.
func (r Row) Dim(i int) Value {
	if i < len(r.Dims) {
		return r.Dims[i]
	}
	return NullValue()
}

// CompareRows orders rows by time, then by each dimension in turn (nulls
// first; strings bytewise, numbers numerically). dims gives the dimension
// types; rows shorter than dims compare as nulls there.
func CompareRows(a, b Row, dims []Column) int {
	if a.Time != b.Time {
		if a.Time < b.Time {
			return -1
		}
		return 1
	}
	for i, c := range dims {
		if d := CompareValues(a.Dim(i), b.Dim(i), c.Type); d != 0 {
			return d
		}
	}
	return 0
}

// CompareValues orders two values of one column type, nulls first.
func CompareValues(a, b Value, t ColumnType) int {
	switch {
	case a.Null && b.Null:
		return 0
	case a.Null:
		return -1
	case b.Null:
		return 1
	}
	switch t {
	case TypeLong:
		return cmp3(a.Long(), b.Long())
	case TypeDouble:
		return cmp3(a.Double(), b.Double())
	}
	// One comparison of the bytes, where a < b then a > b would be two.
	return strings.Compare(a.S, b.S)
}

func cmp3[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// DeclaredSchema is the schema the spec declares: its dimensions (none
// when it discovers them) and its metrics.
func (ds DataSchema) DeclaredSchema() Schema {
	s := Schema{Metrics: ds.MetricsSpec}
	for _, d := range ds.DimensionsSpec.Dimensions {
		t := d.Type
		if t == "" {
			t = TypeString
		}
		s.Dims = append(s.Dims, Column{Name: d.Name, Type: t})
	}
	return s
}

// Discovers reports whether dimensions are discovered from the data.
func (ds DataSchema) Discovers() bool { return len(ds.DimensionsSpec.Dimensions) == 0 }
