package workflows

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// A consume that fails with OffsetOutOfRange makes the group tell its
// supervisor (with the details) and then fail with that error; any other
// failure sends no such report.
func TestTaskGroupReportsOffsetOutOfRangeThenFails(t *testing.T) {
	spec := testSpec()
	o := domain.OutOfRange{SupervisorID: spec.ID, Topic: spec.IOConfig.Topic, Partition: 1, Offset: 40, Earliest: 0, Latest: 7}
	for _, tt := range []struct {
		name    string
		err     error
		reports []OffsetOutOfRangeReport
	}{
		{"out of range", temporal.NewNonRetryableApplicationError(o.Error(), domain.ErrOffsetOutOfRange, nil, o),
			[]OffsetOutOfRangeReport{{Group: 1, Generation: 3, OutOfRange: o}}},
		{"other", temporal.NewNonRetryableApplicationError("too big", domain.ErrMessageTooLarge, nil), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv(t)
			env.RegisterWorkflowWithOptions(TaskGroupWorkflow, workflow.RegisterOptions{Name: TaskGroupWorkflowName})
			env.RegisterActivityWithOptions(func(context.Context, protocol.ConsumeInput) (protocol.ConsumeResult, error) {
				return protocol.ConsumeResult{}, tt.err
			}, activity.RegisterOptions{Name: protocol.ActivityConsume})
			perChunk(env)
			var mu sync.Mutex
			var reports []OffsetOutOfRangeReport
			env.OnSignalExternalWorkflow(mock.Anything, SupervisorWorkflowID(spec.ID), "", mock.Anything, mock.Anything).
				Return(nil).Run(func(args mock.Arguments) {
				mu.Lock()
				defer mu.Unlock()
				if r, ok := args.Get(4).(OffsetOutOfRangeReport); ok {
					require.Equal(t, SignalOffsetOutOfRange, args.String(3))
					reports = append(reports, r)
				}
			})
			env.ExecuteWorkflow(TaskGroupWorkflowName, TaskGroupInput{
				Spec: spec, Group: 1, Generation: 3, Partitions: []domain.Partition{domain.P(1)},
				Sequences: []domain.Sequence{{ID: 4, Start: domain.Offsets{domain.P(1): 40}}},
			})
			require.True(t, env.IsWorkflowCompleted())
			err := env.GetWorkflowError()
			require.True(t, hasErrorType(err, tt.err.(*temporal.ApplicationError).Type()), "%v", err)
			require.Equal(t, tt.reports, reports)
		})
	}
}

// hasErrorType: some application error in err's chain has that type.
func hasErrorType(err error, typ string) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		var app *temporal.ApplicationError
		if errors.As(e, &app) && app.Type() == typ {
			return true
		}
	}
	return false
}

// outOfRangeHarness is an opsHarness whose groups of the generations in
// failing report an out-of-range offset and then fail with it, as a real
// group does one second after it starts.
func outOfRangeHarness(t *testing.T, spec domain.Spec, report domain.OutOfRange, failing func(gen int) bool) *opsHarness {
	o := newOpsHarness(t, spec)
	o.discover = fixedDiscover([]domain.Partition{domain.P(0)}, domain.Offsets{domain.P(0): 900})
	o.env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in TaskGroupInput) error {
		if !failing(in.Generation) {
			return o.child(ctx, in)
		}
		o.mu.Lock()
		o.children = append(o.children, in)
		o.mu.Unlock()
		id := TaskGroupWorkflowID(in.Spec.ID, in.Group)
		o.omu.Lock()
		o.runs[id] = &stubRun{running: true}
		o.omu.Unlock()
		o.note("start-failing")
		_ = workflow.Sleep(ctx, time.Second)
		g := &stubGroup{in: in}
		g.send(ctx, SignalOffsetOutOfRange, OffsetOutOfRangeReport{Group: in.Group, Generation: in.Generation, OutOfRange: report})
		o.closeRun(id, protocol.GroupClosed{Status: "Failed", Failure: domain.ErrOffsetOutOfRange + ": " + report.Error()})
		return temporal.NewNonRetryableApplicationError(report.Error(), domain.ErrOffsetOutOfRange, nil, report)
	}, workflow.RegisterOptions{Name: TaskGroupWorkflowName, DisableAlreadyRegisteredCheck: true})
	return o
}

