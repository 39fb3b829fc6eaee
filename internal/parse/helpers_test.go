package parse_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/parse"
)

// now is when tests read their messages: 2024-02-29T12:40:00Z.
var now = time.Date(2024, 2, 29, 12, 40, 0, 0, time.UTC)

// 2024-02-29T12:34:56.789Z
const (
	leapMillis  = 1709210096789
	leapSeconds = 1709210096
)

var (
	sv   = domain.StringValue
	lv   = domain.LongValue
	dv   = domain.DoubleValue
	null = domain.NullValue()
)

// schema is a data schema with string dimensions (none: discovery).
func schema(format string, query domain.Granularity, dims ...string) domain.DataSchema {
	ds := domain.DataSchema{
		DataSource:      "ds",
		TimestampSpec:   domain.TimestampSpec{Column: "ts", Format: format},
		GranularitySpec: domain.GranularitySpec{SegmentGranularity: domain.GranularityHour, QueryGranularity: query},
	}
	for _, d := range dims {
		ds.DimensionsSpec.Dimensions = append(ds.DimensionsSpec.Dimensions, domain.DimensionSpec{Name: d, Type: domain.TypeString})
	}
	return ds
}

func jsonIO() domain.IOConfig {
	return domain.IOConfig{Topic: "t", InputFormat: domain.InputFormat{Type: domain.InputJSON}}
}

func csvIO(delim string, header bool, columns ...string) domain.IOConfig {
	return domain.IOConfig{Topic: "t", InputFormat: domain.InputFormat{
		Type: domain.InputCSV, Delimiter: delim, FindColumnsFromHeader: header, Columns: columns,
	}}
}

func mustNew(t testing.TB, ds domain.DataSchema, io domain.IOConfig) *parse.Parser {
	t.Helper()
	p, err := parse.New(ds, io)
	require.NoError(t, err)
	return p
}

// parseRows parses msg at now and returns what was emitted.
func parseRows(p *parse.Parser, msg string) ([]domain.Row, error) {
	var rows []domain.Row
	err := p.Parse([]byte(msg), now, func(r domain.Row) { rows = append(rows, r) })
	if err != nil && rows != nil {
		panic("rows emitted with an error")
	}
	return rows, err
}

// parseOne parses a message that must hold one row.
func parseOne(t *testing.T, p *parse.Parser, msg string) domain.Row {
	t.Helper()
	rows, err := parseRows(p, msg)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	return rows[0]
}

// unparseable parses msg and requires an *UnparseableError, which it
// returns.
func unparseable(t *testing.T, p *parse.Parser, msg string) *parse.UnparseableError {
	t.Helper()
	var rows []domain.Row
	var err error
	require.NotPanics(t, func() { rows, err = parseRows(p, msg) })
	require.Empty(t, rows)
	var bad *parse.UnparseableError
	require.ErrorAs(t, err, &bad, "parsing %q", msg)
	return bad
}

func ms(s string) int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UnixMilli()
}
