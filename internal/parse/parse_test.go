package parse_test

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/parse"
)

func schema(format string, query domain.Granularity, dims ...string) domain.DataSchema {
	return domain.DataSchema{
		DataSource:      "ds",
		TimestampSpec:   domain.TimestampSpec{Column: "ts", Format: format},
		DimensionsSpec:  domain.DimensionsSpec{Dimensions: dims},
		GranularitySpec: domain.GranularitySpec{SegmentGranularity: domain.GranularityHour, QueryGranularity: query},
	}
}

func ms(s string) int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UnixMilli()
}

// 2024-02-29T12:34:56.789Z
const (
	leapMillis  = 1709210096789
	leapSeconds = 1709210096
)

func TestParseTimestampFormats(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		format string
		value  string // JSON value of the ts field
		want   int64
	}{
		{"iso Z", "iso", `"2024-02-29T12:34:56.789Z"`, leapMillis},
		{"iso no fraction", "iso", `"2024-02-29T12:34:56Z"`, leapSeconds * 1000},
		{"iso offset", "iso", `"2024-02-29T14:34:56.789+02:00"`, leapMillis},
		{"iso negative offset", "iso", `"2024-02-28T23:34:56.789-13:00"`, leapMillis},
		{"iso nanos truncated to millis", "iso", `"2024-02-29T12:34:56.789999999Z"`, leapMillis},
		{"iso without zone is UTC", "iso", `"2024-02-29T12:34:56.789"`, leapMillis},
		{"iso date", "iso", `"2024-02-29"`, ms("2024-02-29T00:00:00Z")},
		{"millis number", "millis", `1709210096789`, leapMillis},
		{"millis string", "millis", `"1709210096789"`, leapMillis},
		{"millis zero", "millis", `0`, 0},
		{"millis negative", "millis", `-1000`, -1000},
		{"millis exponent", "millis", `1.709210096789e12`, leapMillis},
		{"seconds number", "seconds", `1709210096`, leapSeconds * 1000},
		{"seconds string", "seconds", `"1709210096"`, leapSeconds * 1000},
		{"seconds fraction", "seconds", `1709210096.789`, leapMillis},
		{"seconds half", "seconds", `1709210096.5`, leapSeconds*1000 + 500},
		{"auto number is millis", "auto", `1709210096789`, leapMillis},
		{"auto numeric string is millis", "auto", `"1709210096789"`, leapMillis},
		{"auto iso string", "auto", `"2024-02-29T12:34:56.789Z"`, leapMillis},
		{"auto iso offset", "auto", `"2024-02-29T13:34:56.789+01:00"`, leapMillis},
		{"auto iso date", "auto", `"2024-02-29"`, ms("2024-02-29T00:00:00Z")},
		{"empty format is auto", "", `1709210096789`, leapMillis},
		{"empty format is auto, iso", "", `"2024-02-29T12:34:56.789Z"`, leapMillis},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := parse.New(schema(tt.format, domain.GranularityNone, "page"))
			row, err := p.Parse([]byte(`{"page": "Main", "ts": ` + tt.value + `}`))
			require.NoError(t, err)
			require.Equal(t, tt.want, row.Time)
			require.Equal(t, []string{"Main"}, row.Dims)
		})
	}
}

