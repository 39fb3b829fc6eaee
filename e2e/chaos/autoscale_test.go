package chaos

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/e2e/harness"
	"handoff/internal/domain"
	"handoff/workflows"
)

// TestWorkerSIGKILLedDuringScaleActions ramps the producer up and down so
// the autoscaler scales from 1 group to 3 and back, and SIGKILLs the only
// worker in the middle of each action: after the autoscaler recorded the
// new taskCount and while the old groups drain and publish. A new worker
// takes over each time. Both actions must complete and every event must be
// published exactly once.
func TestWorkerSIGKILLedDuringScaleActions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{partitions: 3})
	spec := e.spec(1)
	spec.IOConfig.AutoScalerConfig = harness.RampAutoScaler()
	spec.ApplyDefaults()
	require.NoError(t, spec.Validate())
	p := e.producer(118)

	w := e.startWorker("0", true)
	run := e.startSupervisor(spec)
	require.NoError(t, p.produce(1200, 200))
	burst := p.background(75_000, 5000)
	e.sigkillDuringScaleAction(spec, w, "out")
	w = e.startWorker("1", true)
	every := spec // the groups of both layouts
	every.IOConfig.TaskCount = spec.IOConfig.AutoScalerConfig.TaskCountMax
	e.awaitTakeovers(every)
	require.NoError(t, <-burst)

	stopProducing := p.until(200)
	e.sigkillDuringScaleAction(spec, w, "in")
	e.startWorker("2", true)
	e.awaitTakeovers(every)
	// The scale in applies: the groups are 1, or a later action (the lag
	// that built up while no worker ran can scale out again) started
	// from 1, which it could only do once the scale in had applied.
	e.waitAutoscaler(spec, 2*time.Minute, "the scale in to 1 group did not apply", func(st workflows.SupervisorStatus) bool {
		a := st.Autoscaler
		return a.Actions["in"] >= 1 && (len(st.Groups) == 1 && st.Spec.IOConfig.TaskCount == 1 && !st.PendingSpec ||
			a.LastAction.Direction == "out" && a.LastAction.From == 1)
	})
	require.NoError(t, stopProducing())

	latest := e.latest()
	e.waitAutoscaler(spec, 3*time.Minute, "the groups did not read to the end offsets "+latest.String(), func(st workflows.SupervisorStatus) bool {
		now := spec
		now.IOConfig.TaskCount = st.Spec.IOConfig.TaskCount
		pos, err := e.positions(now)
		return !st.PendingSpec && len(st.Groups) == now.IOConfig.TaskCount && err == nil && pos.Equal(latest)
	})
	e.stopAndWait(spec, run, 2*time.Minute)
	e.verify(spec, p.gen.RunID, p.produced())
}

// sigkillDuringScaleAction waits until the autoscaler has recorded an
// action in direction and its spec waits to apply, then SIGKILLs w.
func (e *env) sigkillDuringScaleAction(spec domain.Spec, w *workerProc, direction string) {
	e.t.Helper()
	require.True(e.t, harness.Poll(90*time.Second, func() bool {
		st, err := e.status(spec)
		return err == nil && st.PendingSpec && st.Autoscaler != nil && st.Autoscaler.LastAction != nil &&
			st.Autoscaler.LastAction.Direction == direction
	}), "no scale %s action within 90s", direction)
	w.signal(os.Kill)
	_, exited := w.waitExit(10 * time.Second)
	require.True(e.t, exited, "%s survived SIGKILL", w.name)
	e.t.Logf("SIGKILL %s during a scale %s action", w.name, direction)
	e.report.fault("sigkill-during-scale-" + direction)
	e.noteKilled(w)
}

// waitAutoscaler waits until the supervisor's status, with its
// autoscaler, satisfies cond.
func (e *env) waitAutoscaler(spec domain.Spec, timeout time.Duration, what string, cond func(workflows.SupervisorStatus) bool) {
	e.t.Helper()
	var st workflows.SupervisorStatus
	require.True(e.t, harness.Poll(timeout, func() bool {
		var err error
		st, err = e.status(spec)
		return err == nil && st.Autoscaler != nil && st.Autoscaler.LastAction != nil && cond(st)
	}), "%s within %v: taskCount %d, pending spec %v, state %s/%s, autoscaler %+v, groups %+v, errors %+v",
		what, timeout, st.Spec.IOConfig.TaskCount, st.PendingSpec, st.State, st.DetailedState, st.Autoscaler, st.Groups, st.RecentErrors)
}
