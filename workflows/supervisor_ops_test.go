package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// signalTestKill ends a stub group at once, as a terminate would: no
// group-finished.
const signalTestKill = "test-kill"

// opsHarness is a supervisorHarness for the operations: its stub group
// records every signal it gets (add-partitions and rollover too), keeps its
// generation across rollovers, can fail, is ended by TerminateGroups, and
// reacts to signals as a test scripts it. ResetOffsets and TerminateGroups
// are stubbed, GroupStates says how each latest run ended, and ops logs in
// order what the supervisor did (activities, child starts).
type opsHarness struct {
	*supervisorHarness

	// react runs in the stub group on every signal it gets before its stop.
	react func(ctx workflow.Context, g *stubGroup, s opsSignal)
	// fail, when it returns an error for a child's input, makes that child
	// fail with it one second after it started.
	fail func(in TaskGroupInput) error
	// afterStop runs in the stub group after its stop, before its
	// group-finished; by default it waits finishAfter[group].
	afterStop func(ctx workflow.Context, g *stubGroup)
	// resetResult answers ResetOffsets; afterReset (optional) runs after it,
	// e.g. to move what StartOffsets answers.
	resetResult protocol.ResetOffsetsResult
	afterReset  func()

	omu        sync.Mutex
	ops        []string
	signals    map[int][]opsSignal
	runs       map[string]*stubRun // latest run per workflow id
	specs      []protocol.RecordSpecInput
	resets     []protocol.ResetOffsetsInput
	terminates []protocol.TerminateGroupsInput
	updates    int
	started0   time.Time // the workflow clock when the run started
}

// opsSignal is one signal a stub group got.
type opsSignal struct {
	name     string
	reason   string        // checkpoint
	setEnd   SetEndOffsets // set-end-offsets
	add      AddPartitions // add-partitions
	rollover Rollover      // rollover
}

type stubRun struct {
	running bool
	closed  protocol.GroupClosed
}

// stubGroup is what a stub group knows of itself.
type stubGroup struct {
	in   TaskGroupInput
	gen  int // its generation, moved by rollovers
	open int // its open sequence, moved by set-end-offsets
}

// send signals the supervisor.
func (g *stubGroup) send(ctx workflow.Context, name string, arg any) {
	_ = workflow.SignalExternalWorkflow(ctx, SupervisorWorkflowID(g.in.Spec.ID), "", name, arg).Get(ctx, nil)
}

func newOpsHarness(t *testing.T, spec domain.Spec) *opsHarness {
	t.Helper()
	o := &opsHarness{supervisorHarness: newSupervisorHarness(t, spec), signals: map[int][]opsSignal{}, runs: map[string]*stubRun{}}
	env := o.env
	env.RegisterWorkflowWithOptions(o.child, workflow.RegisterOptions{Name: TaskGroupWorkflowName, DisableAlreadyRegisteredCheck: true})
	env.RegisterActivityWithOptions(func(_ context.Context, in protocol.StartOffsetsInput) (protocol.StartOffsetsResult, error) {
		o.note("start-offsets")
		o.mu.Lock()
		defer o.mu.Unlock()
		o.startOffsCalls++
		return o.startOffsets, nil
	}, activity.RegisterOptions{Name: protocol.ActivityStartOffsets})
	env.RegisterActivityWithOptions(func(_ context.Context, in protocol.RecordSpecInput) (protocol.RecordSpecResult, error) {
		o.omu.Lock()
		o.specs = append(o.specs, in)
		n := len(o.specs)
		o.omu.Unlock()
		o.note("record-spec")
		return protocol.RecordSpecResult{Recorded: true, Version: n}, nil
	}, activity.RegisterOptions{Name: protocol.ActivityRecordSpec})
	env.RegisterActivityWithOptions(func(_ context.Context, in protocol.GroupStatesInput) (protocol.GroupStatesResult, error) {
		o.omu.Lock()
		defer o.omu.Unlock()
		res := protocol.GroupStatesResult{Running: map[string]bool{}, Closed: map[string]protocol.GroupClosed{}}
		for _, id := range in.WorkflowIDs {
			r, ok := o.runs[id]
			switch {
			case !ok:
				res.Closed[id] = protocol.GroupClosed{Status: "NotFound"}
			case r.running:
				res.Running[id] = true
				continue
			default:
				res.Closed[id] = r.closed
			}
			res.Running[id] = false
		}
		return res, nil
	}, activity.RegisterOptions{Name: protocol.ActivityGroupStates})
	env.RegisterActivityWithOptions(func(_ context.Context, in protocol.ResetOffsetsInput) (protocol.ResetOffsetsResult, error) {
		o.omu.Lock()
		o.resets = append(o.resets, in)
		o.omu.Unlock()
		o.note("reset-offsets")
		if o.afterReset != nil {
			o.afterReset()
		}
		return o.resetResult, nil
	}, activity.RegisterOptions{Name: protocol.ActivityResetOffsets})
	env.RegisterActivityWithOptions(func(_ context.Context, in protocol.TerminateGroupsInput) (protocol.TerminateGroupsResult, error) {
		o.omu.Lock()
		o.terminates = append(o.terminates, in)
		o.omu.Unlock()
		o.note(fmt.Sprintf("terminate %v", in.WorkflowIDs))
		return protocol.TerminateGroupsResult{}, nil
	}, activity.RegisterOptions{Name: protocol.ActivityTerminateGroups})
	// A terminate ends the runs at once: the listener runs on the test
	// environment's loop, before the supervisor goes on.
	env.SetOnActivityCompletedListener(func(info *activity.Info, _ converter.EncodedValue, err error) {
		if info.ActivityType.Name != protocol.ActivityTerminateGroups || err != nil {
			return
		}
		o.omu.Lock()
		ids := o.terminates[len(o.terminates)-1].WorkflowIDs
		o.omu.Unlock()
		for _, id := range ids {
			_ = env.SignalWorkflowByID(id, signalTestKill, nil)
		}
	})
	return o
}

func (o *opsHarness) note(op string) {
	o.omu.Lock()
	defer o.omu.Unlock()
	o.ops = append(o.ops, op)
}

func (o *opsHarness) record(group int, s opsSignal) {
	o.omu.Lock()
	defer o.omu.Unlock()
	o.signals[group] = append(o.signals[group], s)
}

func (o *opsHarness) closeRun(id string, c protocol.GroupClosed) {
	o.omu.Lock()
	defer o.omu.Unlock()
	o.runs[id] = &stubRun{closed: c}
}