// With resetOffsetAutomatically off, the supervisor does not move any
// offset: it is UNHEALTHY_TASKS / OFFSET_OUT_OF_RANGE at once, the group's
// status and the recent errors say what to run, and the group is restarted
// with the usual back-off only (5s, 10s, 20s ...), not in a loop. A reset
// by the user clears it.
func TestSupervisorOffsetOutOfRangeWithoutAutoReset(t *testing.T) {
	spec := testSpec()
	report := domain.OutOfRange{SupervisorID: spec.ID, Topic: "events", Partition: 0, Offset: 100, Earliest: 500, Latest: 900}
	o := outOfRangeHarness(t, spec, report, func(int) bool { return true })
	o.startOffsets = protocol.StartOffsetsResult{Offsets: domain.Offsets{domain.P(0): 100}, Committed: domain.Offsets{domain.P(0): 100}, NextSequenceIDs: map[int]int{0: 3}}
	o.resetResult = protocol.ResetOffsetsResult{Offsets: domain.Offsets{domain.P(0): 500}}
	snaps := o.snapshots(3*time.Second, 59*time.Second)
	reset := sendUpdate[ResetResult](o, 60*time.Second, UpdateReset, ResetRequest{Partitions: map[domain.Partition]string{domain.P(0): ResetEarliest}, Force: true})
	after := o.snapshots(60*time.Second + 100*time.Millisecond)
	o.signal(61*time.Second, SignalStop, StopSignal{})
	o.run()
	require.NoError(t, o.env.GetWorkflowError())

	first := snaps[3*time.Second]
	require.Equal(t, StateUnhealthyTasks, first.State)
	require.Equal(t, DetailOffsetOutOfRange, first.DetailedState)
	want := report
	require.Equal(t, &want, first.Groups[0].OutOfRange)
	require.NotEmpty(t, first.RecentErrors)
	msg := first.RecentErrors[0].Message
	for _, s := range []string{"group 0 (generation 1) stopped", "offset 100", `topic "events" partition 0`, "offsets 500 to 900",
		"starter reset spec1 --partition 0=earliest --force", "resetOffsetAutomatically to true"} {
		require.Contains(t, msg, s)
	}
	require.Empty(t, first.OffsetResets)

	later := snaps[59*time.Second]
	require.Equal(t, StateUnhealthyTasks, later.State)
	require.LessOrEqual(t, len(o.started()), 5, "restarts back off (5s, 10s, 20s ...) instead of spinning")
	require.GreaterOrEqual(t, later.Groups[0].Failures, 3)
	reset.answered(t)
	require.Len(t, o.resets, 1, "only the user's reset moved offsets")
	require.Nil(t, after[60*time.Second+100*time.Millisecond].Groups[0].OutOfRange, "a reset clears it")
}

// With resetOffsetAutomatically on and useEarliestOffset, a recreated topic
// (the group wanted 250, the new topic ends at 20) is reset to earliest:
// the forced reset of that partition ends the group, the reset is recorded
// as moving backwards, and the group restarts at once (no back-off, no
// failure counted) from the new stored offset.
func TestSupervisorAutoResetOfRecreatedTopicGoesToEarliest(t *testing.T) {
	spec := testSpec()
	spec.IOConfig.ResetOffsetAutomatically, spec.IOConfig.UseEarliestOffset = true, true
	report := domain.OutOfRange{SupervisorID: spec.ID, Topic: "events", Partition: 0, Offset: 250, Earliest: 0, Latest: 20, AutoReset: true, UseEarliest: true}
	o := outOfRangeHarness(t, spec, report, func(gen int) bool { return gen == 1 })
	o.startOffsets = protocol.StartOffsetsResult{Offsets: domain.Offsets{domain.P(0): 100}, Committed: domain.Offsets{domain.P(0): 100}, NextSequenceIDs: map[int]int{0: 3}}
	o.resetResult = protocol.ResetOffsetsResult{Offsets: domain.Offsets{domain.P(0): 0}}
	o.afterReset = func() {
		o.setStartOffsets(protocol.StartOffsetsResult{Offsets: domain.Offsets{domain.P(0): 0}, Committed: domain.Offsets{domain.P(0): 0}, NextSequenceIDs: map[int]int{0: 3}})
	}
	snaps := o.snapshots(4 * time.Second)
	o.signal(30*time.Second, SignalStop, StopSignal{})
	o.run()
	require.NoError(t, o.env.GetWorkflowError())

	require.Equal(t, []protocol.ResetOffsetsInput{{DataSource: "events", Topic: "events", Targets: map[domain.Partition]string{domain.P(0): ResetEarliest}}}, o.resets)
	started := o.started()
	require.Len(t, started, 2)
	require.Equal(t, []domain.Sequence{{ID: 4, Start: domain.Offsets{domain.P(0): 0}}}, started[1].Sequences,
		"restarted from the reset offset, in a new sequence (3 was dropped)")

	st := snaps[4*time.Second]
	require.Equal(t, StateRunning, st.State)
	require.True(t, st.Groups[0].Running)
	require.Equal(t, 2, st.Groups[0].Generation, "restarted without back-off")
	require.Zero(t, st.Groups[0].Failures)
	require.Nil(t, st.Groups[0].OutOfRange)
	require.Equal(t, domain.Offsets{domain.P(0): 0}, st.Committed)
	require.Len(t, st.OffsetResets, 1)
	r := st.OffsetResets[0]
	require.Equal(t, OffsetResetRecord{Time: r.Time, Group: 0, Partition: domain.P(0), Wanted: 250, From: 100, To: 0, Recreated: true, Skipped: 0,
		DroppedSequences: 0, Message: r.Message}, r)
	require.Contains(t, r.Message, "deleted and recreated")
	require.Contains(t, r.Message, "moved back from 100 (old topic) to 0")
	require.Equal(t, r.Message, st.RecentErrors[len(st.RecentErrors)-1].Message)
}

