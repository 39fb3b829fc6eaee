package domain_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

func TestValidateNameAccepts(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		"a", "7", "wiki", "wiki-sup", "wiki.sup_2", "Orders_DS", "a.b.c", "a-", "a_", "a.",
		"testcrash-ragged_csv", strings.Repeat("a", domain.MaxNameLen),
	} {
		require.NoError(t, domain.ValidateName("id", name), "%q", name)
	}
}

func TestValidateNameRefusesHostileNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, value string
		why         string // what the error must say is wrong
	}{
		{"empty", "", "empty"},
		{"dot", ".", `"." starts with '.'`},
		{"dot dot", "..", `".." starts with '.'`},
		{"parent directory", "../x", `"../x" starts with '.'`},
		{"hidden file", ".x", `".x" starts with '.'`},
		{"dot dot inside", "a..b", `"a..b" contains ".."`},
		{"dot dot at the end", "a/..", `contains ".."`},
		{"slash", "a/b", `"a/b" has '/' at byte 1`},
		{"leading slash", "/etc/passwd", `starts with '/'`},
		{"backslash", `a\b`, `has '\\' at byte 1`},
		{"double quote", `a"b`, `has '"' at byte 1`},
		{"single quote", "a'b", `has '\'' at byte 1`},
		{"sql", "x'; drop table segments; --", `has '\'' at byte 1`},
		{"nul", "a\x00b", `has '\x00' at byte 1`},
		{"space", "wiki pages", `has ' ' at byte 4`},
		{"newline", "a\nb", `has '\n' at byte 1`},
		{"tab", "a\tb", `has '\t' at byte 1`},
		{"leading dash", "-rf", `starts with '-'`},
		{"leading underscore", "_x", `starts with '_'`},
		{"colon", "a:b", `has ':' at byte 1`},
		{"percent", "a%2fb", `has '%' at byte 1`},
		{"non-ASCII letter", "café", `has 'é' at byte 3`},
		{"invalid UTF-8", "a\xffb", "the byte 0xff (not UTF-8) at byte 1"},
		{"one too long", strings.Repeat("a", domain.MaxNameLen+1), "129 bytes long"},
		{"10 KB", strings.Repeat("x", 10<<10), "10240 bytes long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := domain.ValidateName("dataSchema.dataSource", tc.value)
			require.Error(t, err)
			var fe *domain.FieldError
			require.True(t, errors.As(err, &fe), "%T %v is not a *FieldError", err, err)
			require.Equal(t, "dataSchema.dataSource", fe.Path)
			msg := err.Error()
			require.True(t, strings.HasPrefix(msg, "dataSchema.dataSource: "), "error %q does not start with the field", msg)
			require.Contains(t, msg, tc.why)
			require.Contains(t, msg, "want 1-128 ASCII letters, digits", "error %q does not say what is allowed", msg)
			require.Less(t, len(msg), 300, "the error quotes too much of the name")
		})
	}
}

func TestValidateTopicFollowsKafka(t *testing.T) {
	t.Parallel()
	for _, topic := range []string{"wiki", "_internal", "-x", ".x", "a..b", "a.b_c-d", strings.Repeat("t", domain.MaxTopicLen)} {
		require.NoError(t, domain.ValidateTopic("ioConfig.topic", topic), "%q", topic)
	}
	for _, tc := range []struct{ value, why string }{
		{"", "empty"},
		{".", `"." is not a topic name`},
		{"..", `".." is not a topic name`},
		{"a/b", `has '/' at byte 1`},
		{"a b", `has ' ' at byte 1`},
		{"a\x00", `has '\x00' at byte 1`},
		{"t\xc3", "the byte 0xc3 (not UTF-8) at byte 1"},
		{strings.Repeat("t", domain.MaxTopicLen+1), "250 bytes long"},
	} {
		err := domain.ValidateTopic("ioConfig.topic", tc.value)
		require.Error(t, err, "%q", tc.value)
		require.True(t, strings.HasPrefix(err.Error(), "ioConfig.topic: "), "error %q does not start with the field", err)
		require.Contains(t, err.Error(), tc.why)
		require.Contains(t, err.Error(), "Kafka's rule")
	}
}

// A spec carries every name it holds through these checks.
func TestParseSpecRefusesHostileNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path, value, why string
	}{
		{"id", "../x", `"../x" starts with '.'`},
		{"id", "a..b", `contains ".."`},
		{"id", "x\x00", `has '\x00'`},
		{"id", strings.Repeat("x", 10<<10), "10240 bytes long"},
		{"dataSchema.dataSource", "../../etc", `starts with '.'`},
		{"dataSchema.dataSource", "ds'; --", `has '\''`},
		{"ioConfig.topic", "wiki/edits", `has '/'`},
		{"ioConfig.topic", "..", "not a topic name"},
		{"ioConfig.deadLetterTopic", "dlq topic", `has ' '`},
	} {
		t.Run(tc.path+" "+tc.why, func(t *testing.T) {
			t.Parallel()
			m := specMap(t)
			set(m, tc.path, tc.value)
			_, err := domain.ParseSpec(mustJSON(t, m))
			var fe *domain.FieldError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, tc.path, fe.Path)
			require.Contains(t, err.Error(), tc.why)
		})
	}
}