// child is the stub TaskGroup workflow.
func (o *opsHarness) child(ctx workflow.Context, in TaskGroupInput) error {
	id := TaskGroupWorkflowID(in.Spec.ID, in.Group)
	o.mu.Lock()
	o.children = append(o.children, in)
	o.mu.Unlock()
	o.omu.Lock()
	o.runs[id] = &stubRun{running: true}
	o.ops = append(o.ops, fmt.Sprintf("start g%d gen%d", in.Group, in.Generation))
	o.omu.Unlock()

	if o.fail != nil {
		if err := o.fail(in); err != nil {
			_ = workflow.Sleep(ctx, time.Second)
			var app *temporal.ApplicationError
			msg := err.Error()
			if errors.As(err, &app) {
				msg = app.Type() + ": " + app.Message()
			}
			o.closeRun(id, protocol.GroupClosed{Status: "Failed", Failure: msg})
			return err
		}
	}
	g := &stubGroup{in: in, gen: in.Generation}
	if n := len(in.Sequences); n > 0 {
		g.open = in.Sequences[n-1].ID
	}
	chans := map[string]workflow.ReceiveChannel{}
	for _, name := range []string{SignalSetEndOffsets, SignalGroupStop, SignalGroupCheckpoint, SignalAddPartitions, SignalRollover, signalTestKill} {
		chans[name] = workflow.GetSignalChannel(ctx, name)
	}
	for stopped := false; !stopped; {
		var got opsSignal
		killed := false
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(chans[SignalSetEndOffsets], func(c workflow.ReceiveChannel, _ bool) {
			got.name = SignalSetEndOffsets
			c.Receive(ctx, &got.setEnd)
			if got.setEnd.SequenceID == g.open {
				g.open = got.setEnd.NextSequenceID
			}
		})
		sel.AddReceive(chans[SignalGroupCheckpoint], func(c workflow.ReceiveChannel, _ bool) {
			var s GroupCheckpoint
			c.Receive(ctx, &s)
			got = opsSignal{name: SignalGroupCheckpoint, reason: s.Reason}
		})
		sel.AddReceive(chans[SignalAddPartitions], func(c workflow.ReceiveChannel, _ bool) {
			got.name = SignalAddPartitions
			c.Receive(ctx, &got.add)
		})
		sel.AddReceive(chans[SignalRollover], func(c workflow.ReceiveChannel, _ bool) {
			got.name = SignalRollover
			c.Receive(ctx, &got.rollover)
			g.gen = got.rollover.Generation
		})
		sel.AddReceive(chans[SignalGroupStop], func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, nil)
			got.name = SignalGroupStop
			stopped = true
		})
		sel.AddReceive(chans[signalTestKill], func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, nil)
			killed = true
		})
		sel.Select(ctx)
		if killed {
			o.closeRun(id, protocol.GroupClosed{Status: "Terminated"})
			return nil
		}
		o.record(in.Group, got)
		if o.react != nil {
			o.react(ctx, g, got)
		}
	}
	if o.afterStop != nil {
		o.afterStop(ctx, g)
	} else if d := o.finishAfter[in.Group]; d > 0 {
		_ = workflow.Sleep(ctx, d)
	}
	g.send(ctx, SignalGroupFinished, GroupFinished{Group: in.Group, Generation: g.gen})
	o.closeRun(id, protocol.GroupClosed{Status: "Completed"})
	return nil
}

func (o *opsHarness) signalsOf(group int) []opsSignal {
	o.omu.Lock()
	defer o.omu.Unlock()
	return append([]opsSignal(nil), o.signals[group]...)
}

func (o *opsHarness) opsLog() []string {
	o.omu.Lock()
	defer o.omu.Unlock()
	return append([]string(nil), o.ops...)
}

func (o *opsHarness) recordedSpecs() []protocol.RecordSpecInput {
	o.omu.Lock()
	defer o.omu.Unlock()
	return append([]protocol.RecordSpecInput(nil), o.specs...)
}

func (o *opsHarness) setStartOffsets(r protocol.StartOffsetsResult) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.startOffsets = r
}

// snapshots takes status snapshots at the given times.
func (o *opsHarness) snapshots(at ...time.Duration) map[time.Duration]*SupervisorStatus {
	out := map[time.Duration]*SupervisorStatus{}
	for _, d := range at {
		st := &SupervisorStatus{}
		out[d] = st
		o.at(d, func() { *st = o.status() })
	}
	return out
}

func (o *opsHarness) run() {
	o.t.Helper()
	o.omu.Lock()
	o.started0 = o.env.Now()
	o.omu.Unlock()
	perChunk(o.env)
	o.env.ExecuteWorkflow(SupervisorWorkflowName, SupervisorInput{Spec: o.spec})
	require.True(o.t, o.env.IsWorkflowCompleted())
}

// updateOutcome is how an update sent to the supervisor went.
type updateOutcome[T any] struct {
	sent, accepted, completed bool
	rejected                  error
	result                    T
	err                       error
}

// sendUpdate sends an update at d past the start.
func sendUpdate[T any](o *opsHarness, d time.Duration, name string, args ...any) *updateOutcome[T] {
	out := &updateOutcome[T]{}
	o.at(d, func() { updateNow(o, out, name, args...) })
	return out
}

// updateNow sends an update from a delayed callback.
func updateNow[T any](o *opsHarness, out *updateOutcome[T], name string, args ...any) {
	o.omu.Lock()
	o.updates++
	id := fmt.Sprintf("%s-%d", name, o.updates)
	o.omu.Unlock()
	out.sent = true
	o.env.UpdateWorkflow(name, id, &testsuite.TestUpdateCallback{
		OnAccept: func() { out.accepted = true },
		OnReject: func(err error) { out.rejected = err },
		OnComplete: func(v any, err error) {
			out.completed, out.err = true, err
			if err == nil {
				out.result = decodeAs[T](o.t, v)
			}
		},
	}, args...)
}

func decodeAs[T any](t *testing.T, v any) T {
	if x, ok := v.(T); ok {
		return x
	}
	var x T
	b, err := json.Marshal(v)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &x))
	return x
}

// answered requires that the update was accepted and answered without error.
func (u *updateOutcome[T]) answered(t *testing.T) T {
	t.Helper()
	require.True(t, u.sent, "update not sent")
	require.NoError(t, u.rejected)
	require.True(t, u.accepted, "update not accepted")
	require.True(t, u.completed, "update not answered")
	require.NoError(t, u.err)
	return u.result
}

// refused requires that the validator rejected the update, saying want.
func (u *updateOutcome[T]) refused(t *testing.T, want string) {
	t.Helper()
	require.True(t, u.sent, "update not sent")
	require.Error(t, u.rejected, "update not rejected")
	require.Contains(t, u.rejected.Error(), want)
	require.False(t, u.accepted)
	require.False(t, u.completed)
}

func fixedDiscover(partitions []domain.Partition, latest domain.Offsets) func(int) (protocol.DiscoverResult, error) {
	return func(int) (protocol.DiscoverResult, error) {
		return protocol.DiscoverResult{Partitions: partitions, Latest: latest}, nil
	}
}

func offsetMismatch(msg string) error {
	return temporal.NewNonRetryableApplicationError(msg, domain.ErrOffsetMismatch, nil)
}

// continuedAs decodes the input of the run a workflow continued as.
func continuedAs(t *testing.T, env *testsuite.TestWorkflowEnvironment, into any) {
	t.Helper()
	err := env.GetWorkflowError()
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, err, &can, "the workflow continues as new")
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, into))
}

