package main

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"

	"handoff/activities"
)

// FaultKillAfterCommitEnv is a test-only fault: the probability (0 to 1)
// that the worker SIGKILLs itself right after a publish's transaction
// committed, before the activity answers, so that the server never learns
// the publish succeeded. The fault-injection tests (e2e/chaos) set it;
// unset or 0 in production.
const FaultKillAfterCommitEnv = "HANDOFF_FAULT_KILL_AFTER_COMMIT"

// faultsFromEnv returns the faults the environment asks for; none when
// FaultKillAfterCommitEnv is unset, empty or not a probability.
func faultsFromEnv(log *slog.Logger) activities.Faults {
	s := os.Getenv(FaultKillAfterCommitEnv)
	if s == "" {
		return activities.Faults{}
	}
	p, err := strconv.ParseFloat(s, 64)
	if err != nil || p <= 0 || p > 1 {
		log.Warn("fault injection ignored: want a probability in (0, 1]", "env", FaultKillAfterCommitEnv, "value", s)
		return activities.Faults{}
	}
	log.Warn("fault injection on: this worker kills itself after some publish commits", "env", FaultKillAfterCommitEnv, "probability", p)
	return activities.Faults{AfterPublishCommit: func(sequence string) error {
		if rand.Float64() >= p {
			return nil
		}
		// Written straight to stderr, unbuffered, so the line is there
		// whatever the log handler buffers.
		fmt.Fprintf(os.Stderr, "FAULT kill-after-commit %s\n", sequence)
		if self, err := os.FindProcess(os.Getpid()); err == nil {
			_ = self.Kill() // SIGKILL: no deferred function, no log flush
		}
		select {} // the signal is on its way
	}}
}
