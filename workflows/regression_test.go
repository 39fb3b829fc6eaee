package workflows

// Regression tests for bugs found in the workflows; each comment says what
// went wrong.

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// Regression: a suspend update that arrives once continue-as-new is suggested is
// answered only after suspendWait (5 minutes), with the state RUNNING, and
// the groups are never told to stop. The suspend pokes the loop, waitPeriod
// returns, and the loop goes to continueAsNew before reconciling;
// continueAsNew waits for the handlers (finishHandlers), but updateSuspend
// waits for State == SUSPENDED, which only reconcile (drainGroups,
// updateState) can bring about.
//
// Fix: do not start continue-as-new while a handler runs: in the loop,
// check workflow.AllHandlersFinished(ctx) next to GetContinueAsNewSuggested
// and go on reconciling until it holds (the handlers finish, then the run
// continues as new at the next period's end).
func TestSuspendUpdateDuringContinueAsNewTimesOut(t *testing.T) {
	spec := testSpec()
	o := newOpsHarness(t, spec)
	o.env.SetDetachedChildWait(false)
	o.discover = fixedDiscover([]domain.Partition{domain.P(0)}, domain.Offsets{domain.P(0): 500})
	o.startOffsets = protocol.StartOffsetsResult{Offsets: domain.Offsets{domain.P(0): 100}, NextSequenceIDs: map[int]int{0: 7}}
	o.finishAfter = map[int]time.Duration{0: 3 * time.Second} // finishes 3s after its stop
	o.at(5*time.Second, func() { o.env.SetContinueAsNewSuggested(true) })
	suspend := sendUpdate[OperationResult](o, 9*time.Second, UpdateSuspend)
	o.run()

	require.Equal(t, OperationResult{State: StateSuspended, Message: "every open sequence is published; nothing is read until resume"},
		suspend.answered(t), "the group finishes 3s after the suspend")
	require.Equal(t, []opsSignal{{name: SignalGroupStop}}, o.signalsOf(0))
	var next SupervisorInput
	continuedAs(t, o.env, &next)
	require.True(t, next.Carry.Groups[0].Finished)
	require.Less(t, o.env.Now().Sub(startOf(o)), time.Minute, "continues as new soon after the group finished")
}

// Regression: a group that completes (after a stop) in the same workflow task as
// the end of the supervisor's period is counted as a failure. waitPeriod's
// selector takes the timer first, so the group-finished signal that came
// with it stays buffered; reconcile then asks GroupStates, which says the
// group ended (Completed), and refreshRunning records "group 0 (generation
// 1) ended: Completed; restarting it ..." and a failure in a row. The
// group-finished is never handled.
//
// Fix: handle buffered signals before refreshRunning (e.g. s.drain(ctx, sig)
// at the start of reconcile), and/or treat a run that ended Completed after
// it was told to stop (rec.StopSent) as finished, not failed.
func TestGroupFinishingAsPeriodEndsCountsAsFailure(t *testing.T) {
	spec := testSpec()
	o := newOpsHarness(t, spec)
	o.discover = fixedDiscover([]domain.Partition{domain.P(0)}, domain.Offsets{domain.P(0): 500})
	o.startOffsets = protocol.StartOffsetsResult{Offsets: domain.Offsets{domain.P(0): 100}, NextSequenceIDs: map[int]int{0: 4}}
	o.afterStop = func(ctx workflow.Context, g *stubGroup) {
		g.send(ctx, SignalCheckpointRequest, CheckpointRequest{
			Group: 0, Generation: g.gen, SequenceID: g.open, Offsets: domain.Offsets{domain.P(0): 150}, Reason: ReasonStop,
		})
		var se SetEndOffsets
		workflow.GetSignalChannel(ctx, SignalSetEndOffsets).Receive(ctx, &se)
		_ = workflow.Sleep(ctx, 20*time.Second) // the publish ends at 25s, as the period does
		g.send(ctx, SignalSequencePublished, SequencePublished{
			Group: 0, Generation: g.gen, SequenceID: se.SequenceID, End: se.End, Segments: 1, Rows: 50,
		})
	}
	o.signal(5*time.Second, SignalStop, StopSignal{})
	o.run()
	require.NoError(t, o.env.GetWorkflowError())

	final := o.status()
	require.Equal(t, StateStopped, final.State)
	require.Empty(t, final.RecentErrors, "a group that finished after a stop did not fail")
	require.Zero(t, final.Groups[0].Failures)
}

