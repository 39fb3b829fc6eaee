package chaos

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"handoff/e2e/harness"
)

// workerProc is one run of the worker binary.
type workerProc struct {
	*proc
	port int
}

// startWorker runs the worker binary with the env's settings and, with
// ready, waits until it answers /readyz. extraEnv (NAME=value) comes last
// and so wins.
func (e *env) startWorker(name string, ready bool, extraEnv ...string) *workerProc {
	e.t.Helper()
	port := freePort(e.t)
	env := harness.Worker{DatabaseURL: e.workerDB, TemporalAddress: e.hostPort, Namespace: e.ns, Brokers: e.brokers,
		DeepStorage: e.deepDir, StagingDir: e.stagingDir, HTTPPort: port}.Env(extraEnv...)
	w := &workerProc{proc: startProc(e.t, e.logDir, "worker-"+name, workerBin, nil, env), port: port}
	e.t.Cleanup(func() {
		// A clean end: stop it as an operator would.
		if !w.exited() && !e.t.Failed() {
			_ = w.cmd.Process.Signal(syscall.SIGTERM)
			if code, ok := w.waitExit(30 * time.Second); !ok || code != 0 {
				e.t.Errorf("%s: after SIGTERM at the end of the test: exited %v, code %d", w.name, ok, code)
			}
		}
	})
	if ready {
		w.waitReady(60 * time.Second)
	}
	return w
}

func (w *workerProc) url(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", w.port, path)
}

// waitReady polls /readyz until it answers 200; the worker exiting first,
// or the timeout, fails the test.
func (w *workerProc) waitReady(timeout time.Duration) {
	w.t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		if w.exited() {
			w.t.Fatalf("%s exited before it was ready: %v\n%s", w.name, w.state, w.logTail(maxLogPrint))
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
	w.t.Fatalf("%s not ready after %v (last: %s)", w.name, timeout, last)
}

// identityPrefix starts the Temporal worker identity of this process
// (pid@host@...).
func (w *workerProc) identityPrefix() string { return strconv.Itoa(w.pid()) + "@" }

func freePort(t interface{ Fatalf(string, ...any) }) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func httpGet(url string) (code int, body string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}
