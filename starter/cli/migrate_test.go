package cli

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"handoff/internal/testenv"
)

func TestMigrateStatusAndUp(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	env := runOpts{env: map[string]string{"DATABASE_URL": url}}

	r := runCLI(t, env, "migrate", "status", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var before migrateStatusResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &before))
	require.GreaterOrEqual(t, len(before.Migrations), 3)
	var versions []string
	for i, m := range before.Migrations {
		assert.False(t, m.Applied, "a new database has none applied")
		assert.Equal(t, int64(i+1), m.Version)
		assert.True(t, strings.HasSuffix(m.Source, ".sql"), m.Source)
		versions = append(versions, strconv.FormatInt(m.Version, 10))
	}

	r = runCLI(t, env, "migrate", "status")
	require.Equal(t, ExitOK, r.code, r.stderr)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	require.Len(t, lines, len(before.Migrations)+1, r.stdout)
	assert.Regexp(t, `^VERSION +STATE +SOURCE$`, lines[0])
	assert.Regexp(t, `^1 +pending +\S*00001_initial\.sql$`, lines[1])

	r = runCLI(t, env, "migrate", "up")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, fmt.Sprintf("applied migrations %s\n", strings.Join(versions, ", ")), r.stdout)

	r = runCLI(t, env, "migrate", "up")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, "database is up to date: no pending migrations\n", r.stdout)
	r = runCLI(t, runOpts{}, "migrate", "up", "--database-url", url, "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.JSONEq(t, `{"applied": []}`, r.stdout)

	r = runCLI(t, env, "migrate", "status")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Regexp(t, `^1 +applied +\S*00001_initial\.sql$`, strings.Split(r.stdout, "\n")[1])
	assert.NotContains(t, r.stdout, "pending")

	fresh := testenv.Postgres(t)
	r = runCLI(t, runOpts{}, "migrate", "up", "--database-url", fresh, "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.JSONEq(t, `{"applied": [`+strings.Join(versions, ", ")+`]}`, r.stdout)
}
