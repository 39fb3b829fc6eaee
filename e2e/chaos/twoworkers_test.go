package chaos

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

// TestOneOfTwoWorkersKilledForGood runs two workers on the task queue and
// SIGKILLs one of them while both work; it never comes back. The other
// must take over its activities and workflows, and every event must be
// published exactly once.
func TestOneOfTwoWorkersKilledForGood(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{partitions: 4})
	spec := e.spec(4)
	p := e.producer(102)
	r := newRand(t)

	a := e.startWorker("a", true)
	e.startWorker("b", true)
	require.NoError(t, p.produce(2000, 0))
	run := e.startSupervisor(spec)
	producing := p.background(pick[int64](6000, 30000), 500)
	e.waitPublished(spec, 0, time.Minute)
	time.Sleep(between(r, 0, pick(3*time.Second, 20*time.Second)))
	// Kill a while the server sees it working, so there is work to take over.
	e.waitActivityOn(spec, a, 20*time.Second)
	on := startedOn(e.startedActivities(spec), a.identityPrefix())
	a.signal(os.Kill)
	_, exited := a.waitExit(10 * time.Second)
	require.True(t, exited, "worker a survived SIGKILL")
	t.Logf("SIGKILL worker a for good while it ran %v", on)
	e.report.fault("sigkill-one-of-two")
	e.noteKilled(a)
	e.awaitTakeovers(spec)

	require.NoError(t, <-producing)
	e.waitCaughtUp(spec, 3*time.Minute)
	e.stopAndWait(spec, run, 2*time.Minute)
	e.verify(spec, p.gen.RunID, p.produced())
}

// waitActivityOn waits until the server sees any activity started on the
// worker; after timeout it goes on.
func (e *env) waitActivityOn(spec domain.Spec, w *workerProc, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if len(startedOn(e.startedActivities(spec), w.identityPrefix())) > 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Logf("no activity started on %s within %v", w.name, timeout)
}
