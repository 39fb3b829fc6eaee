package domain_test

// Regression tests for bugs found while writing spec_test.go.

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

// Regression: ParseGranularity accepts any case, so ParseSpec accepts "HOUR", but
// the spec keeps "HOUR" as is. Truncate and Next only know the lower-case
// names: for "HOUR" Truncate returns its input and Next returns its start
// (a step of 0), so any loop over buckets never ends.
func TestParseSpecKeepsGranularityCase(t *testing.T) {
	t.Parallel()
	m := specMap(t)
	set(m, "dataSchema.granularitySpec.segmentGranularity", "HOUR")
	set(m, "dataSchema.granularitySpec.queryGranularity", "Minute")
	s, err := domain.ParseSpec(mustJSON(t, m))
	require.NoError(t, err)

	seg := s.DataSchema.GranularitySpec.SegmentGranularity
	start := seg.Truncate(utc("2024-02-29T12:34:56Z"))
	require.Equal(t, utc("2024-02-29T12:00:00Z"), start, "segment granularity %q does not truncate", seg)
	require.Equal(t, utc("2024-02-29T13:00:00Z"), seg.Next(start), "segment granularity %q: Next does not advance", seg)
	require.Equal(t, domain.GranularityHour, seg)
	require.Equal(t, domain.GranularityMinute, s.DataSchema.GranularitySpec.QueryGranularity)
}

// Regression: an invalid duration in the spec is reported without the path of the
// field it is in ("spec: ..."), although ParseSpec promises that every error
// names the field path. Duration.UnmarshalJSON's error passes through the
// decoder unwrapped.
func TestParseSpecDurationErrorNamesPath(t *testing.T) {
	t.Parallel()
	for path, v := range map[string]any{
		"ioConfig.period":                        "soon",
		"tuningConfig.chunkPeriod":               "-1s",
		"tuningConfig.intermediateHandoffPeriod": 600,
	} {
		m := specMap(t)
		set(m, path, v)
		_, err := domain.ParseSpec(mustJSON(t, m))
		require.Error(t, err)
		require.ErrorContains(t, err, path)
		var fe *domain.FieldError
		require.True(t, errors.As(err, &fe), "%T %v is not a *FieldError", err, err)
		require.Equal(t, path, fe.Path)
	}
}

// Regression: the column of a JSON syntax error is one past the offending
// character: json.SyntaxError.Offset counts the bad byte as read, and
// position() counts every byte up to Offset and then one more.
func TestParseSpecSyntaxErrorColumn(t *testing.T) {
	t.Parallel()
	// The stray comma is line 2, column 10.
	_, err := domain.ParseSpec([]byte("{\n  \"id\": {,\n}"))
	require.ErrorContains(t, err, "line 2, column 10")
	// The 'x' is line 1, column 8.
	_, err = domain.ParseSpec([]byte(`{"id": x}`))
	require.ErrorContains(t, err, "line 1, column 8")
}

// Regression: a spec cut short is reported as "spec: unexpected EOF", without the
// line and column promised for invalid JSON (the decoder returns
// io.ErrUnexpectedEOF, not a *json.SyntaxError).
func TestParseSpecTruncatedJSONGivesPosition(t *testing.T) {
	t.Parallel()
	_, err := domain.ParseSpec([]byte("{\n  \"id\": \"x\",\n  \"ioConfig\": {"))
	require.Error(t, err)
	require.Regexp(t, `line \d+, column \d+`, err.Error())
}

// Regression: ParseSpec decodes the first JSON value and ignores whatever follows,
// so a spec with trailing garbage (or two specs pasted together) is
// accepted.
func TestParseSpecRefusesTrailingData(t *testing.T) {
	t.Parallel()
	for _, tail := range []string{" garbage", "}", " " + minimalSpec} {
		_, err := domain.ParseSpec([]byte(minimalSpec + tail))
		require.Error(t, err, "trailing %q accepted", tail)
	}
}
