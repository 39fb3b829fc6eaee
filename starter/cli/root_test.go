package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"handoff/internal/testenv"
)

func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"bogus"},
		{"validate"},                       // -f is required
		{"validate", "-f", "x", "extra"},   // no positional args
		{"status"},                         // needs an id
		{"status", "a", "b"},               //
		{"status", "orders", "-o", "yaml"}, // bad --output
		{"checkpoint", "orders", "--group", "x"},
		{"checkpoint", "orders", "--group", "-1"},
		{"migrate"},
		{"migrate", "down"},
		{"migrate", "up"}, // no database URL
		{"start", "--nope"},
		{"history", "orders"}, // no database URL
		{"history", "orders", "--database-url", "postgres://x:1:2:3/"},
		{"list", "extra"},
		{"suspend"},
		{"resume", "a", "b"},
		{"reset", "orders"},
		{"update"},
		{"stop", "orders", "--now", "--wait"},
		{"status", "orders", "--interval", "1s"},
		{"start", "-f", "testdata/spec.json", "--timeout", "1m"}, // --timeout needs --wait
		{"start", "-f", "testdata/spec.json", "--wait", "--timeout", "0s"},
		{"start", "-f", "testdata/spec.json", "--wait", "--timeout", "soon"},
		{"produce"},                 // --topic is required
		{"produce", "--topic", "t"}, // neither -f nor --generate
		{"produce", "--topic", "", "--generate", "1"}, // empty topic
		{"produce", "--topic", "t", "-f", "x.jsonl", "--generate", "3"},
		{"produce", "--topic", "t", "--generate", "0"},
		{"produce", "--topic", "t", "--generate", "x"},
		{"produce", "--topic", "t", "--generate", "3", "--rate", "-1"},
		{"produce", "--topic", "t", "--generate", "3", "--rate", "NaN"},
		{"produce", "--topic", "t", "--generate", "3", "--partitions", "0"},
		{"produce", "--topic", "t", "-f", "x.jsonl", "--run-id", "r1"},
		{"produce", "--topic", "t", "--generate", "3", "--allow-invalid"},
		{"produce", "--topic", "t", "--generate", "3", "--brokers", ","},
		{"produce", "--topic", "t", "--generate", "3", "extra"},
		{"completion"},
		{"completion", "tcsh"},
		{"completion", "bash", "extra"},
	} {
		r := runCLI(t, runOpts{}, args...)
		assert.Equal(t, ExitUsage, r.code, "starter %v: stderr %s", args, r.stderr)
		assert.Contains(t, r.stderr, "--help", "starter %v", args)
		assert.Empty(t, r.stdout, "starter %v", args)
	}
}

func TestHelpHasExamples(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"start", "update", "validate", "list", "status", "history", "checkpoint", "suspend", "resume", "reset", "stop", "migrate", "migrate up", "migrate status", "produce", "completion"} {
		args := append(strings.Fields(cmd), "--help")
		r := runCLI(t, runOpts{}, args...)
		require.Equal(t, ExitOK, r.code, cmd)
		assert.Contains(t, r.stdout, "Examples:", cmd)
		assert.Contains(t, r.stdout, "starter "+cmd, cmd)
	}
	r := runCLI(t, runOpts{}, "--help")
	assert.Contains(t, r.stdout, "TEMPORAL_ADDRESS")
}

func TestTemporalFlagsFallBackToEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{"TEMPORAL_ADDRESS": "env-host:7233", "TEMPORAL_NAMESPACE": "env-ns"}
	tests := []struct {
		name             string
		env              map[string]string
		args             []string
		wantAddr, wantNS string
	}{
		{"defaults", nil, nil, "localhost:7233", "default"},
		{"env", env, nil, "env-host:7233", "env-ns"},
		{"flags beat env", env, []string{"--address", "flag-host:1", "--namespace", "flag-ns"}, "flag-host:1", "flag-ns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got client.Options
			dial := func(_ context.Context, o client.Options) (client.Client, error) {
				got = o
				return nil, errors.New("refused")
			}
			r := runCLI(t, runOpts{env: tt.env, dial: dial}, append([]string{"status", "orders"}, tt.args...)...)
			assert.Equal(t, ExitFailure, r.code)
			assert.Equal(t, tt.wantAddr, got.HostPort)
			assert.Equal(t, tt.wantNS, got.Namespace)
			assert.NotNil(t, got.Logger, "the SDK logs through our quiet slog logger")
			assert.Contains(t, r.stderr, "cannot reach Temporal at "+tt.wantAddr)
		})
	}
}

