package workflows

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// compactionFakes plays the two compaction activities: the first plan
// finds three intervals, later plans none; the compaction of the 02:00
// interval meets a conflict.
type compactionFakes struct {
	mu       sync.Mutex
	plans    []protocol.CompactionPlanInput
	compact  []protocol.CompactIntervalInput
	retained int
}

var t0 = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func (f *compactionFakes) plan(_ context.Context, in protocol.CompactionPlanInput) (protocol.CompactionPlanResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.plans = append(f.plans, in)
	cfg := domain.CompactionConfig{DataSource: in.DataSource, MaxConcurrentCompactions: 2, Period: domain.Duration(time.Minute)}.WithDefaults()
	res := protocol.CompactionPlanResult{HasConfig: true, Config: cfg, ConfigVersion: 1, UsedSegments: 9}
	if len(f.plans) > 2 {
		return res, nil
	}
	all := []protocol.CompactionTask{
		{Start: t0.Add(2 * time.Hour), End: t0.Add(3 * time.Hour), SegmentIDs: []string{"c1", "c2"}, Rows: 20},
		{Start: t0.Add(time.Hour), End: t0.Add(2 * time.Hour), SegmentIDs: []string{"b1", "b2", "b3"}, Rows: 30},
		{Start: t0, End: t0.Add(time.Hour), SegmentIDs: []string{"a1", "a2"}, Rows: 20},
	}
	skip := map[time.Time]bool{}
	for _, s := range in.Running {
		skip[s] = true
	}
	for _, t := range all {
		if !skip[t.Start] && len(res.Tasks) < cfg.MaxConcurrentCompactions-len(in.Running) && (len(f.plans) == 1 || t.Start.Equal(t0)) {
			res.Tasks = append(res.Tasks, t)
		}
	}
	res.Pending = 3
	if len(f.plans) == 2 {
		res.Pending = 1
	}
	return res, nil
}

func (f *compactionFakes) retention(context.Context, protocol.ApplyRetentionInput) (protocol.ApplyRetentionResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.retained++
	dropped := 0
	if f.retained == 1 {
		dropped = 4
	}
	return protocol.ApplyRetentionResult{HasRules: true, Version: 3, Dropped: dropped}, nil
}

func (f *compactionFakes) register(env *testsuite.TestWorkflowEnvironment) {
	env.RegisterActivityWithOptions(f.plan, activity.RegisterOptions{Name: protocol.ActivityCompactionPlan})
	env.RegisterActivityWithOptions(f.compactInterval, activity.RegisterOptions{Name: protocol.ActivityCompactInterval})
	env.RegisterActivityWithOptions(f.retention, activity.RegisterOptions{Name: protocol.ActivityApplyRetention})
}

func (f *compactionFakes) compactInterval(_ context.Context, in protocol.CompactIntervalInput) (protocol.CompactIntervalResult, error) {
	f.mu.Lock()
	f.compact = append(f.compact, in)
	f.mu.Unlock()
	if in.Task.Start.Equal(t0.Add(2 * time.Hour)) {
		return protocol.CompactIntervalResult{}, temporal.NewNonRetryableApplicationError("segments changed", domain.ErrCompactionConflict, nil)
	}
	n := len(in.Task.SegmentIDs)
	return protocol.CompactIntervalResult{SegmentsIn: n, SegmentsOut: 1, RowsIn: in.Task.Rows, RowsOut: in.Task.Rows, BytesIn: 100, BytesOut: 60}, nil
}

func TestCompactionWorkflowRunsPlannedIntervalsWithinItsSlots(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	f := &compactionFakes{}
	f.register(env)
	var states []string
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		ds, _ := sa.GetKeyword(saDataSource)
		require.Equal(t, "ds", ds)
		state, ok := sa.GetKeyword(saCompactionState)
		require.True(t, ok)
		states = append(states, state)
	}).Return(nil)
	var st CompactionStatus
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(QueryStatus)
		require.NoError(t, err)
		require.NoError(t, v.Get(&st))
		env.SignalWorkflow(SignalStop, StopSignal{})
	}, 3*time.Minute)
	env.ExecuteWorkflow(CompactionWorkflow, CompactionInput{DataSource: "ds"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, []string{domain.CompactionStateCompacting, domain.CompactionStateIdle, domain.CompactionStateStopping}, states,
		"the search attribute follows the state, once per change")

	require.Len(t, f.compact, 3, "each interval once")
	require.Len(t, f.plans[0].Running, 0)
	names := map[string]bool{}
	for _, c := range f.compact {
		require.False(t, names[c.Name], "compaction names are unique: %s", c.Name)
		names[c.Name] = true
	}
	require.Equal(t, 2, st.Done)
	require.Equal(t, 1, st.Conflicts, "a conflict gives the interval up without failing")
	require.Zero(t, st.Failed)
	require.Equal(t, int64(5), st.SegmentsIn)
	require.Equal(t, int64(2), st.SegmentsOut)
	require.Len(t, st.Recent, 3)
	require.Empty(t, st.Running)
	require.True(t, st.HasConfig)
	require.True(t, st.HasRetention)
	require.Equal(t, 3, st.RetentionVersion)
	require.Equal(t, int64(4), st.Dropped, "every round applies the rules; the drops add up")
	require.Greater(t, f.retained, 2)
}

func TestCompactionWorkflowContinuesAsNewWithItsTotals(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	f := &compactionFakes{}
	f.register(env)
	env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true) }, 10*time.Minute)
	env.ExecuteWorkflow(CompactionWorkflow, CompactionInput{DataSource: "ds", Carry: &CompactionStatus{DataSource: "ds", Started: 41, Done: 40}})
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
	var next CompactionInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	require.Equal(t, "ds", next.DataSource)
	require.NotNil(t, next.Carry)
	require.Equal(t, 42, next.Carry.Done, "the totals carry over: 40 before, 2 in this run")
	require.Equal(t, 44, next.Carry.Started, "names keep counting")
	require.Empty(t, next.Carry.Running, "it continues as new only with nothing running")
}

// A stop that arrives as the run decides to continue as new ends the
// workflow; it is not lost at the boundary.
func TestCompactionWorkflowStopAtTheContinueAsNewBoundaryEndsIt(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	f := &compactionFakes{}
	f.register(env)
	env.RegisterDelayedCallback(func() {
		env.SetContinueAsNewSuggested(true)
		env.SignalWorkflow(SignalStop, StopSignal{})
	}, 10*time.Minute)
	env.ExecuteWorkflow(CompactionWorkflow, CompactionInput{DataSource: "ds"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError(), "stopped, not continued as new")
}
