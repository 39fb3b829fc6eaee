package process

import (
	"os/exec"
	"syscall"
)

// setProcAttr has the kernel kill the worker if the test binary dies
// without running its cleanups.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
