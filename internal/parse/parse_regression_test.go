package parse_test

// Regression tests for bugs found while writing parse_test.go.

import (
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/parse"
)

// Regression: Parse decodes the first JSON value of the message and ignores the
// rest, so a message that is not one JSON object — an object followed by
// garbage, or two objects — parses as the first object.
func TestParseRefusesTrailingData(t *testing.T) {
	t.Parallel()
	p := parse.New(schema("auto", domain.GranularityNone, "page"))
	for _, msg := range []string{
		`{"ts": 1709210096789, "page": "a"} garbage`,
		`{"ts": 1709210096789, "page": "a"}}`,
		`{"ts": 1709210096789, "page": "a"}{"ts": 2, "page": "b"}`,
		`{"ts": 1709210096789, "page": "a"} [`,
	} {
		row, err := p.Parse([]byte(msg))
		require.Error(t, err, "%q parsed to %+v", msg, row)
	}
}

// Regression: "seconds" timestamps are converted with int64(f * 1000), which
// truncates the float product: 1.001 s is 1000.9999999999999 ms and
// becomes 1000 ms, 1.005 s becomes 1004 ms. (Values of today's magnitude,
// ~1.7e9 s, happen to round correctly, so this bites small and synthetic
// timestamps.)
func TestParseSecondsFractionLosesAMillisecond(t *testing.T) {
	t.Parallel()
	p := parse.New(schema("seconds", domain.GranularityNone))
	for in, want := range map[string]int64{"1.001": 1001, "1.005": 1005, "0.007": 7, "-1.001": -1001} {
		row, err := p.Parse([]byte(`{"ts": ` + in + `}`))
		require.NoError(t, err)
		require.Equal(t, want, row.Time, "seconds %s", in)
	}
}