func TestUIURLFallsBackToEnv(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{}
	r := runCLI(t, runOpts{env: map[string]string{"TEMPORAL_UI_URL": "https://ui.example/", "TEMPORAL_NAMESPACE": "ns 1"}, dial: dialTo(fc, nil)},
		"start", "-f", "testdata/spec.json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "https://ui.example/namespaces/ns%201/workflows/supervisor%2Forders\n")
}

// Where the UI is cannot be told from TEMPORAL_ADDRESS: without --ui-url
// or TEMPORAL_UI_URL start prints no link rather than a guess.
func TestStartPrintsNoUILinkItWasNotGiven(t *testing.T) {
	t.Parallel()
	env := map[string]string{"TEMPORAL_ADDRESS": "127.0.0.1:17233"}
	r := runCLI(t, runOpts{env: env, dial: dialTo(&fakeClient{}, nil)}, "start", "-f", "testdata/spec.json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, "started supervisor orders\n  workflow  supervisor/orders\n  run       run-1\n", r.stdout)

	r = runCLI(t, runOpts{env: env, dial: dialTo(&fakeClient{}, nil)}, "start", "-f", "testdata/spec.json", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.NotContains(t, r.stdout, `"url"`)

	r = runCLI(t, runOpts{env: env, dial: dialTo(&fakeClient{}, nil)}, "start", "-f", "testdata/spec.json", "--ui-url", "http://127.0.0.1:18233")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "  ui        http://127.0.0.1:18233/namespaces/default/workflows/supervisor%2Forders\n")
}

func TestUnreachableTemporalNamesAddress(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := Run(t.Context(), []string{"status", "orders", "--address", "127.0.0.1:1"}, IO{Stdout: &stdout, Stderr: &stderr})
	assert.Equal(t, ExitFailure, code)
	assert.Contains(t, stderr.String(), "127.0.0.1:1")
	assert.Less(t, time.Since(start), dialTimeout+5*time.Second)
	assert.Empty(t, stdout.String())
}

func TestMigrateNeverDialsTemporal(t *testing.T) {
	t.Parallel()
	// The default test dial fails the test if called.
	r := runCLI(t, runOpts{env: map[string]string{"DATABASE_URL": "postgres://u:secret@127.0.0.1:1/db?connect_timeout=1"}}, "migrate", "status")
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, "cannot reach Postgres")
	assert.NotContains(t, r.stderr, "secret", "the password is not printed")
}

// TestREADMEListsEveryCommandWithItsFlags keeps the README's CLI table in
// step with the commands.
func TestREADMEListsEveryCommandWithItsFlags(t *testing.T) {
	t.Parallel()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(readme), "| command | what it does |\n")
	require.True(t, ok, "README.md has no CLI table")
	table, _, _ = strings.Cut(table, "\n\n")
	rows := strings.Split(table, "\n")

	a := &app{}
	for _, cmd := range a.rootCommand().Commands() {
		if cmd.Hidden || cmd.Name() == "help" {
			continue
		}
		var row string
		for _, r := range rows {
			if strings.Contains(r, "`"+cmd.Name()+" ") || strings.Contains(r, "`"+cmd.Name()+"`") {
				row = r
				break
			}
		}
		if !assert.NotEmpty(t, row, "README's CLI table has no row for %s", cmd.Name()) {
			continue
		}
		cmd.NonInheritedFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" {
				return
			}
			mentioned := strings.Contains(row, "--"+f.Name) || (f.Shorthand != "" && strings.Contains(row, "-"+f.Shorthand+" "))
			assert.True(t, mentioned, "README's row for %s does not mention --%s", cmd.Name(), f.Name)
		})
	}
}
