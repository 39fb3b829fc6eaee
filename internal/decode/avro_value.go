package decode

import (
	"encoding/base64"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hamba/avro/v2"
)

// avroText renders values hamba/avro decoded into Go's generic types
// (records and maps as map[string]any, unions as map[string]any{branch:
// value}, logical types as time.Time, time.Duration and *big.Rat), walking
// the schema beside the value so that unions resolve exactly.
type avroText struct {
	text
	binaryAsString bool
}

// value renders a top-level field.
func (t *avroText) value(s avro.Schema, v any) Value {
	s, v = unwrapUnion(s, v)
	if v == nil {
		return Value{Kind: Null}
	}
	switch s.Type() {
	case avro.Boolean:
		b, _ := v.(bool)
		return boolValue(b)
	case avro.Int, avro.Long, avro.Float, avro.Double, avro.Bytes, avro.Fixed, avro.String, avro.Enum:
		return t.scalar(s, v)
	case avro.Array:
		start := len(t.b)
		t.json(s, v)
		return Value{Kind: Array, Text: t.since(start)}
	}
	start := len(t.b)
	t.json(s, v)
	return Value{Kind: Object, Text: t.since(start)}
}

// scalar renders a non-composite value.
func (t *avroText) scalar(s avro.Schema, v any) Value {
	switch x := v.(type) {
	case string:
		return t.str(x)
	case int:
		return t.int(int64(x))
	case int64:
		return t.int(x)
	case float32:
		return t.float(float64(x), 32)
	case float64:
		return t.float(x, 64)
	case []byte:
		return t.bytes(x, t.binaryAsString)
	case *big.Rat:
		return t.decimal(s, x)
	case time.Time:
		return t.timeOf(s, x)
	case time.Duration:
		return t.duration(x)
	case avro.LogicalDuration:
		start := len(t.b)
		t.b = append(t.b, 'P')
		t.b = strconv.AppendUint(t.b, uint64(x.Months), 10)
		t.b = append(t.b, 'M')
		t.b = strconv.AppendUint(t.b, uint64(x.Days), 10)
		t.b = append(t.b, "DT"...)
		t.b = strconv.AppendFloat(t.b, float64(x.Milliseconds)/1000, 'f', -1, 64)
		t.b = append(t.b, 'S')
		return Value{Kind: String, Text: t.since(start)}
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Array && rv.Type().Elem().Kind() == reflect.Uint8 { // fixed
		b := make([]byte, rv.Len())
		reflect.Copy(reflect.ValueOf(b), rv)
		return t.bytes(b, t.binaryAsString)
	}
	return Value{Kind: Null}
}

// timeOf renders a date or an instant of logical type s.
func (t *avroText) timeOf(s avro.Schema, x time.Time) Value {
	if lt := logical(s); lt == avro.Date {
		return t.date(x)
	} else if lt == avro.LocalTimestampMillis || lt == avro.LocalTimestampMicros {
		start := len(t.b)
		t.b = x.UTC().AppendFormat(t.b, "2006-01-02T15:04:05.999999")
		return Value{Kind: Time, Text: t.since(start)}
	}
	return t.time(x)
}

// duration renders a time of day (time-millis, time-micros).
func (t *avroText) duration(x time.Duration) Value {
	start := len(t.b)
	t.b = time.Time{}.Add(x).AppendFormat(t.b, "15:04:05.999999")
	return Value{Kind: String, Text: t.since(start)}
}

// decimal renders a decimal with its schema's scale.
func (t *avroText) decimal(s avro.Schema, r *big.Rat) Value {
	scale := 0
	if ls, ok := s.(avro.LogicalTypeSchema); ok {
		if d, ok := ls.Logical().(*avro.DecimalLogicalSchema); ok {
			scale = d.Scale()
		}
	}
	start := len(t.b)
	t.b = append(t.b, r.FloatString(scale)...)
	return Value{Kind: Number, Text: t.since(start)}
}

// json appends v as JSON: records with their fields in schema order, maps
// with their keys sorted.
func (t *avroText) json(s avro.Schema, v any) {
	s, v = unwrapUnion(s, v)
	if v == nil {
		t.b = append(t.b, "null"...)
		return
	}
	switch s.Type() {
	case avro.Record:
		m, _ := v.(map[string]any)
		t.b = append(t.b, '{')
		for i, f := range s.(*avro.RecordSchema).Fields() {
			if i > 0 {
				t.b = append(t.b, ',')
			}
			t.jsonString(f.Name())
			t.b = append(t.b, ':')
			t.json(f.Type(), m[f.Name()])
		}
		t.b = append(t.b, '}')
	case avro.Map:
		m, _ := v.(map[string]any)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		t.b = append(t.b, '{')
		for i, k := range keys {
			if i > 0 {
				t.b = append(t.b, ',')
			}
			t.jsonString(k)
			t.b = append(t.b, ':')
			t.json(s.(*avro.MapSchema).Values(), m[k])
		}
		t.b = append(t.b, '}')
	case avro.Array:
		a, _ := v.([]any)
		t.b = append(t.b, '[')
		for i, e := range a {
			if i > 0 {
				t.b = append(t.b, ',')
			}
			t.json(s.(*avro.ArraySchema).Items(), e)
		}
		t.b = append(t.b, ']')
	case avro.Boolean:
		b, _ := v.(bool)
		t.b = strconv.AppendBool(t.b, b)
	default:
		t.jsonScalar(s, v)
	}
}

// jsonScalar appends a scalar as JSON without going through the buffer
// twice: numbers bare, everything else as a string.
func (t *avroText) jsonScalar(s avro.Schema, v any) {
	switch x := v.(type) {
	case string:
		t.jsonString(x)
	case int:
		t.b = strconv.AppendInt(t.b, int64(x), 10)
	case int64:
		t.b = strconv.AppendInt(t.b, x, 10)
	case float32:
		t.jsonFloat(float64(x), 32)
	case float64:
		t.jsonFloat(x, 64)
	case []byte:
		if t.binaryAsString {
			t.jsonString(string(x))
		} else {
			t.b = append(t.b, '"')
			t.b = base64.StdEncoding.AppendEncode(t.b, x)
			t.b = append(t.b, '"')
		}
	default:
		// Rendered alone first (times, decimals, fixed), then copied in:
		// a value's text is written past where it is then copied to.
		mark := len(t.b)
		sv := t.scalar(s, v)
		text := strings.Clone(sv.Text)
		t.b = t.b[:mark]
		t.jsonValue(Value{Kind: sv.Kind, Text: text})
	}
}

func (t *avroText) jsonFloat(f float64, bits int) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		t.jsonString(strconv.FormatFloat(f, 'g', -1, bits))
		return
	}
	t.b = appendFloat(t.b, f, bits)
}

