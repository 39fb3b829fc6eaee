package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// starterEnv points the starter at the dev Temporal and its UI (which the
// starter cannot guess), through the variables a user would set.
func starterEnv() []string {
	return []string{
		"TEMPORAL_ADDRESS=" + hostPort(temporalPort),
		"TEMPORAL_NAMESPACE=" + temporalNS,
		"TEMPORAL_UI_URL=" + temporalUIURL,
	}
}

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
	cmd := exec.CommandContext(ctx, s.l.dev("bin", "starter"), args...)
	cmd.Env = append(os.Environ(), starterEnv()...)
	cmd.Dir = s.l.root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}
