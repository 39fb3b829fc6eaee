package chaos

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

// TestThreeWorkersShareGroupsAndSurviveOneKilled runs three workers on one
// task queue under a six-group supervisor: the groups' activities must
// spread over all three; then one is SIGKILLed for good while it works, and
// the other two must finish its groups' work, every event published
// exactly once.
func TestThreeWorkersShareGroupsAndSurviveOneKilled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{partitions: 6})
	spec := e.spec(6)
	p := e.producer(103)
	r := newRand(t)

	workers := []*workerProc{e.startWorker("a", true), e.startWorker("b", true), e.startWorker("c", true)}
	require.NoError(t, p.produce(3000, 0))
	run := e.startSupervisor(spec)
	producing := p.background(pick[int64](9000, 45000), 600)

	ran := e.waitAllRanActivities(spec, workers, time.Minute)
	t.Logf("activities seen on the workers: %v", ran)
	for _, w := range workers {
		require.NotZero(t, ran[w.name], "no activity ran on %s within a minute: the groups did not spread", w.name)
	}

	e.waitPublished(spec, 0, time.Minute)
	time.Sleep(between(r, 0, pick(2*time.Second, 15*time.Second)))
	victim := workers[r.IntN(len(workers))]
	e.waitActivityOn(spec, victim, 20*time.Second)
	on := startedOn(e.startedActivities(spec), victim.identityPrefix())
	victim.signal(os.Kill)
	_, exited := victim.waitExit(10 * time.Second)
	require.True(t, exited, "worker %s survived SIGKILL", victim.name)
	t.Logf("SIGKILL worker %s for good while it ran %v", victim.name, on)
	e.report.fault("sigkill-one-of-three")
	e.noteKilled(victim)
	e.awaitTakeovers(spec)

	require.NoError(t, <-producing)
	e.waitCaughtUp(spec, 3*time.Minute)
	e.stopAndWait(spec, run, 2*time.Minute)
	e.verify(spec, p.gen.RunID, p.produced())
}

// waitAllRanActivities samples which workers the server sees running the
// supervisor's activities until each of workers ran one, or timeout; it
// returns how many samples saw each (by worker name).
func (e *env) waitAllRanActivities(spec domain.Spec, workers []*workerProc, timeout time.Duration) map[string]int {
	ran := map[string]int{}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		acts := e.startedActivities(spec)
		all := true
		for _, w := range workers {
			ran[w.name] += len(startedOn(acts, w.identityPrefix()))
			all = all && ran[w.name] > 0
		}
		if all {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return ran
}
