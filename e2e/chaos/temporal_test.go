package chaos

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTemporalServerKilledAndRestarted SIGKILLs the Temporal dev server
// while the worker reads and publishes, keeps it down a few seconds, and
// starts it again on its persistent database; once (long form: three
// times). The worker must reconnect by itself and every event must be
// published exactly once.
func TestTemporalServerKilledAndRestarted(t *testing.T) {
	t.Parallel()
	srv := newTemporalServer(t)
	e := newEnv(t, envOptions{partitions: 4, temporal: srv.hostPort})
	spec := e.spec(2)
	p := e.producer(107)
	kills := pick(1, 3)
	down := pick(3*time.Second, 10*time.Second)

	w := e.startWorker("a", true)
	require.NoError(t, p.produce(2000, 0))
	run := e.startSupervisor(spec)
	producing := p.background(int64(kills)*6000, 400)
	e.waitPublished(spec, 0, time.Minute)
	for range kills {
		on := startedOn(e.startedActivities(spec), w.identityPrefix())
		srv.kill()
		t.Logf("SIGKILL to the Temporal server for %v while the worker ran %v", down, on)
		e.report.fault(fmt.Sprintf("temporal-sigkill-down-%ds", int(down/time.Second)))
		before := e.publishedSequences(spec)
		time.Sleep(down)
		srv.start()
		e.waitPublished(spec, before, 3*time.Minute) // the worker is back at work
	}
	require.False(t, w.exited(), "the worker exited while the server was away")

	require.NoError(t, <-producing)
	e.waitCaughtUp(spec, 4*time.Minute)
	e.stopAndWait(spec, run, 3*time.Minute)
	e.verify(spec, p.gen.RunID, p.produced())
}
