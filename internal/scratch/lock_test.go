package scratch

import (
	"os"
	"syscall"
)

// lockedByOther reports whether someone else holds f's flock.
func lockedByOther(f *os.File) bool {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return true
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
