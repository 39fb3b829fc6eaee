package main

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"

	"handoff/activities"
)

// Test-only faults: each is the probability (0 to 1) that the worker
// SIGKILLs itself at one moment of an activity, so that the server never
// learns how far it got. The fault-injection tests (e2e/chaos) set them;
// unset or 0 in production.
const (
	// FaultKillAfterCommitEnv: right after a publish's transaction
	// committed, before the activity answers.
	FaultKillAfterCommitEnv = "HANDOFF_FAULT_KILL_AFTER_COMMIT"
	// FaultKillBeforeCompactionCommitEnv: after a compaction wrote its
	// segments, before its transaction.
	FaultKillBeforeCompactionCommitEnv = "HANDOFF_FAULT_KILL_BEFORE_COMPACTION_COMMIT"
	// FaultKillAfterCompactionCommitEnv: right after a compaction's
	// transaction committed, before the activity answers.
	FaultKillAfterCompactionCommitEnv = "HANDOFF_FAULT_KILL_AFTER_COMPACTION_COMMIT"
)

// faultsFromEnv returns the faults the environment asks for; none for a
// variable unset, empty or not a probability.
func faultsFromEnv(log *slog.Logger) activities.Faults {
	return activities.Faults{
		AfterPublishCommit: killHook(log, FaultKillAfterCommitEnv, os.Getenv(FaultKillAfterCommitEnv), "kill-after-commit"),
		BeforeCompactionCommit: killHook(log, FaultKillBeforeCompactionCommitEnv,
			os.Getenv(FaultKillBeforeCompactionCommitEnv), "kill-before-compaction-commit"),
		AfterCompactionCommit: killHook(log, FaultKillAfterCompactionCommitEnv,
			os.Getenv(FaultKillAfterCompactionCommitEnv), "kill-after-compaction-commit"),
	}
}

// killHook is a fault hook that SIGKILLs the process with the probability
// s (the value of variable env), after writing "FAULT <what> <name>" to
// stderr; nil when s asks for nothing.
func killHook(log *slog.Logger, env, s, what string) func(name string) error {
	if s == "" {
		return nil
	}
	p, err := strconv.ParseFloat(s, 64)
	if err != nil || p <= 0 || p > 1 {
		log.Warn("fault injection ignored: want a probability in (0, 1]", "env", env, "value", s)
		return nil
	}
	log.Warn("fault injection on: this worker kills itself", "env", env, "fault", what, "probability", p)
	return func(name string) error {
		if rand.Float64() >= p {
			return nil
		}
		// Written straight to stderr, unbuffered, so the line is there
		// whatever the log handler buffers.
		fmt.Fprintf(os.Stderr, "FAULT %s %s\n", what, name)
		if self, err := os.FindProcess(os.Getpid()); err == nil {
			_ = self.Kill() // SIGKILL: no deferred function, no log flush
		}
		select {} // the signal is on its way
	}
}