// Expired records with useEarliestOffset off reset to latest, as Druid
// does, and the reset records how many offsets it skipped: to - from.
func TestSupervisorAutoResetOfExpiredRecordsGoesToLatest(t *testing.T) {
	spec := testSpec()
	spec.IOConfig.ResetOffsetAutomatically = true
	report := domain.OutOfRange{SupervisorID: spec.ID, Topic: "events", Partition: 0, Offset: 130, Earliest: 500, Latest: 900, AutoReset: true}
	o := outOfRangeHarness(t, spec, report, func(gen int) bool { return gen == 1 })
	o.startOffsets = protocol.StartOffsetsResult{Offsets: domain.Offsets{domain.P(0): 100}, Committed: domain.Offsets{domain.P(0): 100}, NextSequenceIDs: map[int]int{0: 3}}
	o.resetResult = protocol.ResetOffsetsResult{Offsets: domain.Offsets{domain.P(0): 910}}
	o.afterReset = func() {
		o.setStartOffsets(protocol.StartOffsetsResult{Offsets: domain.Offsets{domain.P(0): 910}, Committed: domain.Offsets{domain.P(0): 910}, NextSequenceIDs: map[int]int{0: 3}})
	}
	snaps := o.snapshots(4 * time.Second)
	o.signal(30*time.Second, SignalStop, StopSignal{})
	o.run()
	require.NoError(t, o.env.GetWorkflowError())

	require.Equal(t, []protocol.ResetOffsetsInput{{DataSource: "events", Topic: "events", Targets: map[domain.Partition]string{domain.P(0): ResetLatest}}}, o.resets)
	st := snaps[4*time.Second]
	require.Equal(t, StateRunning, st.State)
	require.Len(t, st.OffsetResets, 1)
	r := st.OffsetResets[0]
	require.False(t, r.Recreated)
	require.Equal(t, int64(100), r.From)
	require.Equal(t, int64(130), r.Wanted)
	require.Equal(t, int64(910), r.To)
	require.Equal(t, int64(810), r.Skipped)
	require.Contains(t, r.Message, "810 offset(s) skipped")
	require.Contains(t, r.Message, "expired")
}

// The Temporal UI's current details say what to run for a group stopped on
// an out-of-range offset, and show the last automatic reset.
func TestSupervisorDetailsShowOutOfRange(t *testing.T) {
	o := domain.OutOfRange{SupervisorID: "spec1", Topic: "events", Partition: 2, Offset: 100, Earliest: 500, Latest: 900}
	s := &supervisor{spec: testSpec(), c: SupervisorCarry{
		State: StateUnhealthyTasks, DetailedState: DetailOffsetOutOfRange,
		Groups: map[int]*groupRecord{0: {Partitions: []domain.Partition{domain.P(2)}, OutOfRange: &o}},
	}}
	d := s.details()
	require.Contains(t, d, "**offset out of range**: group 0, partition 2 wants offset 100, which holds 500 to 900")
	require.Contains(t, d, "starter reset spec1 --partition 2=earliest --force")
	require.NotContains(t, d, "last offset reset")

	s.c.Groups[0].OutOfRange = nil
	s.c.OffsetResets = []OffsetResetRecord{{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Message: "partition 2 reset automatically: 400 offset(s) skipped"}}
	d = s.details()
	require.NotContains(t, d, "offset out of range**")
	require.Contains(t, d, "last offset reset (2026-01-02T03:04:05Z): partition 2 reset automatically: 400 offset(s) skipped")
}