// 1. The checkpoint update answers per group: recorded with the boundary
// after the group's checkpoint-request, empty after checkpoint-declined,
// not-running for a group in its restart back-off. The validator refuses
// unknown groups and a suspended supervisor.
func TestSupervisorCheckpointUpdateAnswersPerGroup(t *testing.T) {
	spec := testSpec()
	spec.IOConfig.TaskCount = 3
	o := newOpsHarness(t, spec)
	o.discover = fixedDiscover([]domain.Partition{domain.P(0), domain.P(1), domain.P(2)}, domain.Offsets{domain.P(0): 500, domain.P(1): 500, domain.P(2): 500})
	o.startOffsets = protocol.StartOffsetsResult{
		Offsets: domain.Offsets{domain.P(0): 100, domain.P(1): 110, domain.P(2): 120}, NextSequenceIDs: map[int]int{0: 7, 1: 3},
	}
	// Group 2's first run fails: at 12s it waits out its back-off.
	o.fail = func(in TaskGroupInput) error {
		if in.Group == 2 && in.Generation == 3 {
			return offsetMismatch("start offsets differ")
		}
		return nil
	}
	o.react = func(ctx workflow.Context, g *stubGroup, s opsSignal) {
		if s.name != SignalGroupCheckpoint {
			return
		}
		switch g.in.Group {
		case 0:
			g.send(ctx, SignalCheckpointRequest, CheckpointRequest{
				Group: 0, Generation: g.gen, SequenceID: g.open, Offsets: domain.Offsets{domain.P(0): 150}, Reason: s.reason,
			})
		case 1:
			g.send(ctx, SignalCheckpointDeclined, CheckpointDeclined{Group: 1, Generation: g.gen})
		}
	}
	all := sendUpdate[CheckpointResult](o, 12*time.Second, UpdateCheckpoint, CheckpointSignal{})
	unknown := sendUpdate[CheckpointResult](o, 13*time.Second, UpdateCheckpoint, CheckpointSignal{Groups: []int{0, 5}})
	one := sendUpdate[CheckpointResult](o, 13500*time.Millisecond, UpdateCheckpoint, CheckpointSignal{Groups: []int{2}})
	o.signal(14500*time.Millisecond, SignalSuspend, nil)
	suspended := sendUpdate[CheckpointResult](o, 30*time.Second, UpdateCheckpoint, CheckpointSignal{})
	snaps := o.snapshots(12500*time.Millisecond, 29*time.Second)
	o.signal(31*time.Second, SignalStop, StopSignal{})
	o.run()
	require.NoError(t, o.env.GetWorkflowError())

	require.Equal(t, CheckpointResult{Groups: []GroupCheckpointResult{
		{Group: 0, Outcome: CheckpointRecorded, SequenceID: 7, End: domain.Offsets{domain.P(0): 150}},
		{Group: 1, Outcome: CheckpointEmpty},
		{Group: 2, Outcome: CheckpointNotRunning},
	}}, all.answered(t))
	require.Equal(t, CheckpointResult{Groups: []GroupCheckpointResult{{Group: 2, Outcome: CheckpointNotRunning}}}, one.answered(t))
	unknown.refused(t, "no task group 5")
	suspended.refused(t, "suspended")

	require.Equal(t, []opsSignal{
		{name: SignalGroupCheckpoint, reason: ReasonUser},
		{name: SignalSetEndOffsets, setEnd: SetEndOffsets{SequenceID: 7, End: domain.Offsets{domain.P(0): 150}, NextSequenceID: 8}},
		{name: SignalGroupStop},
	}, o.signalsOf(0))
	require.Equal(t, []opsSignal{{name: SignalGroupCheckpoint, reason: ReasonUser}, {name: SignalGroupStop}}, o.signalsOf(1))
	require.Empty(t, o.signalsOf(2), "a group that is not running is not signalled")

	at := snaps[12500*time.Millisecond]
	require.Equal(t, []SequenceStatus{
		{Sequence: domain.Sequence{ID: 7, Start: domain.Offsets{domain.P(0): 100}, End: domain.Offsets{domain.P(0): 150}}},
		{Sequence: domain.Sequence{ID: 8, Start: domain.Offsets{domain.P(0): 150}}},
	}, at.Groups[0].Sequences)
	require.False(t, at.Groups[2].Running)
	require.Equal(t, StateSuspended, snaps[29*time.Second].State)
	require.Equal(t, StateStopped, o.status().State)
}

// 2. A stop while a group publishes: the supervisor says STOPPING until the
// group has published and finished, then completes STOPPED. Updates other
// than stop are refused once it is stopping.
func TestSupervisorStopWaitsForPublish(t *testing.T) {
	spec := testSpec()
	o := newOpsHarness(t, spec)
	o.discover = fixedDiscover([]domain.Partition{domain.P(0)}, domain.Offsets{domain.P(0): 500})
	o.startOffsets = protocol.StartOffsetsResult{Offsets: domain.Offsets{domain.P(0): 100}, Committed: domain.Offsets{domain.P(0): 100}, NextSequenceIDs: map[int]int{0: 4}}
	o.afterStop = func(ctx workflow.Context, g *stubGroup) {
		// Close the open sequence at the stop, publish it (20s), say so.
		g.send(ctx, SignalCheckpointRequest, CheckpointRequest{
			Group: 0, Generation: g.gen, SequenceID: g.open, Offsets: domain.Offsets{domain.P(0): 150}, Reason: ReasonStop,
		})
		var se SetEndOffsets
		workflow.GetSignalChannel(ctx, SignalSetEndOffsets).Receive(ctx, &se)
		o.record(0, opsSignal{name: SignalSetEndOffsets, setEnd: se})
		_ = workflow.Sleep(ctx, 19500*time.Millisecond) // ends between two reconciles (see TestBugGroupFinishingAsPeriodEndsCountsAsFailure)
		g.send(ctx, SignalSequencePublished, SequencePublished{
			Group: 0, Generation: g.gen, SequenceID: se.SequenceID, End: se.End, Segments: 2, Rows: 50,
		})
	}
	stop := sendUpdate[OperationResult](o, 5*time.Second, UpdateStop, StopSignal{})
	checkpoint := sendUpdate[CheckpointResult](o, 8*time.Second, UpdateCheckpoint, CheckpointSignal{})
	suspend := sendUpdate[OperationResult](o, 9*time.Second, UpdateSuspend)
	snaps := o.snapshots(15*time.Second, 24*time.Second)
	o.run()
	require.NoError(t, o.env.GetWorkflowError())

	res := stop.answered(t)
	require.Equal(t, StateStopping, res.State)
	checkpoint.refused(t, "stopping")
	suspend.refused(t, "stopping")

	for _, d := range []time.Duration{15 * time.Second, 24 * time.Second} {
		st := snaps[d]
		require.Equal(t, StateStopping, st.State, "at %s", d)
		require.Equal(t, StateStopping, st.DetailedState, "at %s", d)
		require.True(t, st.Groups[0].Running, "at %s", d)
		require.Equal(t, []SequenceStatus{
			{Sequence: domain.Sequence{ID: 4, Start: domain.Offsets{domain.P(0): 100}, End: domain.Offsets{domain.P(0): 150}}},
			{Sequence: domain.Sequence{ID: 5, Start: domain.Offsets{domain.P(0): 150}}},
		}, st.Groups[0].Sequences, "at %s", d)
		require.Zero(t, st.Published.Sequences)
	}
	require.Equal(t, []opsSignal{
		{name: SignalGroupStop},
		{name: SignalSetEndOffsets, setEnd: SetEndOffsets{SequenceID: 4, End: domain.Offsets{domain.P(0): 150}, NextSequenceID: 5}},
	}, o.signalsOf(0))

	final := o.status()
	require.Equal(t, StateStopped, final.State)
	require.Equal(t, StateStopped, final.DetailedState)
	require.False(t, final.Published.LastAt.IsZero(), "the last publish's time is known")
	final.Published.LastAt = time.Time{}
	require.Equal(t, PublishTotals{Sequences: 1, Segments: 2, Rows: 50}, final.Published)
	require.Equal(t, domain.Offsets{domain.P(0): 150}, final.Committed)
	require.False(t, final.Groups[0].Running)
	require.Empty(t, final.RecentErrors)
	require.GreaterOrEqual(t, o.env.Now().Sub(startOf(o)), 24500*time.Millisecond, "completes only after the publish")
}

