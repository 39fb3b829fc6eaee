package scratch

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A live process's directory survives another's start; a dead one's (its
// lock released) is removed with everything in it; Close removes its own.
func TestSweepsOnlyTheDead(t *testing.T) {
	root := t.TempDir()
	alive, swept, err := Open(root)
	require.NoError(t, err)
	require.Zero(t, swept)
	dead, _, err := Open(root)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dead.Path(), ".publish-1"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dead.Path(), ".publish-1", "segment.parquet"), []byte("x"), 0o644))
	require.NoError(t, dead.lock.Close()) // as the kernel does when the process dies

	third, swept, err := Open(root)
	require.NoError(t, err)
	require.Equal(t, 1, swept)
	require.DirExists(t, alive.Path())
	require.DirExists(t, third.Path())
	require.NoDirExists(t, dead.Path())

	require.NoError(t, alive.Close())
	require.NoError(t, third.Close())
	left, err := os.ReadDir(root)
	require.NoError(t, err)
	require.Empty(t, left)
}

// The lock is the kernel's: a directory locked by another process (flock
// held by a child) is not swept.
func TestLockHeldByAnotherProcessIsRespected(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock(1)")
	}
	root := t.TempDir()
	other := filepath.Join(root, dirPrefix+"other")
	require.NoError(t, os.MkdirAll(other, 0o755))
	lockPath := filepath.Join(other, lockName)
	require.NoError(t, os.WriteFile(lockPath, nil, 0o644))
	// -o: flock itself holds the lock, not the sleep it runs.
	holder := exec.Command("flock", "-o", lockPath, "sleep", "30")
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, holder.Start())
	t.Cleanup(func() { _ = syscall.Kill(-holder.Process.Pid, syscall.SIGKILL); _ = holder.Wait() })
	// Wait until the child holds the lock.
	require.Eventually(t, func() bool {
		f, err := os.OpenFile(lockPath, os.O_RDWR, 0)
		if err != nil {
			return false
		}
		defer f.Close()
		return lockedByOther(f)
	}, 5*time.Second, 10*time.Millisecond)

	d, swept, err := Open(root)
	require.NoError(t, err)
	require.Zero(t, swept)
	require.DirExists(t, other)
	require.NoError(t, d.Close())

	require.NoError(t, holder.Process.Kill()) // the lock's holder dies
	_ = holder.Wait()
	// flock forked sleep before it died; the child shares the lock's open
	// file until it closes it (-o) on its way to exec, which a loaded
	// machine may not have run yet.
	require.Eventually(t, func() bool {
		f, err := os.OpenFile(lockPath, os.O_RDWR, 0)
		if err != nil {
			return false
		}
		defer f.Close()
		return !lockedByOther(f)
	}, 5*time.Second, 10*time.Millisecond)
	d, swept, err = Open(root)
	require.NoError(t, err)
	require.Equal(t, 1, swept, "the holder is dead: its directory goes")
	require.NoError(t, d.Close())
}
