package cli

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"handoff/activities"
	"handoff/internal/domain"
	"handoff/internal/pgstore"
	"handoff/internal/testenv"
	"handoff/workflows"
)

// TestCompactionCommands runs set, show, status and stop against a real
// Postgres and Temporal server, with the compaction workflow and its
// activities polling the task queue. Not parallel: its worker polls the
// real task queue, which TestAgainstTemporalServer's stub polls too.
func TestCompactionCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	if os.Getenv("TEMPORAL_ADDRESS") != "" {
		t.Skip("TEMPORAL_ADDRESS is set: this test needs its own dev server")
	}
	dbURL := testenv.Postgres(t)
	pool, err := pgxpool.New(t.Context(), dbURL)
	require.NoError(t, err)
	defer pool.Close()
	store := pgstore.New(pool)
	require.NoError(t, store.Migrate(t.Context()))

	hostPort := testenv.Temporal(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := client.Dial(client.Options{HostPort: hostPort, Logger: log.NewStructuredLogger(quiet)})
	require.NoError(t, err)
	defer c.Close()
	w := worker.New(c, workflows.TaskQueue, worker.Options{})
	workflows.Register(w)
	(&activities.Activities{Store: store, Log: quiet}).Register(w)
	require.NoError(t, w.Start())
	defer w.Stop()

	env := map[string]string{"TEMPORAL_ADDRESS": hostPort, "DATABASE_URL": dbURL}
	cli := func(stdin string, args ...string) result {
		return runCLI(t, runOpts{env: env, dial: client.DialContext, stdin: stdin}, args...)
	}

	r := cli(`{"targetRowsPerSegment": 1000, "period": "PT1S"}`, "compaction", "set", "wiki", "-f", "-")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "compaction config of wiki recorded as version 1; compaction/wiki running")
	r = cli(`{"period": "1s", "targetRowsPerSegment": 1000}`, "compaction", "set", "wiki", "-f", "-")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "unchanged: version 1", "the same config is no new version")

	r = cli("", "compaction", "show", "wiki", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var shown compactionShowResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &shown))
	assert.Equal(t, 1, shown.Version)
	assert.Equal(t, int64(1000), shown.Config.TargetRowsPerSegment)
	assert.Equal(t, time.Hour, shown.Config.SkipOffsetFromLatest.D(), "defaults are filled in")

	require.EventuallyWithT(t, func(t *assert.CollectT) {
		r := cli("", "compaction", "status", "wiki")
		assert.Equal(t, ExitOK, r.code, r.stderr)
		assert.Contains(t, r.stdout, "compaction of wiki: compacting, config version 1\n")
		assert.Contains(t, r.stdout, "used segments 0, intervals pending 0, running 0")
	}, 20*time.Second, 200*time.Millisecond)

	r = cli(`{"dataSource": "other"}`, "compaction", "set", "wiki", "-f", "-")
	assert.Equal(t, ExitUsage, r.code)
	assert.Contains(t, r.stderr, `dataSource is "other", but the command names "wiki"`)
	r = cli(`{"queryGranularity": "decade"}`, "compaction", "set", "wiki", "-f", "-")
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, `queryGranularity: "decade" is not a granularity`)
	// Against the datasource's spec: segments of a minute cannot hold rows
	// re-rolled up to the hour.
	repo, err := testenv.RepoRoot()
	require.NoError(t, err)
	spec, err := os.ReadFile(filepath.Join(repo, "examples", "wiki.json"))
	require.NoError(t, err)
	parsed, err := domain.ParseSpec(spec)
	require.NoError(t, err)
	_, _, err = store.RecordSpec(t.Context(), parsed.ID, spec)
	require.NoError(t, err)
	g := parsed.DataSchema.GranularitySpec
	coarser := `{"queryGranularity": "year"}`
	r = cli(coarser, "compaction", "set", parsed.DataSchema.DataSource, "-f", "-")
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, "queryGranularity: year is coarser than the datasource's segmentGranularity "+string(g.SegmentGranularity))
	r = cli(`{"targetRowsPerSegment": 1000, "period": "PT1S", "queryGranularity": "`+string(g.SegmentGranularity)+`"}`,
		"compaction", "set", parsed.DataSchema.DataSource, "-f", "-")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "recorded as version 2", "the refused config was not recorded")
	r = cli("", "compaction", "show", parsed.DataSchema.DataSource)
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "queryGranularity          "+string(g.SegmentGranularity)+" (re-rollup)")
	r = cli(`{"targetRowsPerSegment": 0.5}`, "compaction", "set", "wiki", "-f", "-")
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, "targetRowsPerSegment")

	r = cli("", "compaction", "stop", "wiki")
	require.Equal(t, ExitOK, r.code, r.stderr)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	require.NoError(t, c.GetWorkflow(ctx, workflows.CompactionWorkflowID("wiki"), "").Get(ctx, nil))

	r = cli("", "compaction", "status", "nosuch")
	assert.Equal(t, ExitNotFound, r.code)
	assert.Contains(t, r.stderr, "compaction/nosuch is not running")
}

// The README's tour sets this config for the example datasource.
func TestExampleCompactionConfigIsValid(t *testing.T) {
	t.Parallel()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	a := &app{}
	cfg, _, err := a.readCompactionConfig(root+"/examples/wiki-compaction.json", "wiki")
	require.NoError(t, err)
	assert.Equal(t, 2*time.Minute, cfg.SkipOffsetFromLatest.D())
}

// A round due in the past is not shown as if it were to come.
func TestDueTextNeverShowsThePastAsFuture(t *testing.T) {
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	require.Equal(t, "-", dueText(time.Time{}, now))
	require.Equal(t, "2026-12-07T10:00:30Z (in 30s)", dueText(now.Add(30*time.Second), now))
	require.Equal(t, "due since 2026-12-07T09:50:00Z (10m0s ago: waiting for the running round's activities)", dueText(now.Add(-10*time.Minute), now))
}