// startOf is the workflow clock at the harness's start.
func startOf(o *opsHarness) time.Time {
	o.omu.Lock()
	defer o.omu.Unlock()
	return o.started0
}

// 3. Suspend, reset, resume: the suspend answers SUSPENDED once every group
// finished; a reset while running is refused unless forced; a reset while
// suspended moves every partition (all) through ResetOffsets and drops the
// groups' sequences; resume starts the groups again as new generations
// from StartOffsets.
func TestSupervisorSuspendResetResume(t *testing.T) {
	spec := testSpec()
	spec.IOConfig.TaskCount = 2
	o := newOpsHarness(t, spec)
	o.discover = fixedDiscover([]domain.Partition{domain.P(0), domain.P(1), domain.P(2), domain.P(3)}, domain.Offsets{domain.P(0): 500, domain.P(1): 500, domain.P(2): 500, domain.P(3): 500})
	o.startOffsets = protocol.StartOffsetsResult{
		Offsets:         domain.Offsets{domain.P(0): 100, domain.P(1): 110, domain.P(2): 120, domain.P(3): 130},
		Committed:       domain.Offsets{domain.P(0): 100, domain.P(2): 120},
		NextSequenceIDs: map[int]int{0: 7},
	}
	earliest := domain.Offsets{domain.P(0): 5, domain.P(1): 6, domain.P(2): 7, domain.P(3): 8}
	o.resetResult = protocol.ResetOffsetsResult{Offsets: earliest}
	o.afterReset = func() {
		o.setStartOffsets(protocol.StartOffsetsResult{Offsets: earliest, Committed: earliest, NextSequenceIDs: map[int]int{0: 7}})
	}
	o.finishAfter = map[int]time.Duration{1: 3 * time.Second}

	early := sendUpdate[ResetResult](o, 3*time.Second, UpdateReset, ResetRequest{All: ResetEarliest})
	suspend := sendUpdate[OperationResult](o, 5*time.Second, UpdateSuspend)
	reset := sendUpdate[ResetResult](o, 30*time.Second, UpdateReset, ResetRequest{All: ResetEarliest})
	resume := sendUpdate[OperationResult](o, 40*time.Second, UpdateResume)
	snaps := o.snapshots(6*time.Second, 20*time.Second, 35*time.Second, 45*time.Second)
	o.signal(50*time.Second, SignalStop, StopSignal{})
	o.run()
	require.NoError(t, o.env.GetWorkflowError())

	early.refused(t, "suspend")
	require.Equal(t, OperationResult{State: StateSuspended, Message: "every open sequence is published; nothing is read until resume"}, suspend.answered(t))

	suspending := snaps[6*time.Second]
	require.Equal(t, StateStopping, suspending.State)
	require.Equal(t, "SUSPENDING", suspending.DetailedState)
	require.True(t, suspending.Groups[1].Running, "group 1 finishes 3s after its stop")

	st := snaps[20*time.Second]
	require.Equal(t, StateSuspended, st.State)
	require.Equal(t, StateSuspended, st.DetailedState)
	for _, g := range st.Groups {
		require.False(t, g.Running)
	}
	require.Len(t, st.Groups[0].Sequences, 1)

	res := reset.answered(t)
	require.Equal(t, earliest, res.Offsets)
	require.Zero(t, res.DroppedSequences, "the open sequences were empty")
	require.Equal(t, []protocol.ResetOffsetsInput{{
		DataSource: "events", Topic: "events",
		Targets: map[domain.Partition]string{domain.P(0): ResetEarliest, domain.P(1): ResetEarliest, domain.P(2): ResetEarliest, domain.P(3): ResetEarliest},
	}}, o.resets)
	require.Empty(t, o.terminates, "nothing runs while suspended")
	afterReset := snaps[35*time.Second]
	require.Equal(t, StateSuspended, afterReset.State)
	require.Equal(t, earliest, afterReset.Committed)
	for _, g := range afterReset.Groups {
		require.Empty(t, g.Sequences, "group %d's sequences are dropped", g.Group)
	}

	require.Equal(t, OperationResult{State: StateRunning, Message: "groups start again from the committed offsets"}, resume.answered(t))
	started := o.started()
	require.Len(t, started, 4)
	require.Equal(t, TaskGroupInput{
		Spec: spec, Group: 0, Generation: 3, Partitions: []domain.Partition{domain.P(0), domain.P(2)},
		Sequences: []domain.Sequence{{ID: 8, Start: domain.Offsets{domain.P(0): 5, domain.P(2): 7}}}, NextSequenceID: 9,
	}, started[2])
	require.Equal(t, TaskGroupInput{
		Spec: spec, Group: 1, Generation: 4, Partitions: []domain.Partition{domain.P(1), domain.P(3)},
		Sequences: []domain.Sequence{{ID: 1, Start: domain.Offsets{domain.P(1): 6, domain.P(3): 8}}}, NextSequenceID: 2,
	}, started[3])
	running := snaps[45*time.Second]
	require.Equal(t, StateRunning, running.State)
	for _, g := range running.Groups {
		require.True(t, g.Running)
		require.Zero(t, g.Failures)
	}
	require.Equal(t, StateStopped, o.status().State)
}

