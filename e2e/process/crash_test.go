package process

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/eventgen"
	"handoff/internal/protocol"
	"handoff/workflows"
)

// Events of the crash tests: a first batch before the supervisor starts,
// one produced while the worker goes down, and the rest after a new worker
// took over.
const (
	crashFirst  = 8000
	crashDuring = 6000
	crashRest   = 6000
	crashTotal  = crashFirst + crashDuring + crashRest
	// crashRate is events/s of the batch produced while the worker goes
	// down: it lasts about two seconds.
	crashRate = 3000
)

// TestSIGTERMMidIngestionLosesNothing stops the worker with SIGTERM while
// it ingests: it must exit 0 within the grace period, and a new worker must
// go on so that every event is published exactly once.
func TestSIGTERMMidIngestionLosesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 4)
	spec := e.spec(2)
	gen := eventgen.New(e.name, 21)

	a := e.startWorker("a")
	require.NoError(t, e.produce(gen, crashFirst, 0))
	run := e.startSupervisor(spec)
	published := e.checkpointUntilPublished(spec, 0, 60*time.Second)

	producing := e.produceInBackground(gen, crashDuring, crashRate)
	time.Sleep(500 * time.Millisecond)
	e.signal(spec, workflows.SignalCheckpoint, workflows.CheckpointSignal{}) // a publish in flight too
	running := e.waitActivitiesOn(spec, a, "", 10*time.Second)
	require.NotEmpty(t, running, "no activity ran on worker a to interrupt")
	sentAt := time.Now()
	a.signal(syscall.SIGTERM)
	t.Logf("SIGTERM to worker a with %d sequences published, while it ran %v", e.publishedSequences(spec), running)
	code, exited := a.waitExit(30 * time.Second)
	require.True(t, exited, "worker a did not exit within 30s of SIGTERM (HANDOFF_SHUTDOWN_GRACE=20s)")
	t.Logf("worker a exited with code %d %v after SIGTERM", code, time.Since(sentAt).Round(time.Millisecond))
	require.Equal(t, 0, code, "a graceful stop exits 0")
	// Within the grace, running activities finish (or fail) and say so: an
	// activity left started on the server would wait for its heartbeat
	// timeout (a minute or two) before another worker retried it.
	orphans := a.filter(e.runningActivities(spec))
	require.Empty(t, orphans, "after its graceful stop, the server still sees activities started on worker a")

	b := e.startWorker("b")
	require.NoError(t, <-producing)
	require.NoError(t, e.produce(gen, crashRest, 0))
	e.waitCaughtUp(spec, 3*time.Minute)
	t.Logf("caught up %v after SIGTERM", time.Since(sentAt).Round(time.Millisecond))
	e.stopAndWait(spec, run, 2*time.Minute)
	t.Logf("supervisor completed %v after SIGTERM", time.Since(sentAt).Round(time.Millisecond))

	require.Greater(t, e.publishedSequences(spec), published)
	e.requireExactlyOnce(spec, gen.RunID, crashTotal)
	if b.exited() {
		t.Fatalf("worker b exited: %v", b.state)
	}
}

// TestSIGKILLMidIngestionLosesNothing kills the worker while activities
// run. Temporal retries the killed worker's activities only once their
// heartbeat (consume 1 min, publish 2 min) or start-to-close timeouts
// expire, so recovery may take minutes; it must take less than four. The
// Iceberg REST catalog server (starter catalog serve) serves the table
// throughout, and at the end an independent client, iceberg-go's REST
// catalog, reads every event through it once.
func TestSIGKILLMidIngestionLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for Temporal's heartbeat timeouts: 1 to 2 minutes")
	}
	t.Parallel()
	const budget = 4 * time.Minute
	e := newEnv(t, 4)
	spec := e.spec(2)
	gen := eventgen.New(e.name, 22)

	a := e.startWorker("a")
	catalog := e.startCatalog() // engines read the table through it all along
	require.NoError(t, e.produce(gen, crashFirst, 0))
	run := e.startSupervisor(spec)
	published := e.checkpointUntilPublished(spec, 0, 60*time.Second)
	e.requireRESTCommitted(catalog, spec)

	producing := e.produceInBackground(gen, crashDuring, crashRate)
	time.Sleep(500 * time.Millisecond)
	e.signal(spec, workflows.SignalCheckpoint, workflows.CheckpointSignal{}) // its publishes and the next consumes run now
	// Killed in a publish, the worker may or may not have committed it:
	// the case exactly-once hangs on. The publish is retried after its
	// 2 min heartbeat timeout.
	running := e.waitActivitiesOn(spec, a, protocol.ActivityPublish, 5*time.Second)
	require.NotEmpty(t, running, "no activity ran on worker a to interrupt")
	readByA := processedBy(t, a, e.name) // read and staged before the kill (less a few ms)
	killedAt := time.Now()
	a.signal(os.Kill)
	t.Logf("SIGKILL to worker a with %d sequences published, while it ran %v", e.publishedSequences(spec), running)
	_, exited := a.waitExit(10 * time.Second)
	require.True(t, exited, "worker a survived SIGKILL")
	orphans := a.filter(e.runningActivities(spec))
	t.Logf("the server sees %d activities started on the killed worker: %v", len(orphans), orphans)

	b := e.startWorker("b")
	require.NoError(t, <-producing)
	require.NoError(t, e.produce(gen, crashRest, 0))
	left := func() time.Duration { return max(budget-time.Since(killedAt), 10*time.Second) }
	e.waitCaughtUp(spec, left())
	caughtUp := time.Since(killedAt)
	e.stopAndWait(spec, run, left())
	completed := time.Since(killedAt)
	t.Logf("recovery after SIGKILL: caught up after %v, supervisor completed after %v",
		caughtUp.Round(time.Millisecond), completed.Round(time.Millisecond))
	require.Less(t, completed, budget, "recovery from SIGKILL")

	require.Greater(t, e.publishedSequences(spec), published)
	e.requireExactlyOnce(spec, gen.RunID, crashTotal)
	// An engine attached by URL sees the same: iceberg-go's REST client
	// through the catalog server, which ran through the kill.
	e.requireRESTExactlyOnce(catalog, spec, gen.RunID, crashTotal)
	e.requireRESTCommitted(catalog, spec)
	// Each event is read once, plus what worker a had read and not yet
	// recorded in a heartbeat that reached the server: that is read again.
	readByB := processedBy(t, b, e.name)
	t.Logf("read again after SIGKILL: %d events (worker a read %d, worker b %d, %d produced)",
		readByA+readByB-crashTotal, readByA, readByB, crashTotal)
	if b.exited() {
		t.Fatalf("worker b exited: %v", b.state)
	}
}

// processedBy is the worker's handoff_events_processed_total of the
// supervisor: the records its consumes read and staged.
func processedBy(t *testing.T, w *workerProc, supervisor string) int64 {
	t.Helper()
	m, err := scrape(w)
	require.NoError(t, err)
	n, _ := m.sum("handoff_events_processed_total", supervisor)
	return int64(n)
}
