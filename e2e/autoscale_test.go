package e2e

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/activities"
	"handoff/e2e/harness"
	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/internal/pgstore"
	"handoff/workflows"
)

// TestAutoscalerScalesOutThenInExactlyOnce ramps a producer from 200
// events/s to 5,000/s and back. At 5,000/s the lag the watch samples (the
// log's end against the read positions the consumes heartbeat, at most
// about 4 s old) stays above scaleOutThreshold; at 200/s it stays below
// scaleInThreshold. The supervisor scales from 1 group to 3 and back to 1,
// each action a recorded spec change by the autoscaler, and every
// produced event is published exactly once across both.
func TestAutoscalerScalesOutThenInExactlyOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t, 3, activities.Faults{})
	spec := s.spec(1)
	spec.IOConfig.AutoScalerConfig = harness.RampAutoScaler()
	spec.ApplyDefaults()
	require.NoError(t, spec.Validate())
	gen := eventgen.New(s.name, 18)
	run := s.startSupervisor(spec)

	var sent atomic.Int64
	produce := func(ctx context.Context, rate float64, limit int64) error {
		n, err := gen.Produce(ctx, s.brokers, s.name, rate, limit, false)
		sent.Add(n)
		return err
	}
	taskCount := func() int { return s.status(spec).Spec.IOConfig.TaskCount }

	require.NoError(t, produce(context.Background(), 200, 1200))
	require.Equal(t, 1, taskCount(), "200 events/s must not scale out")

	burst := make(chan error, 1)
	go func() { burst <- produce(context.Background(), 5000, 75_000) }()
	require.Eventually(t, func() bool { return taskCount() == 3 }, 45*time.Second, 250*time.Millisecond, "no scale out under 5,000 events/s")
	require.NoError(t, <-burst)

	quiet, stopQuiet := context.WithCancel(context.Background())
	quietDone := make(chan error, 1)
	go func() { quietDone <- produce(quiet, 200, 0) }()
	scaledIn := harness.Poll(90*time.Second, func() bool { return taskCount() == 1 })
	stopQuiet()
	require.NoError(t, <-quietDone)
	require.True(t, scaledIn, "no scale in at 200 events/s")

	st := s.status(spec)
	require.NotNil(t, st.Autoscaler)
	require.Equal(t, map[string]int{"out": 1, "in": 1}, st.Autoscaler.Actions)
	require.Equal(t, "in", st.Autoscaler.LastAction.Direction)
	require.False(t, st.Autoscaler.NextActionAllowedAt.Before(st.Autoscaler.LastAction.At.Add(8*time.Second)),
		"the next action waits minTriggerScaleActionFrequency")

	recs, err := s.store.SpecHistory(context.Background(), spec.ID)
	require.NoError(t, err)
	var byAutoscaler []pgstore.SpecRecord
	for _, r := range recs {
		if r.ChangedBy == pgstore.ChangedByAutoscaler {
			byAutoscaler = append(byAutoscaler, r)
		}
	}
	require.Len(t, byAutoscaler, 2, "two scale actions in the spec history")
	require.Contains(t, byAutoscaler[0].Reason, "scale out from 1 to 3 task groups")
	require.Contains(t, byAutoscaler[1].Reason, "scale in from 3 to 1 task groups")
	require.GreaterOrEqual(t, byAutoscaler[1].CreatedAt.Sub(byAutoscaler[0].CreatedAt), 8*time.Second,
		"never more often than minTriggerScaleActionFrequency")

	spec.IOConfig.TaskCount = 1
	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)
	// What the run cost Temporal, both actions included (the figure in
	// the closing note).
	sup := s.historyEvents(workflows.SupervisorWorkflowID(spec.ID))
	var groups int64
	for g := range 3 {
		groups += s.historyEvents(workflows.TaskGroupWorkflowID(spec.ID, g))
	}
	t.Logf("history events: supervisor %d, groups %d, for %d events and 2 scale actions", sup, groups, sent.Load())
	every := spec
	every.IOConfig.TaskCount = 3 // record the groups of both layouts
	s.recordHistories(every)
	s.requireExactlyOnce(spec, gen.RunID, sent.Load())
}

// TestIdleAutoscalerCostsNoHistory: a caught-up supervisor with the
// autoscaler on (sampling twice a second, judging every second, at its
// minimum task count) writes no more history while idle than one without.
func TestIdleAutoscalerCostsNoHistory(t *testing.T) {
	t.Parallel()
	idle := map[string]int64{}
	var mu sync.Mutex
	t.Run("group", func(t *testing.T) {
		for _, on := range []bool{false, true} {
			name := "off"
			if on {
				name = "on"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				s := newStack(t, 2, activities.Faults{})
				spec := s.spec(1)
				if on {
					spec.IOConfig.AutoScalerConfig = &domain.AutoScalerConfig{
						EnableTaskAutoScaler: true, TaskCountMin: 1, TaskCountMax: 2,
						LagCollectionInterval: domain.Duration(500 * time.Millisecond), LagCollectionRange: domain.Duration(2 * time.Second),
						ScaleOutThreshold: 1000, ScaleInThreshold: 100,
						ScaleActionStartDelay: domain.Duration(time.Second), ScaleActionPeriod: domain.Duration(time.Second),
						MinTriggerScaleActionFrequency: domain.Duration(time.Second),
					}
					spec.ApplyDefaults()
					require.NoError(t, spec.Validate())
				}
				gen := eventgen.New(s.name, 19)
				s.produce(gen, 500)
				run := s.startSupervisor(spec)
				s.waitCaughtUp(spec)
				require.Eventually(t, func() bool { return s.status(spec).State == "IDLE" }, time.Minute, 200*time.Millisecond)
				id := workflows.SupervisorWorkflowID(spec.ID)
				before := s.historyEvents(id)
				time.Sleep(20 * time.Second)
				n := s.historyEvents(id) - before
				t.Logf("autoscaler %s: %d supervisor history events in 20 s idle", name, n)
				mu.Lock()
				idle[name] = n
				mu.Unlock()
				require.Equal(t, 1, s.status(spec).Spec.IOConfig.TaskCount, "no action at rest")
				s.stopAndWait(spec, run)
				s.requireExactlyOnce(spec, gen.RunID, 500)
			})
		}
	})
	require.Contains(t, idle, "on")
	require.LessOrEqual(t, idle["on"], idle["off"], "an idle supervisor's autoscaler must not add history")
}

// historyEvents is the length of every run's history of a workflow: the
// current run's as the server has it now (visibility's figure of a running
// workflow can be old), the closed runs' from visibility.
func (s *stack) historyEvents(id string) int64 {
	s.t.Helper()
	ctx := context.Background()
	d, err := s.temporal.DescribeWorkflowExecution(ctx, id, "")
	require.NoError(s.t, err)
	current := d.GetWorkflowExecutionInfo()
	n := current.GetHistoryLength()
	runs, err := s.temporal.ListWorkflow(ctx, listRequest(id))
	require.NoError(s.t, err)
	for _, r := range runs.GetExecutions() {
		if r.GetExecution().GetRunId() != current.GetExecution().GetRunId() {
			n += r.GetHistoryLength()
		}
	}
	return n
}
