package pgcluster

import (
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func itoa(n int) string { return strconv.Itoa(n) }

type syncWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// sleeper starts a long sleep as the user postgres runs as and returns its
// PID.
func sleeper(t *testing.T) int {
	t.Helper()
	run, err := currentRunAs()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "600")
	cmd.SysProcAttr = run.sysProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd.Process.Pid
}
