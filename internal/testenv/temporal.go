package testenv

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"handoff/internal/logtail"
)

// TemporalBinEnv names the temporal CLI binary to run as the dev server.
const TemporalBinEnv = "HANDOFF_TEMPORAL_BIN"

// temporalLog keeps the end of the dev server's output.
var temporalLog = logtail.Buffer{Size: 8 << 10}

var tmp struct {
	once     sync.Once
	hostPort string
	server   *testsuite.DevServer
	err      error
}

// Temporal returns the host:port of a Temporal frontend with namespace
// "default": TEMPORAL_ADDRESS if set, else a dev server started once per
// test binary.
func Temporal(t testing.TB) (hostPort string) {
	t.Helper()
	tmp.once.Do(startTemporal)
	if tmp.err != nil {
		t.Fatalf("testenv: temporal: %v", tmp.err)
	}
	return tmp.hostPort
}

// SuggestContinueAsNewAfter is the history length at which the test dev
// server suggests continue-as-new.
const SuggestContinueAsNewAfter = 150

func startTemporal() {
	if addr := os.Getenv("TEMPORAL_ADDRESS"); addr != "" {
		tmp.hostPort = addr
		return
	}
	bin, err := TemporalBinary()
	if err != nil {
		tmp.err = err
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath:  bin,
		LogLevel:      "warn",
		ClientOptions: &client.Options{Logger: log.NewStructuredLogger(quiet)},
		// Kept out of test output; Main prints it when tests fail.
		Stdout: &temporalLog,
		Stderr: &temporalLog,
		// Suggest continue-as-new after a few hundred events instead of
		// thousands, so every end-to-end test crosses that boundary. The
		// search attributes are those of internal/searchattr, spelled out
		// because importing it (and so workflows) here would keep tests
		// inside package workflows from using testenv.
		ExtraArgs: []string{
			"--dynamic-config-value", fmt.Sprintf("limit.historyCount.suggestContinueAsNew=%d", SuggestContinueAsNewAfter),
			"--search-attribute", "Supervisor=Keyword",
			"--search-attribute", "DataSource=Keyword",
			"--search-attribute", "Topic=Keyword",
			"--search-attribute", "SupervisorState=Keyword",
			"--search-attribute", "CompactionState=Keyword",
		},
	})
	if err != nil {
		tmp.err = fmt.Errorf("start dev server %s: %w; output:\n%s", bin, err, &temporalLog)
		return
	}
	tmp.server, tmp.hostPort = s, s.FrontendHostPort()
}

func stopTemporal() error {
	if tmp.server == nil {
		return nil
	}
	tmp.server.Client().Close()
	if err := tmp.server.Stop(); err != nil {
		return fmt.Errorf("temporal dev server: %w", err)
	}
	return nil
}

// TemporalBinary returns the temporal CLI to run: $HANDOFF_TEMPORAL_BIN, or
// .tools/bin/temporal at the repository root, which `make tools` builds.
func TemporalBinary() (string, error) {
	if p := os.Getenv(TemporalBinEnv); p != "" {
		if err := checkExecutable(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w: run `make tools` and unset it, or point it at a temporal CLI", TemporalBinEnv, p, err)
		}
		return p, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	p := filepath.Join(root, ".tools", "bin", "temporal")
	if err := checkExecutable(p); err != nil {
		return "", fmt.Errorf("temporal CLI: %w: run `make tools` in %s (or set %s)", err, root, TemporalBinEnv)
	}
	return p, nil
}

func checkExecutable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return nil
}

// RepoRoot walks up from the working directory (a package directory under
// go test) to the directory holding go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repo root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("find repo root: %w", err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find repo root: no go.mod above the working directory; set " + TemporalBinEnv)
		}
		dir = parent
	}
}
