package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A hostile supervisor id is refused before it becomes a workflow id or a
// query argument: nothing is dialed (runCLI fails the test if Temporal is,
// and the database URL points at a closed port, which would exit 1).
func TestHostileSupervisorIDIsRefusedBeforeAnythingIsContacted(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATABASE_URL": "postgres://u@127.0.0.1:1/db?connect_timeout=1"}
	for _, tc := range []struct {
		id, why string
	}{
		{"../x", `"../x" starts with '.'`},
		{"a/b", `"a/b" has '/' at byte 1`},
		{"a..b", `contains ".."`},
		{"x'; drop table segments; --", `has '\''`},
		{"a\x00b", `has '\x00'`},
		{"wiki pages", `has ' '`},
		{strings.Repeat("x", 10<<10), "10240 bytes long"},
	} {
		for _, args := range [][]string{
			{"status", tc.id},
			{"status", tc.id, "--watch"},
			{"stop", tc.id},
			{"stop", tc.id, "--now"},
			{"checkpoint", tc.id},
			{"suspend", tc.id},
			{"resume", tc.id},
			{"reset", tc.id, "--to", "earliest"},
			{"history", tc.id},
			{"parse-errors", tc.id},
			{"segments", tc.id},
			{"table", tc.id},
		} {
			r := runCLI(t, runOpts{env: env}, args...)
			assert.Equal(t, ExitUsage, r.code, "starter %s %q: stderr %s", args[0], tc.id, r.stderr)
			assert.Contains(t, r.stderr, "error: supervisor id: ", "starter %s %q", args[0], tc.id)
			assert.Contains(t, r.stderr, tc.why, "starter %s %q", args[0], tc.id)
			assert.Contains(t, r.stderr, "want 1-128 ASCII letters, digits", "starter %s %q", args[0], tc.id)
			assert.Less(t, len(r.stderr), 400, "starter %s %q quotes too much of the id", args[0], tc.id)
			assert.Empty(t, r.stdout, "starter %s %q", args[0], tc.id)
		}
	}

	r := runCLI(t, runOpts{env: env}, "segments", "--datasource", "../ds")
	assert.Equal(t, ExitUsage, r.code, r.stderr)
	assert.Contains(t, r.stderr, `error: --datasource: "../ds" starts with '.'`)
	r = runCLI(t, runOpts{env: env}, "table", "--datasource", "../ds")
	assert.Equal(t, ExitUsage, r.code, r.stderr)
	assert.Contains(t, r.stderr, `error: --datasource: "../ds" starts with '.'`)
	r = runCLI(t, runOpts{env: env}, "table", "create", "../ds")
	assert.Equal(t, ExitUsage, r.code, r.stderr)
	assert.Contains(t, r.stderr, `error: datasource: "../ds" starts with '.'`)
}
