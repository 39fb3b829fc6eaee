package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// starterFailure is the starter's exit code for "ran and failed", which a
// frontend still warming up can cause; other codes are final.
const starterFailure = 1

// startSupervisor runs `starter start -f SPEC`, retrying for a while: the
// frontend accepts connections slightly before it serves requests. Start is
// idempotent, so a retry after a lost reply is harmless.
func (s *stack) startSupervisor(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := s.starter(ctx, "start", "-f", s.cfg.spec)
		var exit *exec.ExitError
		if err == nil || !errors.As(err, &exit) || exit.ExitCode() != starterFailure || time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("starter start: %w\n%s", err, out)
			}
			for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
				s.logf("[starter] %s", line)
			}
			return nil
		}
		t := time.NewTimer(time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// starter runs the starter CLI against the dev Temporal and returns its
// combined output.
func (s *stack) starter(ctx context.Context, args ...string) (string, error) {
	args = append(args, "--address", hostPort(temporalPort), "--namespace", temporalNS)
	cmd := exec.CommandContext(ctx, s.l.dev("bin", "starter"), args...)
	cmd.Dir = s.l.root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}
