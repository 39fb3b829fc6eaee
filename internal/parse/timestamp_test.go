package parse_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
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
		{"iso without zone or fraction", "iso", `"2024-02-29T12:34:56"`, leapSeconds * 1000},
		{"iso date", "iso", `"2024-02-29"`, ms("2024-02-29T00:00:00Z")},
		{"iso escaped string", "iso", `"2024-02-29T12:34:56.789\u005a"`, leapMillis},
		{"millis number", "millis", `1709210096789`, leapMillis},
		{"millis string", "millis", `"1709210096789"`, leapMillis},
		{"millis zero", "millis", `0`, 0},
		{"millis negative", "millis", `-1000`, -1000},
		{"millis exponent", "millis", `1.709210096789e12`, leapMillis},
		{"millis fraction rounds", "millis", `1709210096788.5`, leapMillis},
		{"seconds number", "seconds", `1709210096`, leapSeconds * 1000},
		{"seconds string", "seconds", `"1709210096"`, leapSeconds * 1000},
		{"seconds fraction", "seconds", `1709210096.789`, leapMillis},
		{"seconds fraction rounds down", "seconds", `1709210096.7894`, leapMillis},
		{"seconds fraction rounds up", "seconds", `1709210096.7885`, leapMillis},
		{"seconds half", "seconds", `1709210096.5`, leapSeconds*1000 + 500},
		{"seconds exponent", "seconds", `1.709210096789e9`, leapMillis},
		{"auto number is millis", "auto", `1709210096789`, leapMillis},
		{"auto numeric string is millis", "auto", `"1709210096789"`, leapMillis},
		{"auto iso string", "auto", `"2024-02-29T12:34:56.789Z"`, leapMillis},
		{"auto iso offset", "auto", `"2024-02-29T13:34:56.789+01:00"`, leapMillis},
		{"auto iso date", "auto", `"2024-02-29"`, ms("2024-02-29T00:00:00Z")},
		{"empty format is auto", "", `1709210096789`, leapMillis},
		{"empty format is auto, iso", "", `"2024-02-29T12:34:56.789Z"`, leapMillis},
		{"go layout", "2006-01-02 15:04:05", `"2024-02-29 12:34:56"`, leapSeconds * 1000},
		{"go layout with fraction", "2006-01-02 15:04:05.000", `"2024-02-29 12:34:56.789"`, leapMillis},
		{"go layout with zone", "02/01/2006 15:04:05 -0700", `"29/02/2024 14:34:56 +0200"`, leapSeconds * 1000},
		{"go layout with month name", "Jan 2, 2006 at 3:04pm (MST)", `"Feb 29, 2024 at 12:34pm (UTC)"`, ms("2024-02-29T12:34:00Z")},
		{"go layout of a number", "20060102", `20240229`, ms("2024-02-29T00:00:00Z")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := mustNew(t, schema(tt.format, domain.GranularityNone, "page"), jsonIO())
			row := parseOne(t, p, `{"page": "Main", "ts": `+tt.value+`}`)
			require.Equal(t, tt.want, row.Time, "got %s", time.UnixMilli(row.Time).UTC())
			require.Equal(t, []domain.Value{sv("Main")}, row.Dims)
		})
	}
}

func TestParseTimestampErrorsNameColumn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		format string
		msg    string
		want   string
	}{
		{"missing", "auto", `{"page": "x"}`, `timestamp column "ts" is missing`},
		{"missing, other case", "auto", `{"TS": 1709210096789}`, `timestamp column "ts" is missing`},
		{"empty object", "iso", `{}`, `timestamp column "ts" is missing`},
		{"null", "auto", `{"ts": null}`, `timestamp column "ts" is null`},
		{"bool", "auto", `{"ts": true}`, `want a time, got true`},
		{"object", "auto", `{"ts": {"ms": 1}}`, `want a time, got an object`},
		{"array", "millis", `{"ts": [1709210096789]}`, `want a time, got an array`},
		{"garbage string, auto", "auto", `{"ts": "yesterday"}`, `"yesterday" is not an ISO-8601 time`},
		{"garbage string, iso", "iso", `{"ts": "29/02/2024"}`, `is not an ISO-8601 time`},
		{"number given to iso", "iso", `{"ts": 1709210096789}`, `want an ISO-8601 string`},
		{"iso given to millis", "millis", `{"ts": "2024-02-29T12:34:56Z"}`, `is not a number`},
		{"iso given to seconds", "seconds", `{"ts": "2024-02-29T12:34:56Z"}`, `is not a number`},
		{"empty string", "auto", `{"ts": ""}`, `is not an ISO-8601 time`},
		{"NaN", "millis", `{"ts": "NaN"}`, `is not a number`},
		{"Inf", "auto", `{"ts": "Inf"}`, `is not an ISO-8601 time`},
		{"hex", "millis", `{"ts": "0x10"}`, `is not a number`},
		{"spaces", "millis", `{"ts": " 1"}`, `is not a number`},
		{"millis out of range", "millis", `{"ts": 1e300}`, `out of range`},
		{"seconds out of range", "seconds", `{"ts": 1e14}`, `out of range`},
		{"seconds out of range, plain", "seconds", `{"ts": 100000000000000}`, `out of range`},
		{"negative out of range", "millis", `{"ts": -1e16}`, `out of range`},
		{"go layout mismatch", "2006-01-02 15:04:05", `{"ts": "2024-02-29T12:34:56Z"}`, `does not match the layout "2006-01-02 15:04:05"`},
		{"go layout, bool", "2006-01-02", `{"ts": false}`, `want a time, got false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := mustNew(t, schema(tt.format, domain.GranularityNone, "page"), jsonIO())
			bad := unparseable(t, p, tt.msg)
			require.Equal(t, "ts", bad.Field)
			require.Contains(t, bad.Error(), `"ts"`)
			require.Contains(t, bad.Error(), tt.want)
		})
	}
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
		{"HOUR", "2024-02-29T12:00:00Z"},
		{domain.GranularityDay, "2024-02-29T00:00:00Z"},
		{domain.GranularityWeek, "2024-02-26T00:00:00Z"},
		{domain.GranularityMonth, "2024-02-01T00:00:00Z"},
		{domain.GranularityYear, "2024-01-01T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(string(tt.g), func(t *testing.T) {
			t.Parallel()
			p := mustNew(t, schema("auto", tt.g, "page"), jsonIO())
			row := parseOne(t, p, `{"ts": `+in+`}`)
			require.Equal(t, ms(tt.want), row.Time, "got %s", time.UnixMilli(row.Time).UTC())
		})
	}

	// Truncation is in UTC, whatever the zone the time was written in.
	p := mustNew(t, schema("iso", domain.GranularityDay), jsonIO())
	row := parseOne(t, p, `{"ts": "2024-03-01T01:30:00+03:00"}`)
	require.Equal(t, ms("2024-02-29T00:00:00Z"), row.Time)
}
