package chaos

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"

	"handoff/e2e/harness"
	"handoff/internal/domain"
)

// startedActivity is an activity the server sees as started on a worker.
type startedActivity = harness.StartedActivity

// startedActivities asks the server which activities of the supervisor and
// its groups are started, and on which worker.
func (e *env) startedActivities(spec domain.Spec) []startedActivity {
	return harness.StartedActivities(context.Background(), e.temporal, spec)
}

// startedOn keeps the activities started on the worker of identity prefix.
func startedOn(acts []startedActivity, prefix string) []startedActivity {
	var out []startedActivity
	for _, a := range acts {
		if strings.HasPrefix(a.Worker, prefix) {
			out = append(out, a)
		}
	}
	return out
}

// killed is a worker the scenario killed, and when.
type killed struct {
	prefix string // its Temporal identity's start (pid@)
	at     time.Time
	done   bool // its attempts were taken over
}

// noteKilled records a killed worker, whose attempts a live worker's lease
// takeover (internal/liveness) must hand to live workers.
func (e *env) noteKilled(w *workerProc) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.killed = append(e.killed, &killed{prefix: w.identityPrefix(), at: time.Now()})
}

// takeoverTimeout bounds the wait for a dead worker's attempts to move:
// generous, so that it cannot flake (the figure is measured by the bench).
const takeoverTimeout = time.Minute

// awaitTakeovers waits until the server sees no activity attempt started
// on any killed worker: a live worker found it dead through its lease and
// failed its attempts by id, which the server then retried elsewhere. It
// needs a worker that lives on (a new one takes leases over once its own
// has settled, five renewals); it logs and reports how long each took from
// the kill.
func (e *env) awaitTakeovers(spec domain.Spec) {
	e.t.Helper()
	e.mu.Lock()
	pending := slices.DeleteFunc(slices.Clone(e.killed), func(k *killed) bool { return k.done })
	e.mu.Unlock()
	began := time.Now()
	for _, k := range pending {
		// A kill with no live worker after it (the only worker killed, the
		// next one not started yet) waits for the next worker: the
		// timeout counts from the wait.
		deadline := began.Add(takeoverTimeout)
		for {
			on := startedOn(e.startedActivities(spec), k.prefix)
			if len(on) == 0 {
				break
			}
			if time.Now().After(deadline) {
				e.t.Fatalf("%v after the kill of %s the server still sees its attempts started: %+v", takeoverTimeout, k.prefix, on)
			}
			time.Sleep(100 * time.Millisecond)
		}
		took := time.Since(k.at)
		k.done = true
		e.t.Logf("attempts of the killed worker %s taken over %v after the kill", k.prefix, took.Round(100*time.Millisecond))
		e.report.takeover(took)
	}
}

func isNotFound(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}
