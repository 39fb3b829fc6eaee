package chaos

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// selfKill is a fault hook of the worker (worker/faults.go) that makes it
// SIGKILL itself at one moment: env turns it on, hook is the name its
// "FAULT" line on stderr gives, kind the name the report gives.
type selfKill struct{ env, hook, kind string }

var (
	// killAfterCommit: after some of its publish commits (half of them).
	killAfterCommit = selfKill{"HANDOFF_FAULT_KILL_AFTER_COMMIT=0.5", "kill-after-commit", "kill-after-publish-commit"}
	// killBeforeCompactionCommit: when its first compaction has written
	// its segments, before the transaction.
	killBeforeCompactionCommit = selfKill{"HANDOFF_FAULT_KILL_BEFORE_COMPACTION_COMMIT=1", "kill-before-compaction-commit", "kill-before-compaction-commit"}
	// killAfterCompactionCommit: right after its first compaction
	// committed, before the activity answers.
	killAfterCompactionCommit = selfKill{"HANDOFF_FAULT_KILL_AFTER_COMPACTION_COMMIT=1", "kill-after-compaction-commit", "kill-after-compaction-commit"}
)

// TestWorkerSIGKILLedAtRandomMoments kills the only worker again and again
// while events are produced: at a random moment, while a publish runs, or
// (by the worker's own fault hook) right after a publish committed and
// before the activity answered. A new worker takes over each time. Every
// event must be published exactly once.
func TestWorkerSIGKILLedAtRandomMoments(t *testing.T) {
	t.Parallel()
	kills := pick(3, 12)
	e := newEnv(t, envOptions{partitions: 4})
	spec := e.spec(2)
	p := e.producer(101)
	r := newRand(t)

	require.NoError(t, p.produce(2000, 0))
	run := e.startSupervisor(spec)
	// Events keep coming until the last kill, so there is always
	// something to read and publish.
	stopProducing := p.until(250)
	for i := range kills {
		switch i % 3 {
		case 0:
			w := e.startWorker(fmt.Sprint(i), true)
			time.Sleep(between(r, time.Second, 4*time.Second)) // the random moment
			e.sigkill(spec, w)
		case 1:
			w := e.startWorker(fmt.Sprint(i), true, killAfterCommit.env)
			e.waitSelfKill(spec, w, killAfterCommit, 60*time.Second)
		case 2:
			w := e.startWorker(fmt.Sprint(i), true)
			e.waitActivity(spec, w, protocol.ActivityPublish, 20*time.Second)
			e.sigkill(spec, w)
		}
	}
	e.startWorker("last", true)
	e.awaitTakeovers(spec)
	require.NoError(t, stopProducing())
	e.waitCaughtUp(spec, 3*time.Minute)
	e.stopAndWait(spec, run, 2*time.Minute)
	require.GreaterOrEqual(t, e.report.faultCount(), kills)
	e.verify(spec, p.gen.RunID, p.produced())
}

// sigkill kills the worker and records the fault ("sigkill-during-publish"
// or "sigkill-during-compaction" when the server saw a publish or a
// compaction started on it just before, else "sigkill"); a live worker
// takes its attempts over (awaitTakeovers checks it).
func (e *env) sigkill(spec domain.Spec, w *workerProc) {
	e.t.Helper()
	on := startedOn(e.startedActivities(spec), w.identityPrefix())
	w.signal(os.Kill)
	_, exited := w.waitExit(10 * time.Second)
	require.True(e.t, exited, "%s survived SIGKILL", w.name)
	kind := "sigkill"
	for _, a := range on {
		switch a.Type {
		case protocol.ActivityPublish:
			kind = "sigkill-during-publish"
		case protocol.ActivityCompactInterval:
			kind = "sigkill-during-compaction"
		}
	}
	e.t.Logf("SIGKILL %s while it ran %v", w.name, on)
	e.report.fault(kind)
	e.noteKilled(w)
}

// waitSelfKill waits for a worker started with fault's env to kill itself,
// and checks it did so by that hook; a live worker takes its attempts over.
func (e *env) waitSelfKill(spec domain.Spec, w *workerProc, fault selfKill, timeout time.Duration) {
	e.t.Helper()
	_, exited := w.waitExit(timeout)
	require.True(e.t, exited, "%s did not kill itself (%s) within %v", w.name, fault.hook, timeout)
	log := w.logTail(maxLogPrint)
	mark := "FAULT " + fault.hook + " "
	require.Contains(e.t, log, mark, "%s exited, but not by its fault hook %s", w.name, fault.hook)
	line := log[strings.LastIndex(log, mark):]
	e.t.Logf("%s killed itself: %s", w.name, strings.TrimSpace(strings.SplitN(line, "\n", 2)[0]))
	e.report.fault(fault.kind)
	e.noteKilled(w)
}

// waitActivity waits until the server sees an activity of type started on
// the worker; after timeout it goes on (the kill is then a random one).
func (e *env) waitActivity(spec domain.Spec, w *workerProc, typ string, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, a := range startedOn(e.startedActivities(spec), w.identityPrefix()) {
			if a.Type == typ {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Logf("no %s started on %s within %v", typ, w.name, timeout)
}
