package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/lake/laketest"
	"handoff/internal/testenv"
)

// requireDuckDBCounts has DuckDB, a reader we did not write, count the
// rows of exactly the files the Iceberg scan planned: the same rows as the
// scan, each id once. Skipped where the Node project is not installed,
// except in CI.
func (s *stack) requireDuckDBCounts(scan *laketest.Scan) {
	s.t.Helper()
	root, err := testenv.RepoRoot()
	require.NoError(s.t, err)
	dir := filepath.Join(root, "internal/segment/testdata/duckdb")
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		if os.Getenv("CI") == "" {
			s.t.Logf("DuckDB check skipped: run npm ci --prefix internal/segment/testdata/duckdb")
			return
		}
		s.t.Fatalf("CI is set but %s/node_modules is missing", dir)
	}
	paths := make([]string, len(scan.Files))
	for i, f := range scan.Files {
		paths[i] = laketest.LocalPath(f)
	}
	list := filepath.Join(s.t.TempDir(), "files.json")
	b, _ := json.Marshal(paths)
	require.NoError(s.t, os.WriteFile(list, b, 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "count.mjs", list, "id")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(s.t, err, "node count.mjs: %s", stderr.String())
	var got struct{ Rows, Distinct, Dups int64 }
	require.NoError(s.t, json.Unmarshal(out, &got))
	require.Equal(s.t, scan.Rows, got.Rows, "DuckDB rows of the planned files")
	require.Zero(s.t, got.Dups, "DuckDB: ids more than once in the planned files")
}