// 4. A forced reset while groups run ends the affected groups (and only
// them), then moves the offsets, then starts those groups again from the
// new offsets at once: no failure is counted.
func TestSupervisorForcedResetWhileRunning(t *testing.T) {
	spec := testSpec()
	spec.IOConfig.TaskCount = 2
	o := newOpsHarness(t, spec)
	o.discover = fixedDiscover([]domain.Partition{domain.P(0), domain.P(1), domain.P(2), domain.P(3)}, domain.Offsets{domain.P(0): 500, domain.P(1): 500, domain.P(2): 500, domain.P(3): 500})
	o.startOffsets = protocol.StartOffsetsResult{
		Offsets: domain.Offsets{domain.P(0): 100, domain.P(1): 110, domain.P(2): 120, domain.P(3): 130}, NextSequenceIDs: map[int]int{0: 7},
	}
	moved := domain.Offsets{domain.P(0): 3, domain.P(2): 100}
	o.resetResult = protocol.ResetOffsetsResult{Offsets: moved}
	o.afterReset = func() {
		o.setStartOffsets(protocol.StartOffsetsResult{
			Offsets: domain.Offsets{domain.P(0): 3, domain.P(1): 110, domain.P(2): 100, domain.P(3): 130}, Committed: moved, NextSequenceIDs: map[int]int{0: 7},
		})
	}
	o.signal(2*time.Second, SignalProgress, GroupProgress{
		Group: 0, Generation: 1, Position: domain.Offsets{domain.P(0): 140, domain.P(2): 150}, ReadTotals: ReadTotals{Records: 70, Rows: 70}, SequenceRows: map[int]int64{7: 70},
	})
	reset := sendUpdate[ResetResult](o, 5*time.Second, UpdateReset, ResetRequest{
		Partitions: map[domain.Partition]string{domain.P(0): ResetEarliest, domain.P(2): "100"}, Force: true,
	})
	snaps := o.snapshots(6*time.Second, 16*time.Second)
	o.signal(20*time.Second, SignalStop, StopSignal{})
	o.run()
	require.NoError(t, o.env.GetWorkflowError())

	res := reset.answered(t)
	require.Equal(t, moved, res.Offsets)
	require.Equal(t, 1, res.DroppedSequences, "group 0's open sequence held rows")
	g0 := TaskGroupWorkflowID(spec.ID, 0)
	require.Equal(t, []protocol.TerminateGroupsInput{{WorkflowIDs: []string{g0}, Reason: "forced reset of their partitions' offsets"}}, o.terminates)
	require.Equal(t, []protocol.ResetOffsetsInput{{
		DataSource: "events", Topic: "events", Targets: map[domain.Partition]string{domain.P(0): ResetEarliest, domain.P(2): "100"},
	}}, o.resets)

	ops := o.opsLog()
	iTerm, iReset, iStart := -1, -1, -1
	for i, op := range ops {
		switch {
		case op == fmt.Sprintf("terminate %v", []string{g0}) && iTerm < 0:
			iTerm = i
		case op == "reset-offsets" && iReset < 0:
			iReset = i
		case op == "start g0 gen3" && iStart < 0:
			iStart = i
		}
	}
	require.True(t, 0 <= iTerm && iTerm < iReset && iReset < iStart, "terminate, reset, restart in that order: %v", ops)

	started := o.started()
	require.Len(t, started, 3, "group 0 restarted once, group 1 untouched: %+v", started)
	require.Equal(t, TaskGroupInput{
		Spec: spec, Group: 0, Generation: 3, Partitions: []domain.Partition{domain.P(0), domain.P(2)},
		Sequences: []domain.Sequence{{ID: 8, Start: domain.Offsets{domain.P(0): 3, domain.P(2): 100}}}, NextSequenceID: 9,
	}, started[2])
	require.Equal(t, []opsSignal{{name: SignalGroupStop}}, o.signalsOf(1), "group 1 is left alone until the stop")

	for _, d := range []time.Duration{6 * time.Second, 16 * time.Second} {
		st := snaps[d]
		require.Equal(t, StateRunning, st.State, "at %s", d)
		require.Empty(t, st.RecentErrors, "at %s", d)
		require.Equal(t, GroupStatus{
			Group: 0, WorkflowID: g0, Generation: 3, Partitions: []domain.Partition{domain.P(0), domain.P(2)},
			Sequences: []SequenceStatus{{Sequence: domain.Sequence{ID: 8, Start: domain.Offsets{domain.P(0): 3, domain.P(2): 100}}}},
			Running:   true, Failures: 0,
		}, st.Groups[0], "at %s", d)
		require.Equal(t, 2, st.Groups[1].Generation)
		require.True(t, st.Groups[1].Running)
		require.Equal(t, moved, subset(st.Committed, []domain.Partition{domain.P(0), domain.P(2)}))
		require.Empty(t, st.Current, "reset partitions have no current offset")
	}
	require.Equal(t, StateStopped, o.status().State)
}

// 5. update-spec: the validator refuses another topic, datasource or id; the
// same spec changes nothing and is not recorded again; a new taskCount is
// recorded, the groups drain, and the groups are laid out again for it.
func TestSupervisorUpdateSpecTaskCount(t *testing.T) {
	spec := testSpec()
	o := newOpsHarness(t, spec)
	o.discover = fixedDiscover([]domain.Partition{domain.P(0), domain.P(1)}, domain.Offsets{domain.P(0): 500, domain.P(1): 500})
	o.startOffsets = protocol.StartOffsetsResult{Offsets: domain.Offsets{domain.P(0): 100, domain.P(1): 110}, NextSequenceIDs: map[int]int{0: 7}}
	o.finishAfter = map[int]time.Duration{0: 3 * time.Second}

	other := func(f func(*domain.Spec)) UpdateSpecRequest {
		s := testSpec()
		f(&s)
		return UpdateSpecRequest{Spec: s}
	}
	topic := sendUpdate[UpdateSpecResult](o, 2*time.Second, UpdateSpec, other(func(s *domain.Spec) { s.IOConfig.Topic = "other" }))
	ds := sendUpdate[UpdateSpecResult](o, 2100*time.Millisecond, UpdateSpec, other(func(s *domain.Spec) { s.DataSchema.DataSource = "other" }))
	id := sendUpdate[UpdateSpecResult](o, 2200*time.Millisecond, UpdateSpec, other(func(s *domain.Spec) { s.ID = "other" }))
	same := sendUpdate[UpdateSpecResult](o, 3*time.Second, UpdateSpec, UpdateSpecRequest{Spec: testSpec()})
	var specsAfterSame int
	o.at(3500*time.Millisecond, func() { specsAfterSame = len(o.recordedSpecs()) })
	newSpec := testSpec()
	newSpec.IOConfig.TaskCount = 2
	changed := sendUpdate[UpdateSpecResult](o, 5*time.Second, UpdateSpec, UpdateSpecRequest{Spec: newSpec})
	snaps := o.snapshots(6*time.Second, 12*time.Second)
	o.signal(20*time.Second, SignalStop, StopSignal{})
	o.run()
	require.NoError(t, o.env.GetWorkflowError())

	topic.refused(t, "ioConfig.topic")
	ds.refused(t, "dataSchema.dataSource")
	id.refused(t, "id:")
	require.False(t, same.answered(t).Changed)
	require.Equal(t, 1, specsAfterSame, "an identical spec is not recorded again")
	require.True(t, changed.answered(t).Changed)
	require.Equal(t, []protocol.RecordSpecInput{{SupervisorID: spec.ID, Spec: spec}, {SupervisorID: spec.ID, Spec: newSpec}}, o.recordedSpecs())

	applying := snaps[6*time.Second]
	require.Equal(t, StateRunning, applying.State)
	require.Equal(t, "APPLYING_SPEC", applying.DetailedState)
	require.True(t, applying.PendingSpec)
	require.Equal(t, 1, applying.Spec.IOConfig.TaskCount, "the old spec runs until the groups drained")
	require.Equal(t, []opsSignal{{name: SignalGroupStop}}, o.signalsOf(0)[:1])

	started := o.started()
	require.Len(t, started, 3)
	require.Equal(t, TaskGroupInput{
		Spec: spec, Group: 0, Generation: 1, Partitions: []domain.Partition{domain.P(0), domain.P(1)},
		Sequences: []domain.Sequence{{ID: 7, Start: domain.Offsets{domain.P(0): 100, domain.P(1): 110}}}, NextSequenceID: 8,
	}, started[0])
	require.Equal(t, TaskGroupInput{
		Spec: newSpec, Group: 0, Generation: 2, Partitions: []domain.Partition{domain.P(0)},
		Sequences: []domain.Sequence{{ID: 7, Start: domain.Offsets{domain.P(0): 100}}}, NextSequenceID: 8,
	}, started[1])
	require.Equal(t, TaskGroupInput{
		Spec: newSpec, Group: 1, Generation: 3, Partitions: []domain.Partition{domain.P(1)},
		Sequences: []domain.Sequence{{ID: 0, Start: domain.Offsets{domain.P(1): 110}}}, NextSequenceID: 1,
	}, started[2])

	applied := snaps[12*time.Second]
	require.Equal(t, StateRunning, applied.State)
	require.Equal(t, StateRunning, applied.DetailedState)
	require.False(t, applied.PendingSpec)
	require.Equal(t, newSpec, applied.Spec)
	require.Len(t, applied.Groups, 2)
	for _, g := range applied.Groups {
		require.True(t, g.Running)
		require.Equal(t, []domain.Partition{domain.P(int32(g.Group))}, g.Partitions)
	}
	require.Empty(t, applied.RecentErrors)
	require.Equal(t, StateStopped, o.status().State)
}

