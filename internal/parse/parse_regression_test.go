package parse_test

// Regression tests for bugs found while writing the tests of this package.

import (
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

// Regression: Parse decoded the first JSON value of the message and ignored
// the rest, so a message that is not one JSON object — an object followed
// by garbage, or two objects — parsed as the first object.
func TestParseRefusesTrailingData(t *testing.T) {
	t.Parallel()
	p := mustNew(t, schema("auto", domain.GranularityNone, "page"), jsonIO())
	for _, msg := range []string{
		`{"ts": 1709210096789, "page": "a"} garbage`,
		`{"ts": 1709210096789, "page": "a"}}`,
		`{"ts": 1709210096789, "page": "a"}{"ts": 2, "page": "b"}`,
		`{"ts": 1709210096789, "page": "a"} [`,
	} {
		unparseable(t, p, msg)
	}
}

// Regression: "seconds" timestamps were converted with int64(f * 1000),
// which truncates the float product: 1.001 s is 1000.9999999999999 ms and
// became 1000 ms, 1.005 s became 1004 ms. (Values of today's magnitude,
// ~1.7e9 s, happen to round correctly, so this bites small and synthetic
// timestamps.)
func TestParseSecondsFractionLosesAMillisecond(t *testing.T) {
	t.Parallel()
	p := mustNew(t, schema("seconds", domain.GranularityNone), jsonIO())
	for in, want := range map[string]int64{"1.001": 1001, "1.005": 1005, "0.007": 7, "-1.001": -1001, `"1.005"`: 1005, "1.0005": 1001} {
		row := parseOne(t, p, `{"ts": `+in+`}`)
		require.Equal(t, want, row.Time, "seconds %s", in)
	}
}
