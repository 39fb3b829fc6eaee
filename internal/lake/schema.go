package lake

import (
	"fmt"

	"github.com/apache/iceberg-go"

	"handoff/internal/domain"
	"handoff/internal/segment"
)

// icebergType is a column's Iceberg type: strings, longs and doubles as
// such, HLL sketches (TypeSketch) as binary (the bytes of an
// axiomhq/hyperloglog sketch, readable by handoff's rollup and opaque to
// other engines).
func icebergType(t domain.ColumnType) (iceberg.Type, error) {
	switch t {
	case domain.TypeString:
		return iceberg.PrimitiveTypes.String, nil
	case domain.TypeLong:
		return iceberg.PrimitiveTypes.Int64, nil
	case domain.TypeDouble:
		return iceberg.PrimitiveTypes.Float64, nil
	case domain.TypeSketch:
		return iceberg.PrimitiveTypes.Binary, nil
	}
	return nil, fmt.Errorf("column type %q has no Iceberg type", t)
}

// newSchema is the table schema of a datasource whose segments carry s:
// __time (timestamptz, microseconds, required), then the dimensions and
// metrics in s's order, all optional. The ids are placeholders: a new
// table's metadata assigns its own.
func newSchema(s domain.Schema) (*iceberg.Schema, error) {
	fields := []iceberg.NestedField{{ID: 1, Name: segment.TimeColumn, Type: iceberg.PrimitiveTypes.TimestampTz, Required: true,
		Doc: "row time (UTC); truncated to queryGranularity when rollup is on"}}
	for i, c := range s.Columns() {
		t, err := icebergType(c.Type)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", c.Name, err)
		}
		fields = append(fields, iceberg.NestedField{ID: i + 2, Name: c.Name, Type: t, Doc: columnDoc(s, c.Name)})
	}
	return iceberg.NewSchema(0, fields...), nil
}

func columnDoc(s domain.Schema, name string) string {
	for _, m := range s.Metrics {
		if m.Name == name {
			if m.FieldName != "" {
				return fmt.Sprintf("metric %s of %s", m.Type, m.FieldName)
			}
			return "metric " + string(m.Type)
		}
	}
	return "dimension"
}

// SchemaError is a column a table cannot take as the spec wants it.
type SchemaError struct {
	Table  string
	Column string
	Reason string
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("table %s column %q: %s", e.Table, e.Column, e.Reason)
}

// missingColumns returns the columns of s the table schema lacks, and a
// *SchemaError for one it has with another type: Iceberg cannot change a
// column's type to an unrelated one, and a long read as a string would
// mean something else.
func missingColumns(table string, have *iceberg.Schema, s domain.Schema) ([]domain.Column, error) {
	var missing []domain.Column
	for _, c := range s.Columns() {
		want, err := icebergType(c.Type)
		if err != nil {
			return nil, err
		}
		f, ok := have.FindFieldByName(c.Name)
		if !ok {
			missing = append(missing, c)
			continue
		}
		if !f.Type.Equals(want) {
			return nil, &SchemaError{Table: table, Column: c.Name,
				Reason: fmt.Sprintf("the table has it as %s, the spec as %s (%s); Iceberg cannot change a column's type that way: keep the type or give the column a new name", f.Type, want, c.Type)}
		}
	}
	return missing, nil
}

// fieldIDs are the table's Parquet field ids by column name.
func fieldIDs(sc *iceberg.Schema) segment.FieldIDs {
	ids := segment.FieldIDs{}
	for _, f := range sc.Fields() {
		ids[f.Name] = f.ID
	}
	return ids
}

// partitionTransform is the Iceberg transform on __time whose buckets
// hold whole segments of granularity g: segment intervals never straddle
// a partition. Granularities finer than an hour partition by hour, six
// hours by day; a week (which straddles months and years) and "none"
// leave the table unpartitioned, pruned by the __time column bounds.
func partitionTransform(g domain.Granularity) iceberg.Transform {
	switch g {
	case domain.GranularitySecond, domain.GranularityMinute, domain.GranularityFiveMinute,
		domain.GranularityFifteenMinute, domain.GranularityHour:
		return iceberg.HourTransform{}
	case domain.GranularitySixHour, domain.GranularityDay:
		return iceberg.DayTransform{}
	case domain.GranularityMonth:
		return iceberg.MonthTransform{}
	case domain.GranularityYear:
		return iceberg.YearTransform{}
	}
	return nil
}

// partitionSpec is the table's partition spec for segment granularity g,
// with __time at field id timeID.
func partitionSpec(g domain.Granularity, timeID int) iceberg.PartitionSpec {
	t := partitionTransform(g)
	if t == nil {
		return *iceberg.UnpartitionedSpec
	}
	return iceberg.NewPartitionSpec(iceberg.PartitionField{
		SourceIDs: []int{timeID}, FieldID: 1000, Name: segment.TimeColumn + "_" + t.String(), Transform: t,
	})
}
