package pgcluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clearStale removes the lock files a killed postmaster left behind, so a
// cluster directory reused after a crash still starts. Postgres ignores a
// stale postmaster.pid by itself only while its PID is free; after a reboot
// or container restart the PID often belongs to an unrelated process, and
// postgres then refuses to start.
func clearStale(dir string) error {
	data := dataDir(dir)
	pidFile := filepath.Join(data, "postmaster.pid")
	b, err := os.ReadFile(pidFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read postmaster.pid: %w", err)
	}
	if err == nil {
		pid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
		if err := waitGone(pid, data); err != nil {
			return err
		}
		if err := os.Remove(pidFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove stale postmaster.pid: %w", err)
		}
	}
	socks, _ := filepath.Glob(filepath.Join(dir, ".s.PGSQL.*"))
	for _, s := range socks {
		if err := os.Remove(s); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove stale socket: %w", err)
		}
	}
	return nil
}

// waitGone gives a postmaster of data that is still running a few seconds
// to exit: one whose parent was just killed is shutting down on its
// parent-death signal. A live one that stays is a real conflict.
func waitGone(pid int, data string) error {
	deadline := time.Now().Add(10 * time.Second)
	for isPostmasterOf(pid, data) {
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres (pid %d) is already running in %s: stop it (kill -INT %d) or use another Dir", pid, data, pid)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// isPostmasterOf reports whether pid is a live postgres process serving
// data: postgres processes chdir into their data directory, so the PID is
// ours exactly when its working directory is data.
func isPostmasterOf(pid int, data string) bool {
	if pid <= 0 {
		return false
	}
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	if err != nil {
		return false // gone, a zombie, or another user's process
	}
	want, err := filepath.EvalSymlinks(data)
	if err != nil {
		want = data
	}
	return cwd == want
}
