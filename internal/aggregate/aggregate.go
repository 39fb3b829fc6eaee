// Package aggregate holds the metric aggregators of a datasource, with
// Druid's semantics: Init turns one input row's field into a metric value
// and Combine merges two values of one metric, so that rollup (and any later
// re-aggregation) can fold rows in any grouping.
//
// Nulls: a missing or null field gives a null value (count still gives 1),
// and null is Combine's identity, so a metric is null only when every row
// folded into it was.
//
// Longs wrap on overflow, as Druid's long arithmetic does: a longSum past
// the int64 range wraps around instead of saturating, so Combine stays
// associative and commutative. Doubles follow IEEE 754: a doubleSum may
// differ in its last bits between groupings, as floating-point addition is
// not associative; NaN and infinities are refused at Init.
//
// hyperUnique values are HyperLogLog sketches serialized with
// github.com/axiomhq/hyperloglog's MarshalBinary (format version 2): fixed
// precision 14 (16384 registers, about 0.8% standard error), starting
// sparse, each input hashed with MetroHash64 (seed 1337, fixed by that
// format) over the field's text. Anyone holding the bytes can
// UnmarshalBinary and Merge them with sketches of the same precision. A
// single value's sketch is 24 bytes; a sketch grows with its distinct values
// and is at most 16392 bytes once dense.
package aggregate

import (
	"fmt"
	"math"

	"handoff/internal/domain"
)

// Init is one input row's value for metric m: count gives long 1;
// longSum/longMin/longMax the field's integer; doubleSum/doubleMin/doubleMax
// the field's float; hyperUnique a sketch holding the one value. raw is the
// field's text (a JSON number's text, a string's content, "true"/"false");
// present=false (missing or JSON null) gives null. Longs accept integral
// floats ("12.0", "1e3"). The error names the field and says why its text
// is not a number; the caller counts the row as unparseable.
func Init(m domain.MetricSpec, raw string, present bool) (domain.Value, error) {
	if m.Type == domain.MetricCount {
		return domain.LongValue(1), nil
	}
	if !present {
		return domain.NullValue(), nil
	}
	switch m.Type {
	case domain.MetricLongSum, domain.MetricLongMin, domain.MetricLongMax:
		n, err := parseLong(raw)
		if err != nil {
			return domain.Value{}, fmt.Errorf("field %q: %w", m.FieldName, err)
		}
		return domain.LongValue(n), nil
	case domain.MetricDoubleSum, domain.MetricDoubleMin, domain.MetricDoubleMax:
		f, err := parseDouble(raw)
		if err != nil {
			return domain.Value{}, fmt.Errorf("field %q: %w", m.FieldName, err)
		}
		return domain.DoubleValue(f), nil
	case domain.MetricHyperUnique:
		return sketchOf(raw), nil
	}
	return domain.Value{}, unknownType(m)
}

// Combine merges two values of metric m: the sum, min or max, or the union
// of two sketches. Null is the identity. It fails only for a sketch that
// does not decode (or has another precision) and an unknown metric type.
func Combine(m domain.MetricSpec, a, b domain.Value) (domain.Value, error) {
	switch {
	case b.Null:
		return a, nil
	case a.Null:
		return b, nil
	}
	switch m.Type {
	case domain.MetricCount, domain.MetricLongSum:
		return domain.Value{N: a.N + b.N}, nil // wraps like int64 addition
	case domain.MetricLongMin:
		return domain.LongValue(min(a.Long(), b.Long())), nil
	case domain.MetricLongMax:
		return domain.LongValue(max(a.Long(), b.Long())), nil
	case domain.MetricDoubleSum:
		return domain.DoubleValue(a.Double() + b.Double()), nil
	case domain.MetricDoubleMin:
		return domain.DoubleValue(math.Min(a.Double(), b.Double())), nil
	case domain.MetricDoubleMax:
		return domain.DoubleValue(math.Max(a.Double(), b.Double())), nil
	case domain.MetricHyperUnique:
		return combineSketches(m, a, b)
	}
	return domain.Value{}, unknownType(m)
}

func unknownType(m domain.MetricSpec) error {
	return fmt.Errorf("metric %q: unknown type %q", m.Name, m.Type)
}
