package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// proc is a child process whose output goes to a log file.
type proc struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed once Wait returned and the log is closed
	err     error         // Wait's result, set before done closes
	stopped bool          // we signalled it: how it exits is not a failure
}

// startProc starts bin with args and extra environment, logging to logPath
// (truncated). The child runs in its own process group, so the terminal's
// Ctrl-C reaches only devstack, which then stops children in order; and it
// gets SIGKILL if devstack dies, so a killed devstack leaves nothing behind.
func startProc(name, logPath string, env []string, bin string, args ...string) (*proc, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s log: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = log, log
	// Pdeathsig follows the OS thread that forked; Go keeps its threads
	// unless a goroutine exits while locked to one, which we never do.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() { // ends when the child does; stop waits for it
		p.err = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	return p, nil
}

// exitError describes an exit nobody asked for, with the end of the log.
func (p *proc) exitError() error {
	return fmt.Errorf("%s exited unexpectedly (%v); last lines of %s:\n%s", p.name, p.err, p.logPath, tailFile(p.logPath, 20))
}

// stop sends SIGTERM to the child's group, waits up to grace, then kills
// the group and waits again.
func (p *proc) stop(grace time.Duration) error {
	select {
	case <-p.done:
		if p.err != nil {
			return p.exitError()
		}
		return nil
	default:
	}
	p.stopped = true
	pgid := -p.cmd.Process.Pid
	if err := syscall.Kill(pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %s: %w", p.name, err)
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		return nil
	case <-t.C:
	}
	if err := syscall.Kill(pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %s: %w", p.name, err)
	}
	<-p.done
	return fmt.Errorf("%s did not stop within %v of SIGTERM and was killed", p.name, grace)
}
