// Package scratch gives a worker process a private local directory for
// temporary files (a publish's merge passes and segment files, chunks
// fetched from object storage) and removes what dead workers left: each
// process holds an flock on a file in its own directory, and a starting
// process deletes every sibling directory whose lock it can take, since
// the kernel drops a dead process's locks. Two workers on one host share
// the root safely; hosts never share it.
package scratch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

const (
	dirPrefix = "worker-"
	lockName  = ".lock"
)

// Dir is one process's scratch directory, locked while it lives.
type Dir struct {
	path string
	lock *os.File
}

// Open creates root if needed, removes the directories of dead processes
// under it, and makes a locked directory for this one. swept counts the
// directories removed.
func Open(root string) (d *Dir, swept int, err error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, 0, fmt.Errorf("scratch %s: %w", root, err)
	}
	path, err := os.MkdirTemp(root, dirPrefix+"*")
	if err != nil {
		return nil, 0, fmt.Errorf("scratch %s: %w", root, err)
	}
	lock, err := lockIn(path)
	if err != nil {
		_ = os.RemoveAll(path)
		return nil, 0, err
	}
	d = &Dir{path: path, lock: lock}
	swept, err = sweep(root, path)
	if err != nil {
		_ = d.Close()
		return nil, 0, err
	}
	return d, swept, nil
}

// Path is the directory.
func (d *Dir) Path() string { return d.path }

// Close removes the directory and releases its lock.
func (d *Dir) Close() error {
	err := os.RemoveAll(d.path)
	return errors.Join(err, d.lock.Close())
}

func lockIn(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("scratch lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("scratch lock %s: %w", f.Name(), err)
	}
	return f, nil
}

// sweep removes the sibling directories of own whose lock is free: their
// process is gone. A directory without a lock file yet may be a process
// starting: it is left alone.
func sweep(root, own string) (int, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return 0, fmt.Errorf("scratch %s: %w", root, err)
	}
	n := 0
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if !e.IsDir() || !strings.HasPrefix(e.Name(), dirPrefix) || dir == own {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR, 0)
		if err != nil {
			continue // no lock file: starting, or not ours
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			f.Close() // alive
			continue
		}
		err = os.RemoveAll(dir)
		f.Close()
		if err != nil {
			return n, fmt.Errorf("scratch: remove %s: %w", dir, err)
		}
		n++
	}
	return n, nil
}
