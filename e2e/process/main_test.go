package process

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

// workerBin and starterBin are the binaries TestMain built.
var workerBin, starterBin string

func TestMain(m *testing.M) {
	var err error
	workerBin, err = build("worker")
	if err == nil {
		starterBin, err = build("starter")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e/process:", err)
		os.Exit(1)
	}
	testenv.Main(m)
}

// build builds ./<pkg> from the repository root. Under `go test` the
// binary goes next to the test binary, in go's work directory, which go
// removes when the run ends (testenv.Main exits the process, so a directory
// of our own could not be removed after the tests).
func build(pkg string) (string, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return "", err
	}
	dir, err := binDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "handoff-"+pkg)
	start := time.Now()
	cmd := exec.Command("go", "build", "-o", bin, "./"+pkg)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./%s in %s: %w\n%s", pkg, root, err, out)
	}
	fmt.Fprintf(os.Stderr, "e2e/process: built %s in %v\n", bin, time.Since(start).Round(time.Millisecond))
	return bin, nil
}

// binDir is the directory of the test binary when it is go's work
// directory ($WORK/b001), else a new temporary directory, left behind.
func binDir() (string, error) {
	if exe, err := os.Executable(); err == nil {
		dir := filepath.Dir(exe)
		if strings.HasPrefix(filepath.Base(filepath.Dir(dir)), "go-build") {
			return dir, nil
		}
	}
	dir, err := os.MkdirTemp("", "handoff-process-test-")
	if err != nil {
		return "", fmt.Errorf("temp dir for the worker binary: %w", err)
	}
	fmt.Fprintf(os.Stderr, "e2e/process: the worker binary goes to %s, which is not removed\n", dir)
	return dir, nil
}