// Regression: the status shows no lag for a partition that joined a group while
// an older sequence of the group is unpublished. partitionLag takes the
// base of a partition without a committed offset from the group's first
// sequence only, and the new partition is only in the open (last) one, so
// partitionLag has no entry for it and aggregateLag misses it.
//
// Fix: in partitionLag, take each partition's base from the first sequence
// of the group that holds it (for each sequence in order, set base[p] when
// not yet set).
func TestPartitionLagOmitsPartitionAddedToOpenSequence(t *testing.T) {
	spec := testSpec()
	o := newOpsHarness(t, spec)
	o.discover = func(n int) (protocol.DiscoverResult, error) {
		if n == 1 {
			return protocol.DiscoverResult{Partitions: []domain.Partition{domain.P(0)}, Latest: domain.Offsets{domain.P(0): 500}}, nil
		}
		return protocol.DiscoverResult{Partitions: []domain.Partition{domain.P(0), domain.P(1)}, Latest: domain.Offsets{domain.P(0): 500, domain.P(1): 20}}, nil
	}
	o.startOffsets = protocol.StartOffsetsResult{Offsets: domain.Offsets{domain.P(0): 100, domain.P(1): 5}, NextSequenceIDs: map[int]int{0: 7}}
	// Sequence 7 closes (publishing), sequence 8 is open when partition 1 joins.
	o.signal(2*time.Second, SignalCheckpointRequest, CheckpointRequest{
		Group: 0, Generation: 1, SequenceID: 7, Offsets: domain.Offsets{domain.P(0): 150}, Reason: ReasonMaxRows,
	})
	snaps := o.snapshots(12 * time.Second)
	o.signal(20*time.Second, SignalStop, StopSignal{})
	o.run()
	require.NoError(t, o.env.GetWorkflowError())

	st := snaps[12*time.Second]
	require.Equal(t, []SequenceStatus{
		{Sequence: domain.Sequence{ID: 7, Start: domain.Offsets{domain.P(0): 100}, End: domain.Offsets{domain.P(0): 150}}},
		{Sequence: domain.Sequence{ID: 8, Start: domain.Offsets{domain.P(0): 150, domain.P(1): 5}}},
	}, st.Groups[0].Sequences)
	require.Equal(t, map[domain.Partition]int64{domain.P(0): 400, domain.P(1): 15}, st.PartitionLag, "partition 1 is read from 5, its latest is 20")
	require.Equal(t, int64(415), st.Lag)
}

// Regression: a reset without force that comes right after a resume is accepted,
// because validateReset looks at s.c.State, which says SUSPENDED until the
// next reconcile, though the target is already run. Its handler then races
// with the restart of the groups, which reconcile does while ResetOffsets
// runs: the group starts from the old offsets (StartOffsets answered before
// the reset), then the handler marks it not running without ending it, so
// the next start finds the workflow id taken ("an earlier run still runs"),
// terminates it and records an error; the group runs only a period later.
// (When the handler's bookkeeping lands while startGroup waits for the child
// to start, it is worse: it drops the sequences the new run was given, the
// record says running with no sequence, and the group's checkpoint-request
// is refused as "unknown sequence" forever. That interleaving is not
// reproducible in the test environment on demand.)
//
// Fix: validate against what the user asked, not the derived state: refuse a
// reset without force unless s.c.Target == targetSuspend && s.drained();
// and keep reconcile from starting groups while a reset runs (a flag that
// startGroups honours), so a forced reset cannot race a start either.
func TestResetRightAfterResumeRacesGroupStart(t *testing.T) {
	spec := testSpec()
	o := newOpsHarness(t, spec)
	o.env.SetDetachedChildWait(false) // the test environment does not report the taken id as the SDK does: the lost run is left running
	o.discover = fixedDiscover([]domain.Partition{domain.P(0)}, domain.Offsets{domain.P(0): 500})
	o.startOffsets = protocol.StartOffsetsResult{Offsets: domain.Offsets{domain.P(0): 100}, NextSequenceIDs: map[int]int{0: 7}}
	moved := domain.Offsets{domain.P(0): 5}
	// ResetOffsets takes 2s.
	o.env.OnActivity(protocol.ActivityResetOffsets, mock.Anything, mock.Anything).
		Return(func(_ context.Context, in protocol.ResetOffsetsInput) (protocol.ResetOffsetsResult, error) {
			o.note("reset-offsets")
			o.setStartOffsets(protocol.StartOffsetsResult{Offsets: moved, Committed: moved, NextSequenceIDs: map[int]int{0: 7}})
			return protocol.ResetOffsetsResult{Offsets: moved}, nil
		}).After(2 * time.Second)
	o.signal(3*time.Second, SignalSuspend, nil)
	resume, reset := &updateOutcome[OperationResult]{}, &updateOutcome[ResetResult]{}
	o.at(20*time.Second, func() {
		updateNow(o, resume, UpdateResume)
		updateNow(o, reset, UpdateReset, ResetRequest{All: ResetEarliest})
	})
	snaps := o.snapshots(25 * time.Second)
	o.signal(40*time.Second, SignalStop, StopSignal{})
	o.run()
	require.NoError(t, o.env.GetWorkflowError())

	require.Equal(t, StateRunning, resume.answered(t).State)
	st := snaps[25*time.Second]
	require.Empty(t, st.RecentErrors, "ops: %v", o.opsLog())
	require.Empty(t, o.terminates, "nothing needed ending")
	require.True(t, st.Groups[0].Running)
	started := o.started()
	require.Len(t, started, 2, "one start after the resume")
	if reset.rejected == nil {
		require.Equal(t, moved, started[1].Sequences[0].Start, "an accepted reset applies to the group started after it")
	}
}