// 6. A group that failed on an offset mismatch: the failure is in the
// recent errors, the group restarts after its back-off as the next
// generation from StartOffsets; three failures in a row make the supervisor
// UNHEALTHY_TASKS; a publish by the group makes it RUNNING again.
func TestSupervisorGroupFailuresAndRecovery(t *testing.T) {
	spec := testSpec()
	o := newOpsHarness(t, spec)
	o.discover = fixedDiscover([]domain.Partition{domain.P(0)}, domain.Offsets{domain.P(0): 500})
	o.startOffsets = protocol.StartOffsetsResult{Offsets: domain.Offsets{domain.P(0): 100}, Committed: domain.Offsets{domain.P(0): 100}, NextSequenceIDs: map[int]int{0: 7}}
	const why = "start offsets p0:100 differ from the stored p0:90"
	o.fail = func(in TaskGroupInput) error {
		if in.Generation <= 3 {
			// The stored offsets moved (another writer): restarts read from there.
			o.setStartOffsets(protocol.StartOffsetsResult{Offsets: domain.Offsets{domain.P(0): 90}, Committed: domain.Offsets{domain.P(0): 90}, NextSequenceIDs: map[int]int{0: 9}})
			return offsetMismatch(why)
		}
		return nil
	}
	o.signal(75*time.Second, SignalSequencePublished, SequencePublished{
		Group: 0, Generation: 4, SequenceID: 9, End: domain.Offsets{domain.P(0): 150}, Segments: 1, Rows: 60,
	})
	snaps := o.snapshots(15*time.Second, 25*time.Second, 55*time.Second, 72*time.Second, 85*time.Second)
	o.signal(90*time.Second, SignalStop, StopSignal{})
	o.run()
	require.NoError(t, o.env.GetWorkflowError())

	first := snaps[15*time.Second]
	require.Equal(t, StateRunning, first.State)
	require.Len(t, first.RecentErrors, 1)
	require.Equal(t, "group 0 (generation 1) failed: OffsetMismatch: "+why+"; restarting it from the committed offsets in 5s", first.RecentErrors[0].Message)
	require.False(t, first.Groups[0].Running)
	require.Equal(t, 1, first.Groups[0].Failures)

	started := o.started()
	require.Len(t, started, 4, "generation 1 and three restarts")
	for i, in := range started {
		require.Equal(t, i+1, in.Generation)
	}
	require.Equal(t, TaskGroupInput{
		Spec: spec, Group: 0, Generation: 2, Partitions: []domain.Partition{domain.P(0)},
		Sequences: []domain.Sequence{{ID: 9, Start: domain.Offsets{domain.P(0): 90}}}, NextSequenceID: 10,
	}, started[1], "restarted from StartOffsets")
	require.Equal(t, started[1].Sequences, started[3].Sequences)
	second := snaps[25*time.Second]
	require.True(t, second.Groups[0].Running)
	require.Equal(t, 2, second.Groups[0].Generation)
	require.Equal(t, domain.Offsets{domain.P(0): 90}, second.Committed)

	unhealthy := snaps[55*time.Second]
	require.Equal(t, StateUnhealthyTasks, unhealthy.State)
	require.Equal(t, 3, unhealthy.Groups[0].Failures)
	require.Len(t, unhealthy.RecentErrors, 3)
	require.Contains(t, unhealthy.RecentErrors[2].Message, "group 0 (generation 3) failed: OffsetMismatch: "+why)
	require.Contains(t, unhealthy.RecentErrors[2].Message, "in 20s")

	restarted := snaps[72*time.Second]
	require.Equal(t, StateUnhealthyTasks, restarted.State, "still unhealthy until the group publishes")
	require.True(t, restarted.Groups[0].Running)
	require.Equal(t, 4, restarted.Groups[0].Generation)

	healthy := snaps[85*time.Second]
	require.Equal(t, StateRunning, healthy.State)
	require.Zero(t, healthy.Groups[0].Failures)
	healthy.Published.LastAt = time.Time{}
	require.Equal(t, PublishTotals{Sequences: 1, Segments: 1, Rows: 60}, healthy.Published)
	require.Equal(t, StateStopped, o.status().State)
}

