package process

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"handoff/e2e/harness"
	"handoff/internal/logtail"
)

// maxLogPrint bounds how much of a worker's log a failing test prints.
const maxLogPrint = 256 << 10

// workerProc is one run of the worker binary (or of another of ours: the
// catalog server).
type workerProc struct {
	t       *testing.T
	kind    string // worker, catalog
	name    string
	cmd     *exec.Cmd
	port    int
	logPath string
	started time.Time

	done  chan struct{} // closed when the process has exited
	state *os.ProcessState
	err   error // from Wait
}

// startWorker runs the worker binary with the env's settings and waits until
// it answers /readyz. extraEnv (NAME=value) comes last and so wins.
func (e *env) startWorker(name string, extraEnv ...string) *workerProc {
	e.t.Helper()
	port := freePort(e.t)
	env := harness.Worker{DatabaseURL: e.dbURL, TemporalAddress: e.hostPort, Namespace: e.ns, Brokers: e.brokers,
		DeepStorage: e.deepDir, StagingDir: e.stagingDir, HTTPPort: port}.Env(extraEnv...)
	return e.startProcess("worker", name, port, env, workerBin)
}

// startProcess runs bin (a kind of process, for messages) with args and the env's environment plus env,
// logging to the test's log directory, and waits until it answers
// /readyz on port; the test's end stops it with SIGTERM and checks it
// exits 0.
func (e *env) startProcess(kind, name string, port int, env []string, bin string, args ...string) *workerProc {
	e.t.Helper()
	logPath := filepath.Join(e.logDir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		e.t.Fatalf("%s %s log: %v", kind, name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = e.workDir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	setProcAttr(cmd)
	w := &workerProc{t: e.t, kind: kind, name: name, cmd: cmd, port: port, logPath: logPath, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		e.t.Fatalf("start %s %s: %v", kind, name, err)
	}
	w.started = time.Now()
	go func() {
		w.err = cmd.Wait()
		w.state = cmd.ProcessState
		logFile.Close()
		close(w.done)
	}()
	e.t.Cleanup(func() {
		if !w.exited() && !e.t.Failed() {
			// A clean end: stop it as an operator would, and say how it went.
			_ = w.cmd.Process.Signal(syscall.SIGTERM)
			if code, ok := w.waitExit(30 * time.Second); !ok || code != 0 {
				e.t.Errorf("%s: after SIGTERM at the end of the test: exited %v, code %d", w.label(), ok, code)
			}
		}
		if !w.exited() {
			_ = w.cmd.Process.Kill()
			select {
			case <-w.done:
			case <-time.After(10 * time.Second):
				e.t.Logf("%s (pid %d) did not exit 10s after SIGKILL", w.label(), w.cmd.Process.Pid)
			}
		}
		w.summarize()
		if e.t.Failed() || os.Getenv("HANDOFF_PROCESS_LOGS") != "" {
			e.t.Logf("%s log (%s):\n%s", w.label(), w.logPath, w.logTail(maxLogPrint))
		}
	})
	w.waitReady(60 * time.Second)
	e.t.Logf("%s %s (pid %d) ready on port %d after %v", kind, name, cmd.Process.Pid, port, time.Since(w.started).Round(time.Millisecond))
	return w
}

// label names the process in messages: "worker a", "catalog catalog".
func (w *workerProc) label() string { return w.kind + " " + w.name }

func (w *workerProc) url(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", w.port, path)
}

func (w *workerProc) exited() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// waitReady polls /readyz until it answers 200; the worker exiting first,
// or the timeout, fails the test with its log.
func (w *workerProc) waitReady(timeout time.Duration) {
	w.t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		if w.exited() {
			w.t.Fatalf("%s exited before it was ready: %v\n%s", w.label(), w.err, w.logTail(maxLogPrint))
		}
		code, body, err := httpGet(w.url("/readyz"))
		if err == nil && code == http.StatusOK {
			return
		}
		if err != nil {
			last = err.Error()
		} else {
			last = fmt.Sprintf("%d %s", code, strings.TrimSpace(body))
		}
		time.Sleep(100 * time.Millisecond)
	}
	w.t.Fatalf("%s not ready after %v (last: %s)\n%s", w.label(), timeout, last, w.logTail(maxLogPrint))
}

func (w *workerProc) signal(sig os.Signal) {
	w.t.Helper()
	if err := w.cmd.Process.Signal(sig); err != nil {
		w.t.Fatalf("signal %v to %s: %v", sig, w.label(), err)
	}
}

// waitExit waits for the process to exit and returns its exit code (-1 when
// a signal ended it) and whether it exited within timeout.
func (w *workerProc) waitExit(timeout time.Duration) (code int, ok bool) {
	select {
	case <-w.done:
		return w.state.ExitCode(), true
	case <-time.After(timeout):
		return 0, false
	}
}

// logTail returns the last max bytes of the worker's log.
func (w *workerProc) logTail(max int64) string { return logtail.File(w.logPath, max) }

// logLines returns the log's lines that contain every one of words.
func (w *workerProc) logLines(words ...string) []string {
	b, err := os.ReadFile(w.logPath)
	if err != nil {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
lines:
	for sc.Scan() {
		for _, word := range words {
			if !strings.Contains(sc.Text(), word) {
				continue lines
			}
		}
		out = append(out, sc.Text())
	}
	return out
}

// summarize logs how the worker ended and how many warnings and errors it
// logged, with the first few errors.
func (w *workerProc) summarize() {
	errs := w.logLines("level=ERROR")
	warns := w.logLines("level=WARN")
	how := "still running"
	if w.exited() {
		how = w.state.String()
	}
	w.t.Logf("%s: %s after %v; logged %d errors, %d warnings", w.label(), how,
		time.Since(w.started).Round(time.Millisecond), len(errs), len(warns))
	for _, l := range errs[:min(len(errs), 5)] {
		w.t.Logf("  %s: %s", w.name, cut(l, 600))
	}
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// freePort asks the kernel for a free port on 127.0.0.1 and lets it go for
// the worker to take: HANDOFF_HTTP_ADDR=127.0.0.1:0 would not tell us which.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func httpGet(url string) (code int, body string, err error) {
	code, _, body, err = httpGetType(url)
	return code, body, err
}

// httpGetType also returns the answer's Content-Type.
func httpGetType(url string) (code int, contentType, body string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b), err
}
