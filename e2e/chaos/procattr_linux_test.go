package chaos

import (
	"os/exec"
	"syscall"
)

// setProcAttr has the kernel kill a child process if the test binary dies
// without running its cleanups.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