// unwrapUnion resolves a union to its branch's schema and value; other
// schemas pass through (references resolved). hamba/avro decodes a union
// inside a record to the branch's value, and one it cannot resolve to
// map[string]any{branch name: value}: both are handled.
func unwrapUnion(s avro.Schema, v any) (avro.Schema, any) {
	if r, ok := s.(*avro.RefSchema); ok {
		s = r.Schema()
	}
	u, ok := s.(*avro.UnionSchema)
	if !ok || v == nil {
		return s, v
	}
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		for name, bv := range m {
			for _, b := range u.Types() {
				if branchName(b) == name {
					return unwrapUnion(b, bv)
				}
			}
		}
	}
	for _, b := range u.Types() {
		if matches(b, v) {
			return unwrapUnion(b, v)
		}
	}
	return s, nil
}

// matches says whether a value hamba/avro decoded can be of schema b.
func matches(b avro.Schema, v any) bool {
	if r, ok := b.(*avro.RefSchema); ok {
		b = r.Schema()
	}
	switch v.(type) {
	case string:
		return b.Type() == avro.String || b.Type() == avro.Enum
	case int:
		return b.Type() == avro.Int && logical(b) == ""
	case int64:
		return b.Type() == avro.Long && logical(b) == ""
	case float32:
		return b.Type() == avro.Float
	case float64:
		return b.Type() == avro.Double
	case bool:
		return b.Type() == avro.Boolean
	case []byte:
		return b.Type() == avro.Bytes
	case *big.Rat:
		return logical(b) == avro.Decimal
	case time.Time:
		lt := logical(b)
		return lt == avro.Date || lt == avro.TimestampMillis || lt == avro.TimestampMicros || lt == avro.LocalTimestampMillis || lt == avro.LocalTimestampMicros
	case time.Duration:
		lt := logical(b)
		return lt == avro.TimeMillis || lt == avro.TimeMicros
	case map[string]any:
		return b.Type() == avro.Record || b.Type() == avro.Map
	case []any:
		return b.Type() == avro.Array
	case avro.LogicalDuration:
		return logical(b) == avro.Duration
	}
	return b.Type() == avro.Fixed
}

// branchName is how hamba/avro names a union branch in the map it decodes
// a union into: a named type's full name, else the type with its logical
// type ("long.timestamp-millis").
func branchName(s avro.Schema) string {
	if r, ok := s.(*avro.RefSchema); ok {
		s = r.Schema()
	}
	if n, ok := s.(avro.NamedSchema); ok {
		return n.FullName()
	}
	name := string(s.Type())
	if lt := logical(s); lt != "" {
		name += "." + string(lt)
	}
	return name
}

func logical(s avro.Schema) avro.LogicalType {
	if ls, ok := s.(avro.LogicalTypeSchema); ok && ls.Logical() != nil {
		return ls.Logical().Type()
	}
	return ""
}
