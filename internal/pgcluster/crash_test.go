package pgcluster

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const helperEnv = "PGCLUSTER_CRASH_HELPER_DIR"

// TestCrashHelper is not a test: TestReuseAfterCrash runs it in a child
// process that starts a cluster and is then killed.
func TestCrashHelper(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		return
	}
	c, err := Start(context.Background(), Options{Dir: dir})
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	if _, err := c.CreateDatabase(context.Background(), "survivor"); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	fmt.Println("READY")
	time.Sleep(time.Minute)
	os.Exit(1)
}

// TestReuseAfterCrash kills the process that started a cluster: the
// postmaster must follow it (Pdeathsig), and the directory must start again
// with its data.
func TestReuseAfterCrash(t *testing.T) {
	dir := tempDir(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "READY" {
		cmd.Process.Kill()
		t.Fatalf("helper: %q", line)
	}
	pid := postmasterPID(t, dir)
	cmd.Process.Kill()
	cmd.Wait()

	deadline := time.Now().Add(10 * time.Second)
	for isPostmasterOf(pid, dataDir(dir)) {
		if time.Now().After(deadline) {
			t.Fatalf("postmaster %d outlived its killed parent", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}

	c := start(t, Options{Dir: dir})
	selectOne(t, c.URL("survivor"))
}

func postmasterPID(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dataDir(dir), "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}