// 7. New partitions join their groups: a running group gets add-partitions
// for its open sequence with the start offsets of the new partitions.
func TestSupervisorNewPartitionsJoinRunningGroups(t *testing.T) {
	spec := testSpec()
	spec.IOConfig.TaskCount = 2
	o := newOpsHarness(t, spec)
	o.discover = func(n int) (protocol.DiscoverResult, error) {
		if n == 1 {
			return protocol.DiscoverResult{Partitions: []domain.Partition{domain.P(0), domain.P(1), domain.P(2), domain.P(3)}, Latest: domain.Offsets{domain.P(0): 500, domain.P(1): 500, domain.P(2): 500, domain.P(3): 500}}, nil
		}
		return protocol.DiscoverResult{Partitions: []domain.Partition{domain.P(0), domain.P(1), domain.P(2), domain.P(3), domain.P(4), domain.P(5)}, Latest: domain.Offsets{domain.P(0): 500, domain.P(1): 500, domain.P(2): 500, domain.P(3): 500, domain.P(4): 20, domain.P(5): 20}}, nil
	}
	o.startOffsets = protocol.StartOffsetsResult{
		Offsets: domain.Offsets{domain.P(0): 100, domain.P(1): 110, domain.P(2): 120, domain.P(3): 130, domain.P(4): 5, domain.P(5): 6}, NextSequenceIDs: map[int]int{0: 7},
	}
	o.signal(2*time.Second, SignalCheckpointRequest, CheckpointRequest{
		Group: 0, Generation: 1, SequenceID: 7, Offsets: domain.Offsets{domain.P(0): 150, domain.P(2): 160}, Reason: ReasonMaxRows,
	})
	snaps := o.snapshots(12 * time.Second)
	o.signal(20*time.Second, SignalStop, StopSignal{})
	o.run()
	require.NoError(t, o.env.GetWorkflowError())

	require.Equal(t, []opsSignal{
		{name: SignalSetEndOffsets, setEnd: SetEndOffsets{SequenceID: 7, End: domain.Offsets{domain.P(0): 150, domain.P(2): 160}, NextSequenceID: 8}},
		{name: SignalAddPartitions, add: AddPartitions{SequenceID: 8, Offsets: domain.Offsets{domain.P(4): 5}}},
		{name: SignalGroupStop},
	}, o.signalsOf(0))
	require.Equal(t, []opsSignal{
		{name: SignalAddPartitions, add: AddPartitions{SequenceID: 0, Offsets: domain.Offsets{domain.P(5): 6}}},
		{name: SignalGroupStop},
	}, o.signalsOf(1))

	st := snaps[12*time.Second]
	require.Equal(t, []domain.Partition{domain.P(0), domain.P(1), domain.P(2), domain.P(3), domain.P(4), domain.P(5)}, st.Partitions)
	require.Equal(t, []domain.Partition{domain.P(0), domain.P(2), domain.P(4)}, st.Groups[0].Partitions)
	require.Equal(t, []domain.Partition{domain.P(1), domain.P(3), domain.P(5)}, st.Groups[1].Partitions)
	require.Equal(t, []SequenceStatus{
		{Sequence: domain.Sequence{ID: 7, Start: domain.Offsets{domain.P(0): 100, domain.P(2): 120}, End: domain.Offsets{domain.P(0): 150, domain.P(2): 160}}},
		{Sequence: domain.Sequence{ID: 8, Start: domain.Offsets{domain.P(0): 150, domain.P(2): 160, domain.P(4): 5}}},
	}, st.Groups[0].Sequences)
	require.Equal(t, []SequenceStatus{{Sequence: domain.Sequence{ID: 0, Start: domain.Offsets{domain.P(1): 110, domain.P(3): 130, domain.P(5): 6}}}}, st.Groups[1].Sequences)
	require.Len(t, o.started(), 2, "the running groups are not restarted")
	require.Len(t, st.RecentErrors, 1)
	require.Equal(t, "new partitions [4 5] joined their groups", st.RecentErrors[0].Message)
}

// 8. Discover failing (a retryable error, retried then given up) after it
// once succeeded: UNHEALTHY_SUPERVISOR, LOST_CONTACT_WITH_STREAM; RUNNING
// again once Discover answers.
func TestSupervisorLostContactWithStream(t *testing.T) {
	spec := testSpec()
	o := newOpsHarness(t, spec)
	ok := fixedDiscover([]domain.Partition{domain.P(0)}, domain.Offsets{domain.P(0): 500})
	o.discover = func(n int) (protocol.DiscoverResult, error) {
		if n >= 2 && n <= 4 {
			return protocol.DiscoverResult{}, errors.New("kafka: brokers unreachable")
		}
		return ok(n)
	}
	o.startOffsets = protocol.StartOffsetsResult{Offsets: domain.Offsets{domain.P(0): 100}}
	var lostCalls, backCalls int
	snaps := o.snapshots(18*time.Second, 28*time.Second)
	o.at(18*time.Second, func() { lostCalls = o.discovers() })
	o.at(28*time.Second, func() { backCalls = o.discovers() })
	o.signal(30*time.Second, SignalStop, StopSignal{})
	o.run()
	require.NoError(t, o.env.GetWorkflowError())

	lost := snaps[18*time.Second]
	require.Equal(t, StateUnhealthySupervisor, lost.State)
	require.Equal(t, "LOST_CONTACT_WITH_STREAM", lost.DetailedState)
	require.Len(t, lost.RecentErrors, 1)
	require.Contains(t, lost.RecentErrors[0].Message, "kafka: brokers unreachable")
	require.Equal(t, 4, lostCalls, "one success, then three attempts")
	require.True(t, lost.Groups[0].Running, "the group runs on")

	back := snaps[28*time.Second]
	require.Equal(t, 5, backCalls)
	require.Equal(t, StateRunning, back.State)
	require.Equal(t, StateRunning, back.DetailedState)
	require.Len(t, o.started(), 1)
	require.Equal(t, StateStopped, o.status().State)
}

