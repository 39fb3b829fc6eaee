package chaos

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"handoff/internal/testenv"
)

// Binaries TestMain built: the worker and the stand-alone kfake broker.
var workerBin, kfakeBin string

func TestMain(m *testing.M) {
	dir, err := binDir()
	if err == nil {
		workerBin, err = build(dir, "handoff-worker", "./worker")
	}
	if err == nil {
		kfakeBin, err = build(dir, "handoff-kfake", "./e2e/chaos/cmd/kfake")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e/chaos:", err)
		os.Exit(1)
	}
	testenv.Main(m)
}

// build builds pkg (relative to the repository root) into dir/name.
func build(dir, name, pkg string) (string, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name)
	start := time.Now()
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s in %s: %w\n%s", pkg, root, err, out)
	}
	fmt.Fprintf(os.Stderr, "e2e/chaos: built %s in %v\n", bin, time.Since(start).Round(time.Millisecond))
	return bin, nil
}

// binDir is the directory of the test binary when it is go's work
// directory ($WORK/b001), removed by go when the run ends; else a new
// temporary directory, left behind.
func binDir() (string, error) {
	if exe, err := os.Executable(); err == nil {
		dir := filepath.Dir(exe)
		if strings.HasPrefix(filepath.Base(filepath.Dir(dir)), "go-build") {
			return dir, nil
		}
	}
	dir, err := os.MkdirTemp("", "handoff-chaos-test-")
	if err != nil {
		return "", fmt.Errorf("temp dir for binaries: %w", err)
	}
	fmt.Fprintf(os.Stderr, "e2e/chaos: binaries go to %s, which is not removed\n", dir)
	return dir, nil
}
