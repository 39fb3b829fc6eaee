package parse_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

func TestParseStringDimensions(t *testing.T) {
	t.Parallel()
	dims := []string{"str", "int", "float", "bool", "false", "null", "missing", "obj", "arr", "empty", "escaped", "unicode", "big"}
	p := mustNew(t, schema("millis", domain.GranularityNone, dims...), jsonIO())
	msg := `{
		"ts": 1709210096789,
		"str": "Main Page",
		"int": 42,
		"float": 12.50,
		"bool": true,
		"false": false,
		"null": null,
		"obj": {"a":1,"b":[true,null]},
		"arr": [1,"two",3.0],
		"empty": "",
		"escaped": "say \"hi\"\n\\ \u00e9",
		"unicode": "Ünïcødé ✓",
		"big": 12345678901234567890123,
		"ignored": "not a dimension"
	}`
	row := parseOne(t, p, msg)
	require.Equal(t, int64(leapMillis), row.Time)
	want := []domain.Value{
		sv("Main Page"),
		sv("42"),
		sv("12.50"), // the number's JSON text, not a reformatted float
		sv("true"),
		sv("false"),
		null,
		null,
		sv(`{"a":1,"b":[true,null]}`),
		sv(`[1,"two",3.0]`),
		sv(""),
		sv("say \"hi\"\n\\ é"),
		sv("Ünïcødé ✓"),
		sv("12345678901234567890123"),
	}
	require.Equal(t, want, row.Dims)
	require.Empty(t, row.Metrics)
}

func TestParseNestedObjectIsItsCompactJSONText(t *testing.T) {
	t.Parallel()
	p := mustNew(t, schema("millis", domain.GranularityNone, "obj", "arr"), jsonIO())
	row := parseOne(t, p, "{\"ts\": 1, \"obj\": { \"k\" : [1, {\"x\": \"y z\"}] ,\n\t\"n\": null }, \"arr\": [ ]}")
	require.Equal(t, []domain.Value{sv(`{"k":[1,{"x":"y z"}],"n":null}`), sv(`[]`)}, row.Dims)
	require.True(t, json.Valid([]byte(row.Dims[0].S)))
}

func TestParseDimensionsFollowSpecOrder(t *testing.T) {
	t.Parallel()
	p := mustNew(t, schema("millis", domain.GranularityNone, "c", "a", "b"), jsonIO())
	row := parseOne(t, p, `{"a": "1", "b": "2", "c": "3", "ts": 0}`)
	require.Equal(t, []domain.Value{sv("3"), sv("1"), sv("2")}, row.Dims)

	// Each row has its own Dims slice.
	row2 := parseOne(t, p, `{"a": "x", "ts": 0}`)
	require.Equal(t, []domain.Value{null, sv("x"), null}, row2.Dims)
	require.Equal(t, []domain.Value{sv("3"), sv("1"), sv("2")}, row.Dims)

	// A repeated key: the last one counts, as with encoding/json.
	row3 := parseOne(t, p, `{"a": "first", "ts": 0, "a": "last"}`)
	require.Equal(t, sv("last"), row3.Dims[1])
}

func typed(ds domain.DataSchema, name string, typ domain.ColumnType) domain.DataSchema {
	ds.DimensionsSpec.Dimensions = []domain.DimensionSpec{{Name: name, Type: typ}}
	return ds
}

func TestParseTypedDimensions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		typ   domain.ColumnType
		value string // JSON value of field n; "" leaves it out
		want  domain.Value
	}{
		{"long", domain.TypeLong, `42`, lv(42)},
		{"long negative", domain.TypeLong, `-7`, lv(-7)},
		{"long numeric string", domain.TypeLong, `"42"`, lv(42)},
		{"long integral float", domain.TypeLong, `3.0`, lv(3)},
		{"long exponent string", domain.TypeLong, `"1e3"`, lv(1000)},
		{"long max", domain.TypeLong, `9223372036854775807`, lv(9223372036854775807)},
		{"long null", domain.TypeLong, `null`, null},
		{"long missing", domain.TypeLong, ``, null},
		{"long empty string", domain.TypeLong, `""`, null},
		{"double", domain.TypeDouble, `1.5`, dv(1.5)},
		{"double whole", domain.TypeDouble, `3`, dv(3)},
		{"double string", domain.TypeDouble, `"2.25"`, dv(2.25)},
		{"double exponent", domain.TypeDouble, `-1e-3`, dv(-0.001)},
		{"double null", domain.TypeDouble, `null`, null},
		{"double missing", domain.TypeDouble, ``, null},
		{"string default type", "", `12`, sv("12")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := mustNew(t, typed(schema("millis", domain.GranularityNone), "n", tt.typ), jsonIO())
			msg := `{"ts": 1}`
			if tt.value != "" {
				msg = `{"ts": 1, "n": ` + tt.value + `}`
			}
			row := parseOne(t, p, msg)
			require.Equal(t, []domain.Value{tt.want}, row.Dims)
			wantType := tt.typ
			if wantType == "" {
				wantType = domain.TypeString
			}
			require.Equal(t, []domain.Column{{Name: "n", Type: wantType}}, p.Schema().Dims)
		})
	}
}

func TestParseTypedDimensionErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ   domain.ColumnType
		value string
		want  string
	}{
		{domain.TypeLong, `"abc"`, `dimension "n": want a whole number, got the string "abc"`},
		{domain.TypeLong, `1.5`, `want a whole number, got the number 1.5`},
		{domain.TypeLong, `"1.5"`, `want a whole number`},
		{domain.TypeLong, `1e20`, `want a whole number`},
		{domain.TypeLong, `9223372036854775808`, `want a whole number`},
		{domain.TypeLong, `true`, `want a whole number, got true`},
		{domain.TypeLong, `{"v": 1}`, `want a whole number, got an object`},
		{domain.TypeLong, `[1]`, `want a whole number, got an array`},
		{domain.TypeLong, `" 1"`, `want a whole number`},
		{domain.TypeDouble, `"abc"`, `dimension "n": want a number, got the string "abc"`},
		{domain.TypeDouble, `"NaN"`, `want a number`},
		{domain.TypeDouble, `"Inf"`, `want a number`},
		{domain.TypeDouble, `1e400`, `want a number`},
		{domain.TypeDouble, `false`, `want a number, got false`},
		{domain.TypeDouble, `[]`, `want a number, got an array`},
	}
	for _, tt := range tests {
		t.Run(string(tt.typ)+" "+tt.value, func(t *testing.T) {
			t.Parallel()
			p := mustNew(t, typed(schema("millis", domain.GranularityNone), "n", tt.typ), jsonIO())
			bad := unparseable(t, p, `{"ts": 1, "n": `+tt.value+`}`)
			require.Equal(t, "n", bad.Field)
			require.Contains(t, bad.Error(), tt.want)
		})
	}
}