// 9. Continue-as-new waits for the running update, then handles the
// checkpoint-request that came in meanwhile (it answers the group) before
// it continues; the carried state holds the recorded boundary and the
// pending spec.
func TestSupervisorContinueAsNewAnswersBufferedRequest(t *testing.T) {
	spec := testSpec()
	o := newOpsHarness(t, spec)
	o.env.SetDetachedChildWait(false)
	o.discover = fixedDiscover([]domain.Partition{domain.P(0)}, domain.Offsets{domain.P(0): 500})
	o.startOffsets = protocol.StartOffsetsResult{Offsets: domain.Offsets{domain.P(0): 100}, NextSequenceIDs: map[int]int{0: 7}}
	// The second RecordSpec (the update's) takes 5s: 8s to 13s.
	var calls int
	o.env.OnActivity(protocol.ActivityRecordSpec, mock.Anything, mock.Anything).
		Return(func(_ context.Context, in protocol.RecordSpecInput) (protocol.RecordSpecResult, error) {
			o.omu.Lock()
			defer o.omu.Unlock()
			o.specs = append(o.specs, in)
			return protocol.RecordSpecResult{Recorded: true, Version: len(o.specs)}, nil
		}).
		AfterFn(func() time.Duration {
			o.omu.Lock()
			defer o.omu.Unlock()
			calls++
			if calls == 1 {
				return 0
			}
			return 5 * time.Second
		})
	o.at(5*time.Second, func() { o.env.SetContinueAsNewSuggested(true) })
	newSpec := testSpec()
	newSpec.TuningConfig.MaxRowsPerSegment = 1000
	update := sendUpdate[UpdateSpecResult](o, 8*time.Second, UpdateSpec, UpdateSpecRequest{Spec: newSpec})
	// At 10s the period ends and the run waits for the update to continue
	// as new; the request comes in while it waits.
	req := CheckpointRequest{Group: 0, Generation: 1, SequenceID: 7, Offsets: domain.Offsets{domain.P(0): 150}, Reason: ReasonMaxRows}
	o.signal(11*time.Second, SignalCheckpointRequest, req)
	o.run()

	require.True(t, update.answered(t).Changed)
	var next SupervisorInput
	continuedAs(t, o.env, &next)
	require.Equal(t, spec, next.Spec, "the new spec applies after a drain, in the next run")
	require.NotNil(t, next.Carry)
	c := next.Carry
	require.Equal(t, &newSpec, c.PendingSpec)
	require.Equal(t, []domain.Sequence{
		{ID: 7, Start: domain.Offsets{domain.P(0): 100}, End: domain.Offsets{domain.P(0): 150}},
		{ID: 8, Start: domain.Offsets{domain.P(0): 150}},
	}, c.Groups[0].Sequences)
	require.Equal(t, 9, c.Groups[0].NextSequenceID)
	require.Equal(t, 1, c.Groups[0].Generation)
	require.True(t, c.Groups[0].Running)
	require.Equal(t, []opsSignal{
		{name: SignalSetEndOffsets, setEnd: SetEndOffsets{SequenceID: 7, End: domain.Offsets{domain.P(0): 150}, NextSequenceID: 8}},
	}, o.signalsOf(0), "the group got its answer before the run ended")
	elapsed := o.env.Now().Sub(startOf(o))
	require.GreaterOrEqual(t, elapsed, 13*time.Second, "not before the update finished")
	require.Less(t, elapsed, 20*time.Second)
}

// 10. taskDuration: once a generation is that old the group is asked to
// roll over to a new generation; the new generation's first progress makes
// it the one shown; the next rollover counts from then.
func TestSupervisorTaskDurationRollover(t *testing.T) {
	spec := testSpec()
	spec.IOConfig.TaskDuration = domain.Duration(30 * time.Second)
	o := newOpsHarness(t, spec)
	o.discover = fixedDiscover([]domain.Partition{domain.P(0)}, domain.Offsets{domain.P(0): 500})
	o.startOffsets = protocol.StartOffsetsResult{Offsets: domain.Offsets{domain.P(0): 100}, NextSequenceIDs: map[int]int{0: 7}}
	var atRollover, before70 []opsSignal
	o.at(34*time.Second, func() { atRollover = o.signalsOf(0) })
	o.at(65*time.Second, func() { before70 = o.signalsOf(0) })
	o.signal(35*time.Second, SignalProgress, GroupProgress{
		Group: 0, Generation: 2, Position: domain.Offsets{domain.P(0): 180}, ReadTotals: ReadTotals{Records: 5, Rows: 4, Unparseable: 1}, SequenceRows: map[int]int64{8: 4},
	})
	snaps := o.snapshots(34*time.Second, 36*time.Second, 72*time.Second)
	o.signal(75*time.Second, SignalStop, StopSignal{})
	o.run()
	require.NoError(t, o.env.GetWorkflowError())

	require.Equal(t, []opsSignal{{name: SignalRollover, rollover: Rollover{Generation: 2}}}, atRollover)
	require.Equal(t, atRollover, before70, "generation 2 started at 35s: no rollover before 65s")
	require.Equal(t, 1, snaps[34*time.Second].Groups[0].Generation, "generation 1 until generation 2 speaks")

	st := snaps[36*time.Second]
	require.Equal(t, 2, st.Groups[0].Generation)
	require.True(t, st.Groups[0].Running)
	require.Equal(t, domain.Offsets{domain.P(0): 180}, st.Current)
	require.Equal(t, ReadTotals{Records: 5, Rows: 4, Unparseable: 1}, st.Read)
	require.Equal(t, []SequenceStatus{{Sequence: domain.Sequence{ID: 7, Start: domain.Offsets{domain.P(0): 100}}}}, st.Groups[0].Sequences)

	require.Equal(t, []opsSignal{
		{name: SignalRollover, rollover: Rollover{Generation: 2}},
		{name: SignalRollover, rollover: Rollover{Generation: 3}},
		{name: SignalGroupStop},
	}, o.signalsOf(0), "the second rollover 30s after generation 2 started (at 35s), at the 70s reconcile")
	require.Equal(t, 2, snaps[72*time.Second].Groups[0].Generation)
	require.Len(t, o.started(), 1, "a rollover starts no child")
	final := o.status()
	require.Equal(t, StateStopped, final.State, "generation 3's group-finished counts")
	require.Empty(t, final.RecentErrors)
}

// A checkpoint request that carries its group's progress report counts it
// as a progress signal would, and the next sequence takes the id the group
// proposed (it already reads into it); a proposal below the supervisor's
// own next id is not taken.
func TestSupervisorTakesProgressAndNextIDFromARequest(t *testing.T) {
	spec := testSpec()
	o := newOpsHarness(t, spec)
	o.discover = fixedDiscover([]domain.Partition{domain.P(0)}, domain.Offsets{domain.P(0): 500})
	o.startOffsets = protocol.StartOffsetsResult{Offsets: domain.Offsets{domain.P(0): 100}, NextSequenceIDs: map[int]int{0: 7}}
	o.signal(5*time.Second, SignalCheckpointRequest, CheckpointRequest{
		Group: 0, Generation: 1, SequenceID: 7, Offsets: domain.Offsets{domain.P(0): 150}, Reason: ReasonHandoff, NextSequenceID: 12,
		Progress: &GroupProgress{Group: 0, Generation: 1, Position: domain.Offsets{domain.P(0): 150}, ReadTotals: ReadTotals{Records: 50, Rows: 48, Unparseable: 2}, SequenceRows: map[int]int64{7: 48}},
	})
	o.signal(8*time.Second, SignalCheckpointRequest, CheckpointRequest{
		Group: 0, Generation: 1, SequenceID: 12, Offsets: domain.Offsets{domain.P(0): 160}, Reason: ReasonHandoff, NextSequenceID: 3,
	})
	snaps := o.snapshots(6 * time.Second)
	o.signal(20*time.Second, SignalStop, StopSignal{})
	o.run()
	require.NoError(t, o.env.GetWorkflowError())

	st := snaps[6*time.Second]
	require.Equal(t, ReadTotals{Records: 50, Rows: 48, Unparseable: 2}, st.Read)
	require.Equal(t, domain.Offsets{domain.P(0): 150}, st.Current)
	var answers []SetEndOffsets
	for _, s := range o.signalsOf(0) {
		if s.name == SignalSetEndOffsets {
			answers = append(answers, s.setEnd)
		}
	}
	require.Equal(t, []SetEndOffsets{
		{SequenceID: 7, End: domain.Offsets{domain.P(0): 150}, NextSequenceID: 12},
		{SequenceID: 12, End: domain.Offsets{domain.P(0): 160}, NextSequenceID: 13},
	}, answers)
}
