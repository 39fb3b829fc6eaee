package chaos

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"handoff/internal/logtail"
)

// maxLogPrint bounds how much of a process's log a failing test prints.
const maxLogPrint = 128 << 10

// proc is one run of a child process (worker, kfake, temporal) whose
// output goes to a log file.
type proc struct {
	t       *testing.T
	name    string
	cmd     *exec.Cmd
	logPath string

	done  chan struct{} // closed when the process has exited
	state *os.ProcessState
}

// startProc starts bin with args and env (appended to this process's
// environment) and logs its output to logDir/name.log. The process is
// killed when the test ends, and its log printed if the test failed.
func startProc(t *testing.T, logDir, name, bin string, args, env []string) *proc {
	t.Helper()
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("log of %s: %v", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	setProcAttr(cmd)
	p := &proc{t: t, name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		_ = cmd.Wait()
		p.state = cmd.ProcessState
		logFile.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() || os.Getenv("HANDOFF_CHAOS_LOGS") != "" {
			t.Logf("%s log (%s):\n%s", p.name, p.logPath, p.logTail(maxLogPrint))
		}
	})
	return p
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *proc) signal(sig os.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signal %v to %s: %v", sig, p.name, err)
	}
}

// kill SIGKILLs the process (SIGCONT first, in case it is stopped) and
// waits for it to exit.
func (p *proc) kill() {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	_ = p.cmd.Process.Kill()
	if _, ok := p.waitExit(10 * time.Second); !ok {
		p.t.Logf("%s (pid %d) did not exit 10s after SIGKILL", p.name, p.pid())
	}
}

// waitExit waits for the process to exit and returns its exit code (-1 when
// a signal ended it) and whether it exited within timeout.
func (p *proc) waitExit(timeout time.Duration) (code int, ok bool) {
	select {
	case <-p.done:
		return p.state.ExitCode(), true
	case <-time.After(timeout):
		return 0, false
	}
}

// logTail returns the last max bytes of the process's log.
func (p *proc) logTail(max int64) string { return logtail.File(p.logPath, max) }
