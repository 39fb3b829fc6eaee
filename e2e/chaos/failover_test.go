package chaos

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/e2e/harness"
	"handoff/internal/domain"
	"handoff/internal/lake"
	"handoff/internal/lifecycle"
	"handoff/internal/protocol"
	"handoff/internal/storage"
)

// streamHolder is the worker that runs the most of the groups' streams
// now, and the groups it runs them for.
func (e *env) streamHolder(spec domain.Spec, workers []*workerProc) (*workerProc, []string) {
	var best *workerProc
	var bestGroups []string
	for _, w := range workers {
		var groups []string
		for _, a := range startedOn(e.startedActivities(spec), w.identityPrefix()) {
			if a.Type == protocol.ActivityConsumeStream {
				groups = append(groups, a.Workflow)
			}
		}
		if len(groups) > len(bestGroups) {
			best, bestGroups = w, groups
		}
	}
	return best, bestGroups
}

// waitStreamsOn waits until w runs a stream.
func (e *env) waitStreamsOn(spec domain.Spec, workers []*workerProc, timeout time.Duration) (*workerProc, []string) {
	e.t.Helper()
	var w *workerProc
	var groups []string
	require.True(e.t, harness.Poll(timeout, func() bool {
		w, groups = e.streamHolder(spec, workers)
		return w != nil
	}), "no stream started on any worker within %v", timeout)
	return w, groups
}

// readAgainAfter measures, from at, until each of the groups' streams
// reads past where it was (its heartbeat's offsets, which the busy
// stream sends every 2 s: the figure is at most that late), asking the
// server only (harness.StreamOffsets).
func (e *env) readAgainAfter(spec domain.Spec, before domain.Offsets, at time.Time) time.Duration {
	e.t.Helper()
	require.True(e.t, harness.Poll(takeoverTimeout, func() bool {
		pos, err := harness.StreamOffsets(context.Background(), e.temporal, spec)
		if err != nil {
			return false
		}
		for p, o := range before {
			if pos[p] <= o {
				return false
			}
		}
		return true
	}), "the groups read nothing past %v within %v of the kill", before, takeoverTimeout)
	return time.Since(at)
}

// TestStreamsFailOverWithinSeconds runs two workers under a live producer
// and SIGKILLs the one holding the most streams, again and again (twice
// in the short form, ten times in the long one, alternating as the
// streams move), restarting it at once each time. A live worker must find
// it dead through its lease and its attempts must go on from their last
// heartbeat: every kill is measured from the SIGKILL to the attempts
// taken over, and to the groups reading past where they were.
func TestStreamsFailOverWithinSeconds(t *testing.T) {
	t.Parallel()
	kills := pick(2, 10)
	e := newEnv(t, envOptions{partitions: 4})
	spec := e.spec(4)
	p := e.producer(105)
	r := newRand(t)

	workers := []*workerProc{e.startWorker("a", true), e.startWorker("b", true)}
	require.NoError(t, p.produce(2000, 0))
	run := e.startSupervisor(spec)
	stopProducing := p.until(400)
	e.waitPublished(spec, 0, time.Minute)
	var takeovers, reads []time.Duration
	for i := range kills {
		time.Sleep(between(r, 2*time.Second, 5*time.Second))
		victim, groups := e.waitStreamsOn(spec, workers, 30*time.Second)
		before, err := harness.StreamOffsets(context.Background(), e.temporal, spec)
		require.NoError(t, err)
		victim.signal(os.Kill)
		at := time.Now()
		_, exited := victim.waitExit(10 * time.Second)
		require.True(t, exited, "%s survived SIGKILL", victim.name)
		e.report.fault("sigkill-stream-holder")
		e.noteKilled(victim)
		// Restarted at once, as a supervisor of processes would.
		workers[slices.Index(workers, victim)] = e.startWorker(fmt.Sprintf("%s%d", victim.name[len("worker-"):], i+1), true)
		e.awaitTakeovers(spec)
		takeovers = append(takeovers, time.Since(at))
		reads = append(reads, e.readAgainAfter(spec, before, at))
		t.Logf("kill %d of %s (streams of %v): attempts taken over after %v, read past the kill after %v",
			i+1, victim.name, groups, takeovers[i].Round(100*time.Millisecond), reads[i].Round(100*time.Millisecond))
	}
	require.NoError(t, stopProducing())
	e.waitCaughtUp(spec, 3*time.Minute)
	e.stopAndWait(spec, run, 2*time.Minute)
	t.Logf("from SIGKILL to reading again: %v", reads)
	e.verify(spec, p.gen.RunID, p.produced())
}

// TestPausedWorkerIsFencedAfterTakeover SIGSTOPs the worker holding the
// streams past its lease while another worker runs, so that worker takes
// its attempts over; then SIGCONTs it. The woken worker's attempts are no
// longer current: its heartbeats and answers are refused, what it stages
// late is listed nowhere (the staging sweep removes it), and it goes on as
// a live worker. Every event must be published exactly once.
func TestPausedWorkerIsFencedAfterTakeover(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{partitions: 4})
	spec := e.spec(4)
	p := e.producer(106)

	workers := []*workerProc{e.startWorker("a", true), e.startWorker("b", true)}
	require.NoError(t, p.produce(2000, 0))
	run := e.startSupervisor(spec)
	stopProducing := p.until(400)
	e.waitPublished(spec, 0, time.Minute)
	victim, groups := e.waitStreamsOn(spec, workers, 30*time.Second)
	on := startedOn(e.startedActivities(spec), victim.identityPrefix())
	victim.signal(syscall.SIGSTOP)
	t.Logf("SIGSTOP %s while it ran the streams of %v and %d attempts in all", victim.name, groups, len(on))
	e.report.fault("sigstop-past-lease")
	e.noteKilled(victim) // for awaitTakeovers: paused is dead to the others
	e.awaitTakeovers(spec)
	time.Sleep(5 * time.Second) // the others publish meanwhile
	victim.signal(syscall.SIGCONT)
	t.Logf("SIGCONT %s", victim.name)

	require.NoError(t, stopProducing())
	e.waitCaughtUp(spec, 3*time.Minute)
	e.stopAndWait(spec, run, 2*time.Minute)
	require.False(t, victim.exited(), "the woken worker must go on serving: %v", victim.state)
	log := victim.logTail(maxLogPrint)
	t.Logf("the woken worker's heartbeats refused: %v", countLines(log, "RecordActivityHeartbeat with error"))

	// What the woken worker staged after its sequences were published is
	// listed by nothing; the staging sweep removes it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	staging, err := storage.NewLocal(e.stagingDir)
	require.NoError(t, err)
	deep, err := storage.NewLocal(e.deepDir)
	require.NoError(t, err)
	k := lifecycle.Killer{Store: e.store, Deep: deep, Tables: lake.New(e.pool, deep, lake.Config{}), Staging: staging}
	swept, err := k.Sweep(ctx, spec.DataSchema.DataSource, 0, false)
	require.NoError(t, err)
	t.Logf("the sweep removed %+v", swept)
	e.verify(spec, p.gen.RunID, p.produced())
}

func countLines(s, substr string) int { return strings.Count(s, substr) }
