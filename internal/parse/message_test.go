package parse_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

func TestParseRefusesWhatIsNotOneObject(t *testing.T) {
	t.Parallel()
	tests := []struct{ msg, want string }{
		{``, "empty message"},
		{` `, "empty message"},
		{"\n\t", "empty message"},
		{`null`, "want a JSON object, got null"},
		{`[]`, "want a JSON object, got an array"},
		{`[{"ts": 1}]`, "want a JSON object, got an array"},
		{`42`, "want a JSON object, got the number 42"},
		{`"ts"`, "want a JSON object, got the string"},
		{`true`, "want a JSON object, got true"},
		{`{`, "ends early"},
		{`{"ts": 1`, "ends early"},
		{`{"ts": 1,}`, "want a key string"},
		{`{ts: 1}`, "want a key string"},
		{`{'ts': 1}`, "want a key string"},
		{`{"ts" 1}`, "want ':' after a key"},
		{`{"ts": 01}`, "want ',' or '}'"},
		{`{"ts": 1.}`, "want a digit after '.'"},
		{`{"ts": 1e}`, "want a digit in the exponent"},
		{`{"ts": -}`, "want a digit"},
		{`{"ts": tru}`, "want a value"},
		{`{"ts": 1, "a": [1,]}`, "want a value"},
		{`{"ts": 1, "a": {"b" 1}}`, "want ':' after a key"},
		{`{"ts": 1, "a": "\x"}`, "want a valid escape"},
		{`{"ts": 1, "a": "\u12"}`, "want 4 hex digits"},
		{"{\"ts\": 1, \"a\": \"line\nbreak\"}", "want no control characters"},
		{`{"ts": 1, "a": "open}`, "want a closing quote"},
		{"\x00\x01\x02", "want a JSON object"},
		{"\xff\xfe{}", "want a JSON object"},
		{"\xef\xbb\xbf{\"ts\": 1}", "want a JSON object"},
		{`{"ts": 1} {}`, "more follows at byte 10"},
		{strings.Repeat("[", 20000), "want a JSON object"},
		{`{"ts": 1, "a": ` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, "nested more than 10000 deep"},
	}
	for _, tt := range tests {
		t.Run(tt.msg[:min(len(tt.msg), 30)], func(t *testing.T) {
			t.Parallel()
			p := mustNew(t, schema("auto", domain.GranularityHour, "page"), jsonIO())
			bad := unparseable(t, p, tt.msg)
			require.Empty(t, bad.Field)
			require.Contains(t, bad.Error(), tt.want)
		})
	}
}

func TestParseNilAndHugeMessages(t *testing.T) {
	t.Parallel()
	p := mustNew(t, schema("auto", domain.GranularityNone, "page"), jsonIO())
	require.NotPanics(t, func() {
		err := p.Parse(nil, now, func(domain.Row) { t.Error("emitted") })
		require.Error(t, err)
	})

	big := strings.Repeat("é", 1<<20)
	row := parseOne(t, p, `{"ts": 1, "pad": [`+strings.Repeat(`{"x": 1}, `, 1<<16)+`0], "page": "`+big+`"}`)
	require.Equal(t, big, row.Dims[0].S)
}

func TestParseInvalidUTF8BecomesReplacementCharacters(t *testing.T) {
	t.Parallel()
	p := mustNew(t, schema("auto", domain.GranularityNone, "page", "obj", "ok"), jsonIO())
	row := parseOne(t, p, "{\"ts\": 1, \"page\": \"a\xffb\", \"obj\": {\"k\": \"\xc3\"}, \"ok\": \"é\"}")
	require.Equal(t, []domain.Value{sv("a\uFFFDb"), sv("{\"k\":\"\uFFFD\"}"), sv("é")}, row.Dims)
}
