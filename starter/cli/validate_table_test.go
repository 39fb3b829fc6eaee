package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// validate --table refuses a spec whose dimension's type differs from the
// datasource's table column, naming it, and takes one that fits.
func TestValidateAgainstTheTable(t *testing.T) {
	t.Parallel()
	url, deep := tableDB(t)
	env := map[string]string{"DATABASE_URL": url, "HANDOFF_DEEP_STORAGE": deep}
	r := runCLI(t, runOpts{env: env}, "table", "create", "wiki_ds")
	require.Equal(t, ExitOK, r.code, r.stderr)

	dir := t.TempDir()
	spec := func(name, pageType string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(`{"id": "wiki", "dataSchema": {"dataSource": "wiki_ds", "timestampSpec": {"column": "ts"},
			"dimensionsSpec": {"dimensions": [{"name": "page", "type": "`+pageType+`"}]},
			"granularitySpec": {"segmentGranularity": "hour"}}, "ioConfig": {"topic": "wiki"}}`), 0o644))
		return p
	}
	r = runCLI(t, runOpts{env: env}, "validate", "-f", spec("fits.json", "string"), "--table")
	assert.Equal(t, ExitOK, r.code, r.stderr)
	r = runCLI(t, runOpts{env: env}, "validate", "-f", spec("retyped.json", "long"), "--table")
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, `table handoff.wiki_ds column "page"`)
	assert.Contains(t, r.stderr, "Iceberg cannot change a column's type")
	r = runCLI(t, runOpts{}, "validate", "-f", spec("offline.json", "long"))
	assert.Equal(t, ExitOK, r.code, "without --table nothing is contacted: %s", r.stderr)
}