func TestParseTimestampErrorsNameColumn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		format string
		msg    string
	}{
		{"missing", "auto", `{"page": "x"}`},
		{"missing, other case", "auto", `{"TS": 1709210096789}`},
		{"empty object", "iso", `{}`},
		{"null", "auto", `{"ts": null}`},
		{"bool", "auto", `{"ts": true}`},
		{"object", "auto", `{"ts": {"ms": 1}}`},
		{"array", "millis", `{"ts": [1709210096789]}`},
		{"garbage string, auto", "auto", `{"ts": "yesterday"}`},
		{"garbage string, iso", "iso", `{"ts": "29/02/2024"}`},
		{"number given to iso", "iso", `{"ts": 1709210096789}`},
		{"iso given to millis", "millis", `{"ts": "2024-02-29T12:34:56Z"}`},
		{"iso given to seconds", "seconds", `{"ts": "2024-02-29T12:34:56Z"}`},
		{"empty string", "auto", `{"ts": ""}`},
		{"NaN", "millis", `{"ts": "NaN"}`},
		{"Inf", "auto", `{"ts": "Inf"}`},
		{"millis out of range", "millis", `{"ts": 1e300}`},
		{"seconds out of range", "seconds", `{"ts": 1e14}`},
		{"negative out of range", "millis", `{"ts": -1e16}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := parse.New(schema(tt.format, domain.GranularityNone, "page"))
			row, err := p.Parse([]byte(tt.msg))
			require.Error(t, err, "parsed to %+v", row)
			require.Contains(t, err.Error(), `"ts"`)
			require.Zero(t, row)
		})
	}
}

func TestParseMissingTimestampSaysMissing(t *testing.T) {
	t.Parallel()
	p := parse.New(schema("auto", domain.GranularityNone, "page"))
	_, err := p.Parse([]byte(`{"page": "x"}`))
	require.ErrorContains(t, err, `timestamp column "ts" is missing`)
}

func TestParseQueryGranularityTruncates(t *testing.T) {
	t.Parallel()
	const in = `"2024-02-29T12:34:56.789Z"`
	tests := []struct {
		g    domain.Granularity
		want string
	}{
		{domain.GranularityNone, "2024-02-29T12:34:56.789Z"},
		{"", "2024-02-29T12:34:56.789Z"},
		{domain.GranularitySecond, "2024-02-29T12:34:56Z"},
		{domain.GranularityMinute, "2024-02-29T12:34:00Z"},
		{domain.GranularityFifteenMinute, "2024-02-29T12:30:00Z"},
		{domain.GranularityHour, "2024-02-29T12:00:00Z"},
		{domain.GranularityDay, "2024-02-29T00:00:00Z"},
		{domain.GranularityWeek, "2024-02-26T00:00:00Z"},
		{domain.GranularityMonth, "2024-02-01T00:00:00Z"},
		{domain.GranularityYear, "2024-01-01T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(string(tt.g), func(t *testing.T) {
			t.Parallel()
			p := parse.New(schema("auto", tt.g, "page"))
			row, err := p.Parse([]byte(`{"ts": ` + in + `}`))
			require.NoError(t, err)
			require.Equal(t, ms(tt.want), row.Time, "got %s", time.UnixMilli(row.Time).UTC())
		})
	}

	// Truncation is in UTC, whatever the zone the time was written in.
	p := parse.New(schema("iso", domain.GranularityDay))
	row, err := p.Parse([]byte(`{"ts": "2024-03-01T01:30:00+03:00"}`))
	require.NoError(t, err)
	require.Equal(t, ms("2024-02-29T00:00:00Z"), row.Time)
}

func TestParseDimensions(t *testing.T) {
	t.Parallel()
	dims := []string{"str", "int", "float", "bool", "false", "null", "missing", "obj", "arr", "empty", "escaped", "unicode", "big"}
	p := parse.New(schema("millis", domain.GranularityNone, dims...))
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
	row, err := p.Parse([]byte(msg))
	require.NoError(t, err)
	require.Equal(t, int64(leapMillis), row.Time)
	want := []string{
		"Main Page",
		"42",
		"12.50", // the number's JSON text, not a reformatted float
		"true",
		"false",
		"",
		"",
		`{"a":1,"b":[true,null]}`,
		`[1,"two",3.0]`,
		"",
		"say \"hi\"\n\\ é",
		"Ünïcødé ✓",
		"12345678901234567890123",
	}
	require.Equal(t, want, row.Dims)
	require.Len(t, row.Dims, len(dims))
}

func TestParseNestedObjectIsItsJSONText(t *testing.T) {
	t.Parallel()
	p := parse.New(schema("millis", domain.GranularityNone, "obj"))
	row, err := p.Parse([]byte(`{"ts": 1, "obj": { "k" : [1, {"x": "y"}] , "n": null }}`))
	require.NoError(t, err)
	require.Len(t, row.Dims, 1)
	require.True(t, json.Valid([]byte(row.Dims[0])), "%q is not JSON", row.Dims[0])
	require.JSONEq(t, `{"k": [1, {"x": "y"}], "n": null}`, row.Dims[0])
}

func TestParseDimensionsFollowSpecOrder(t *testing.T) {
	t.Parallel()
	p := parse.New(schema("millis", domain.GranularityNone, "c", "a", "b"))
	row, err := p.Parse([]byte(`{"a": "1", "b": "2", "c": "3", "ts": 0}`))
	require.NoError(t, err)
	require.Equal(t, []string{"3", "1", "2"}, row.Dims)

	// Each row has its own Dims slice.
	row2, err := p.Parse([]byte(`{"a": "x", "ts": 0}`))
	require.NoError(t, err)
	require.Equal(t, []string{"", "x", ""}, row2.Dims)
	require.Equal(t, []string{"3", "1", "2"}, row.Dims)
}

func TestParseRefusesNonObjects(t *testing.T) {
	t.Parallel()
	for _, msg := range []string{
		``,
		` `,
		`null`,
		`[]`,
		`[{"ts": 1}]`,
		`42`,
		`"ts"`,
		`true`,
		`{`,
		`{"ts": 1`,
		`{"ts": 1,}`,
		`{ts: 1}`,
		`{'ts': 1}`,
		"\x00\x01\x02",
		"\xff\xfe{}",
	} {
		t.Run(msg, func(t *testing.T) {
			t.Parallel()
			p := parse.New(schema("auto", domain.GranularityHour, "page"))
			var row domain.Row
			var err error
			require.NotPanics(t, func() { row, err = p.Parse([]byte(msg)) })
			require.Error(t, err, "parsed to %+v", row)
			require.Zero(t, row)
		})
	}
}

func TestParseNilInput(t *testing.T) {
	t.Parallel()
	p := parse.New(schema("auto", domain.GranularityNone, "page"))
	require.NotPanics(t, func() {
		_, err := p.Parse(nil)
		require.Error(t, err)
	})
}

func TestParserConcurrentUse(t *testing.T) {
	t.Parallel()
	p := parse.New(schema("auto", domain.GranularityMinute, "page", "user"))
	done := make(chan struct{})
	for i := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for j := range 200 {
				row, err := p.Parse([]byte(`{"ts": 1709210096789, "page": "p", "user": ` + strconv.Itoa(i*1000+j) + `}`))
				if err != nil || row.Time != ms("2024-02-29T12:34:00Z") || row.Dims[0] != "p" || row.Dims[1] != strconv.Itoa(i*1000+j) {
					t.Errorf("row %+v, err %v", row, err)
					return
				}
			}
		}()
	}
	for range 8 {
		<-done
	}
}

func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`{"ts": 1709210096789, "page": "Main", "user": "bob", "n": 3}`,
		`{"ts": "2024-02-29T12:34:56.789Z", "page": null, "user": {"id": 7}}`,
		`{"ts": "2024-02-29", "page": [1, 2], "user": true}`,
		`{"ts": "1709210096789", "page": "é\"\\"}`,
		`{"ts": -1e15}`,
		`{"ts": 1e300}`,
		`{"page": "no ts"}`,
		`{}`,
		`null`,
		`[1, 2]`,
		`"str"`,
		`{"ts": 1,`,
		``,
	} {
		f.Add([]byte(seed))
	}
	dims := []string{"page", "user", "n"}
	parsers := map[string]*parse.Parser{}
	for _, format := range []string{"auto", "iso", "millis", "seconds"} {
		parsers[format] = parse.New(schema(format, domain.GranularityHour, dims...))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		for format, p := range parsers {
			row, err := p.Parse(msg)
			if err != nil {
				continue
			}
			if len(row.Dims) != len(dims) {
				t.Fatalf("%s: Parse(%q) = %+v: %d dims, want %d", format, msg, row, len(row.Dims), len(dims))
			}
			if row.Time%int64(time.Hour/time.Millisecond) != 0 {
				t.Fatalf("%s: Parse(%q) time %d is not truncated to the hour", format, msg, row.Time)
			}
		}
	})
}
