package parse_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

func names(s domain.Schema) []string {
	var out []string
	for _, c := range s.Dims {
		require.Equal(nil, domain.TypeString, c.Type, "discovered %q", c.Name)
		out = append(out, c.Name)
	}
	return out
}

func TestParseDiscoveryOrderAndExclusions(t *testing.T) {
	t.Parallel()
	ds := schema("millis", domain.GranularityNone)
	ds.DimensionsSpec.DimensionExclusions = []string{"secret"}
	ds.MetricsSpec = []domain.MetricSpec{{Type: domain.MetricCount, Name: "rows"}, {Type: domain.MetricLongSum, Name: "sum_bytes", FieldName: "bytes"}}
	p := mustNew(t, ds, jsonIO())
	require.Empty(t, p.Schema().Dims)
	require.Equal(t, ds.MetricsSpec, p.Schema().Metrics)

	r1 := parseOne(t, p, `{"page": "a", "ts": 1, "bytes": 10, "secret": "x", "user": {"id": 1}, "__reserved": "y"}`)
	require.Equal(t, []string{"page", "user"}, names(p.Schema()))
	require.Equal(t, []domain.Value{sv("a"), sv(`{"id":1}`)}, r1.Dims)
	require.Equal(t, []domain.Value{lv(1), lv(10)}, r1.Metrics)
	schema1 := p.Schema()

	r2 := parseOne(t, p, `{"country": "fr", "ts": 2, "user": null, "lang": "fr"}`)
	require.Equal(t, []string{"page", "user", "country", "lang"}, names(p.Schema()))
	require.Equal(t, []domain.Value{null, null, sv("fr"), sv("fr")}, r2.Dims)
	// Rows and schemas handed out before are unchanged.
	require.Len(t, r1.Dims, 2)
	require.Equal(t, []string{"page", "user"}, names(schema1))

	r3 := parseOne(t, p, `{"ts": 3, "lang": "de"}`)
	require.Equal(t, []domain.Value{null, null, null, sv("de")}, r3.Dims)

	// A row ends at its last value: the rest are null (domain.Row.Dim).
	r4 := parseOne(t, p, `{"ts": 4, "user": "u", "lang": null}`)
	require.Equal(t, []domain.Value{null, sv("u")}, r4.Dims)
	require.Equal(t, null, r4.Dim(3))
}

func TestParseDiscoveryKeepsNothingOfBadMessages(t *testing.T) {
	t.Parallel()
	ds := schema("millis", domain.GranularityNone)
	ds.Filter = &domain.Filter{Type: "selector", Dimension: "page", Value: "keep"}
	p := mustNew(t, ds, jsonIO())
	parseOne(t, p, `{"ts": 1, "page": "keep"}`)

	unparseable(t, p, `{"new1": "x", "ts": "never"}`)
	unparseable(t, p, `{"new2": "x", "ts": 1, "broken": }`)
	_, err := parseRows(p, `{"new3": "x", "ts": 1, "page": "drop"}`)
	require.ErrorContains(t, err, "filtered")
	require.Equal(t, []string{"page"}, names(p.Schema()))

	// A field first seen in a bad message is discovered when it comes again.
	row := parseOne(t, p, `{"ts": 1, "new3": "y", "page": "keep", "new1": "z"}`)
	require.Equal(t, []string{"page", "new3", "new1"}, names(p.Schema()))
	require.Equal(t, []domain.Value{sv("keep"), sv("y"), sv("z")}, row.Dims)
}

func TestParseDiscoveryEscapedAndBrokenKeys(t *testing.T) {
	t.Parallel()
	p := mustNew(t, schema("millis", domain.GranularityNone), jsonIO())
	row := parseOne(t, p, "{\"ts\": 1, \"a\\u0062\": \"1\", \"\xff\": \"\xfe2\", \"\\u0074s\": 5}")
	require.Equal(t, []string{"ab", "\uFFFD"}, names(p.Schema()))
	require.Equal(t, []domain.Value{sv("1"), sv("\uFFFD2")}, row.Dims)
	require.Equal(t, int64(5), row.Time, `"\u0074s" is "ts"`)
}

func TestParseDiscoveryIsBounded(t *testing.T) {
	t.Parallel()
	p := mustNew(t, schema("millis", domain.GranularityNone), jsonIO())
	var b strings.Builder
	b.WriteString(`{"ts": 1`)
	for i := range 10_001 {
		b.WriteString(`, "k` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + itoa(i) + `": 1`)
	}
	b.WriteString(`}`)
	bad := unparseable(t, p, b.String())
	require.Contains(t, bad.Error(), "discovery stops at 10000")
	require.Empty(t, p.Schema().Dims)
}

func itoa(i int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		if i /= 10; i == 0 {
			return string(b)
		}
	}
}
