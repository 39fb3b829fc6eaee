package workflows

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// newGroupHarnessAdjusted is newGroupHarness whose Consume results pass
// through adjust (the recorder logs the adjusted results).
func newGroupHarnessAdjusted(t *testing.T, spec domain.Spec, end domain.Offsets, chunk int64, adjust func(*protocol.ConsumeResult)) *groupHarness {
	t.Helper()
	env := newTestEnv(t)
	rec := &recorder{}
	h := &groupHarness{t: t, env: env, rec: rec, spec: spec, topic: &fakeTopic{rec: rec, chunk: chunk, end: end}}
	h.answer = func(req CheckpointRequest, _ int) []SetEndOffsets { return []SetEndOffsets{answerAt(req)} }
	inner := &fakeTopic{rec: &recorder{}, chunk: chunk, end: end}
	consume := func(ctx context.Context, in protocol.ConsumeInput) (protocol.ConsumeResult, error) {
		res, err := inner.consume(ctx, in)
		adjust(&res)
		rec.add(event{kind: "consume", consume: in, consumed: res})
		return res, err
	}
	env.RegisterWorkflowWithOptions(TaskGroupWorkflow, workflow.RegisterOptions{Name: TaskGroupWorkflowName})
	env.RegisterActivityWithOptions(consume, activity.RegisterOptions{Name: protocol.ActivityConsume})
	env.RegisterActivityWithOptions(h.topic.publish, activity.RegisterOptions{Name: protocol.ActivityPublish})
	perChunk(env)
	env.OnActivity(protocol.ActivityConsume, mock.Anything, mock.Anything).Return(consume).After(chunkTime)
	env.OnSignalExternalWorkflow(mock.Anything, SupervisorWorkflowID(spec.ID), "", mock.Anything, mock.Anything).
		Return(nil).
		Run(func(args mock.Arguments) {
			name, arg := args.String(3), args.Get(4)
			rec.add(event{kind: "signal", target: args.String(1), signal: name, arg: arg})
			if req, ok := arg.(CheckpointRequest); ok && name == SignalCheckpointRequest {
				h.requests++
				for _, a := range h.answer(req, h.requests) {
					env.SignalWorkflow(SignalSetEndOffsets, a)
				}
			}
		})
	return h
}

// slowPublishes makes every Publish take d on the workflow clock.
func (h *groupHarness) slowPublishes(d time.Duration) {
	h.env.OnActivity(protocol.ActivityPublish, mock.Anything, mock.Anything).Return(h.topic.publish).After(d)
}

// progress is every progress report, sent alone or with a request.
func (h *groupHarness) progress() []GroupProgress {
	var out []GroupProgress
	for _, e := range h.rec.all() {
		switch a := e.arg.(type) {
		case GroupProgress:
			out = append(out, a)
		case CheckpointRequest:
			if a.Progress != nil {
				out = append(out, *a.Progress)
			}
		}
	}
	return out
}

// 11. A user checkpoint on an empty open sequence sends one
// checkpoint-declined and no request; on a sequence with data it sends a
// request and no checkpoint-declined.
func TestTaskGroupUserCheckpointOnEmptySequenceIsDeclined(t *testing.T) {
	spec := testSpec()
	start := domain.Offsets{domain.P(0): 5}
	h := newGroupHarness(t, spec, domain.Offsets{domain.P(0): 25}, 10) // 20 records, then nothing

	h.signal(500*time.Millisecond, SignalGroupCheckpoint, GroupCheckpoint{Reason: ReasonUser})
	h.signal(4500*time.Millisecond, SignalGroupCheckpoint, GroupCheckpoint{Reason: ReasonUser})
	h.signal(6500*time.Millisecond, SignalGroupCheckpoint, GroupCheckpoint{})
	var declinedBy int
	h.at(9*time.Second, func() { declinedBy = len(h.rec.filter(isSignal(SignalCheckpointDeclined))) })
	h.signal(10500*time.Millisecond, SignalGroupStop, nil)
	in := groupInput(spec, []domain.Partition{domain.P(0)}, domain.Sequence{ID: 1, Start: start})
	in.Generation = 4
	h.run(in)

	require.Equal(t, []CheckpointRequest{
		{Group: 0, Generation: 4, SequenceID: 1, Offsets: domain.Offsets{domain.P(0): 15}, Reason: ReasonUser},
		{Group: 0, Generation: 4, SequenceID: 2, Offsets: domain.Offsets{domain.P(0): 25}, Reason: ReasonUser},
	}, h.rec.requests(), "a request for each checkpoint of a sequence with data, none for the empty one")
	declined := h.rec.filter(isSignal(SignalCheckpointDeclined))
	require.Len(t, declined, 1, "one checkpoint-declined, for the checkpoint of the empty sequence")
	require.Equal(t, 1, declinedBy, "sent at once, not at the stop")
	require.Equal(t, CheckpointDeclined{Group: 0, Generation: 4}, declined[0].arg)
	require.Equal(t, SupervisorWorkflowID(spec.ID), declined[0].target)
	require.Greater(t, h.rec.index(0, isSignal(SignalCheckpointDeclined)), h.rec.index(0, func(e event) bool {
		return e.kind == "signal" && e.signal == SignalCheckpointRequest && e.arg.(CheckpointRequest).SequenceID == 2
	}))
	pubs := h.rec.publishes()
	require.Len(t, pubs, 2, "the empty sequence is not published, not even at the stop")
	require.Equal(t, []int{1, 2}, []int{pubs[0].SequenceID, pubs[1].SequenceID})
}

// 12. maxTotalRows closes the open sequence once the group's unpublished
// rows (closed sequences still publishing included) reach it, though the
// open sequence is far from maxRowsPerSegment.
func TestTaskGroupMaxTotalRowsCountsUnpublishedSequences(t *testing.T) {
	spec := testSpec()
	spec.TuningConfig.MaxRowsPerSegment = 40
	spec.TuningConfig.MaxTotalRows = 50
	h := newGroupHarness(t, spec, domain.Offsets{domain.P(0): 1000}, 10)
	h.slowPublishes(30 * time.Second)

	h.signal(40500*time.Millisecond, SignalGroupStop, nil)
	h.run(groupInput(spec, []domain.Partition{domain.P(0)}, domain.Sequence{ID: 1, Start: domain.Offsets{domain.P(0): 0}}))

	reqs := h.rec.requests()
	require.GreaterOrEqual(t, len(reqs), 2)
	require.Equal(t, CheckpointRequest{Group: 0, Generation: 1, SequenceID: 1, Offsets: domain.Offsets{domain.P(0): 40}, Reason: ReasonMaxRows}, reqs[0])
	require.Equal(t, CheckpointRequest{Group: 0, Generation: 1, SequenceID: 2, Offsets: domain.Offsets{domain.P(0): 50}, Reason: ReasonMaxTotalRows}, reqs[1],
		"40 rows publishing + 10 in the open sequence reach maxTotalRows")
	second := h.rec.index(0, func(e event) bool {
		return e.kind == "signal" && e.signal == SignalCheckpointRequest && e.arg.(CheckpointRequest).SequenceID == 2
	})
	require.Greater(t, h.rec.index(0, isSignal(SignalSequencePublished)), second, "sequence 1 was still unpublished")

	// Every sequence publishes, in order, contiguous.
	pubs := h.rec.publishes()
	require.GreaterOrEqual(t, len(pubs), 3)
	for i, p := range pubs {
		require.Equal(t, i+1, p.SequenceID)
		if i > 0 {
			require.Equal(t, pubs[i-1].End, p.Start)
		}
	}
}

// 13. add-partitions: the new partition is read into the open sequence
// from the given offset, and the next checkpoint-request covers it.
func TestTaskGroupAddPartitions(t *testing.T) {
	spec := testSpec()
	h := newGroupHarness(t, spec, domain.Offsets{domain.P(0): 1000, domain.P(1): 1000}, 10)
	h.signal(2500*time.Millisecond, SignalAddPartitions, AddPartitions{SequenceID: 1, Offsets: domain.Offsets{domain.P(1): 50}})
	h.signal(5500*time.Millisecond, SignalGroupCheckpoint, GroupCheckpoint{Reason: ReasonUser})
	h.signal(8500*time.Millisecond, SignalGroupStop, nil)
	h.run(groupInput(spec, []domain.Partition{domain.P(0)}, domain.Sequence{ID: 1, Start: domain.Offsets{domain.P(0): 0}}))

	consumes := h.rec.consumes()
	require.GreaterOrEqual(t, len(consumes), 6)
	for i, e := range consumes[:3] {
		require.Equal(t, []domain.Partition{domain.P(0)}, e.consume.From.Partitions(), "consume %d started before the signal", i)
	}
	require.Equal(t, domain.Offsets{domain.P(0): 30, domain.P(1): 50}, consumes[3].consume.From, "the next read includes the new partition from its offset")
	require.Equal(t, domain.SequenceName(spec.ID, 0, 1), consumes[3].consume.SequenceName)

	reqs := h.rec.requests()
	require.NotEmpty(t, reqs)
	require.Equal(t, CheckpointRequest{Group: 0, Generation: 1, SequenceID: 1, Offsets: domain.Offsets{domain.P(0): 60, domain.P(1): 80}, Reason: ReasonUser}, reqs[0])
	evs := h.rec.all()
	reqIdx := h.rec.index(0, isSignal(SignalCheckpointRequest))
	require.Equal(t, positionAfter(evs, reqIdx, domain.Offsets{domain.P(0): 0, domain.P(1): 50}), reqs[0].Offsets)

	pubs := h.rec.publishes()
	require.NotEmpty(t, pubs)
	require.Equal(t, protocol.PublishInput{
		Spec: spec, Group: 0, SequenceID: 1, Start: domain.Offsets{domain.P(0): 0, domain.P(1): 50}, End: domain.Offsets{domain.P(0): 60, domain.P(1): 80},
		StagingKeys: keysOf(evs, domain.SequenceName(spec.ID, 0, 1)),
	}, pubs[0])
	next := h.rec.index(reqIdx, func(e event) bool {
		return isConsume(e) && e.consume.SequenceName == domain.SequenceName(spec.ID, 0, 2)
	})
	require.GreaterOrEqual(t, next, 0)
	require.Equal(t, domain.Offsets{domain.P(0): 60, domain.P(1): 80}, evs[next].consume.From)
}

// 14. rollover: the group closes its open sequence (reason taskDuration)
// and continues as new as the new generation, carrying its closed
// sequences, without waiting for the publish in flight.
func TestTaskGroupRolloverContinuesAsNewGeneration(t *testing.T) {
	spec := testSpec()
	h := newGroupHarness(t, spec, domain.Offsets{domain.P(0): 1000}, 10)
	h.slowPublishes(30 * time.Second)
	h.signal(1500*time.Millisecond, SignalGroupCheckpoint, GroupCheckpoint{Reason: ReasonUser})
	h.signal(3500*time.Millisecond, SignalRollover, Rollover{Generation: 5})
	in := groupInput(spec, []domain.Partition{domain.P(0)}, domain.Sequence{ID: 1, Start: domain.Offsets{domain.P(0): 0}})
	in.Generation = 2
	t0 := h.env.Now()
	h.env.ExecuteWorkflow(TaskGroupWorkflowName, in)
	require.True(t, h.env.IsWorkflowCompleted())
	elapsed := h.env.Now().Sub(t0)

	require.Equal(t, []CheckpointRequest{
		{Group: 0, Generation: 2, SequenceID: 1, Offsets: domain.Offsets{domain.P(0): 20}, Reason: ReasonUser},
		{Group: 0, Generation: 2, SequenceID: 2, Offsets: domain.Offsets{domain.P(0): 40}, Reason: ReasonTaskDuration},
	}, h.rec.requests())
	require.Empty(t, h.rec.published(), "nothing committed yet")
	require.Less(t, elapsed, 10*time.Second, "the publish in flight (30s) is not waited for")

	var next TaskGroupInput
	continuedAs(t, h.env, &next)
	require.NotNil(t, next.Carry)
	c := *next.Carry
	require.Len(t, c.Sequences, 3)
	opened, first := []time.Duration{}, c.Sequences[0].OpenedAt
	for i := range c.Sequences {
		opened = append(opened, c.Sequences[i].OpenedAt.Sub(first))
		c.Sequences[i].OpenedAt, c.Sequences[i].ClosedAt, c.Sequences[i].FirstReadAt = time.Time{}, time.Time{}, time.Time{}
	}
	require.Equal(t, []time.Duration{0, 2 * time.Second, 4 * time.Second}, opened)
	evs := h.rec.all()
	require.Equal(t, []groupSequence{
		{Sequence: domain.Sequence{ID: 1, Start: domain.Offsets{domain.P(0): 0}, End: domain.Offsets{domain.P(0): 20}}, Chunks: keysOf(evs, domain.SequenceName(spec.ID, 0, 1)), Rows: 20},
		{Sequence: domain.Sequence{ID: 2, Start: domain.Offsets{domain.P(0): 20}, End: domain.Offsets{domain.P(0): 40}}, Chunks: keysOf(evs, domain.SequenceName(spec.ID, 0, 2)), Rows: 20},
		{Sequence: domain.Sequence{ID: 3, Start: domain.Offsets{domain.P(0): 40}}},
	}, c.Sequences)
	require.Len(t, c.Sequences[0].Chunks, 2)
	require.Equal(t, TaskGroupCarry{Sequences: c.Sequences, Position: domain.Offsets{domain.P(0): 40}, NextSequenceID: 4}, c, "no close wanted, no request outstanding, not stopping")
	next.Carry = nil
	require.Equal(t, TaskGroupInput{Spec: spec, Group: 0, Generation: 5, Partitions: []domain.Partition{domain.P(0)}, Sequences: in.Sequences}, next)
}

// 14b. What a run read and had not reported when it continued as new
// goes with its carry, and the next run reports it first: no read count
// is lost at the boundary.
func TestTaskGroupReportsWhatTheLastRunHadNotReported(t *testing.T) {
	spec := testSpec()
	h := newGroupHarness(t, spec, domain.Offsets{domain.P(0): 0}, 10)
	h.signal(time.Second, SignalGroupStop, nil)
	start := domain.Offsets{domain.P(0): 0}
	in := groupInput(spec, []domain.Partition{domain.P(0)}, domain.Sequence{ID: 1, Start: start})
	unreported := ReadTotals{Records: 12, Rows: 3, ThrownAway: 4, NoValue: 4, Markers: 5, Aborted: 5}
	in.Carry = &TaskGroupCarry{Sequences: []groupSequence{{Sequence: in.Sequences[0]}}, Position: start, Unreported: unreported}
	in.Sequences = nil
	h.run(in)

	reports := h.progress()
	require.NotEmpty(t, reports)
	require.Equal(t, unreported, reports[0].ReadTotals, "the first report carries the last run's unreported counts")
	var total ReadTotals
	for _, p := range reports {
		total.Add(p.ReadTotals)
	}
	require.Equal(t, unreported, total, "and they are reported once")
}

// 15. Progress: the group reports at start (which tells the supervisor its
// generation), and the deltas of its reports add up to what Consume read.
func TestTaskGroupProgressReports(t *testing.T) {
	spec := testSpec()
	h := newGroupHarnessAdjusted(t, spec, domain.Offsets{domain.P(0): 1000, domain.P(1): 1000}, 10, func(r *protocol.ConsumeResult) {
		// Two records of every chunk do not parse.
		r.Records += 2
		r.Unparseable += 2
	})
	start := domain.Offsets{domain.P(0): 0, domain.P(1): 0}
	h.signal(25500*time.Millisecond, SignalGroupStop, nil)
	in := groupInput(spec, []domain.Partition{domain.P(0), domain.P(1)}, domain.Sequence{ID: 1, Start: start})
	in.Generation = 3
	h.run(in)

	evs := h.rec.all()
	require.Equal(t, event{kind: "signal", target: SupervisorWorkflowID(spec.ID), signal: SignalProgress, arg: GroupProgress{
		Group: 0, Generation: 3, Position: start, SequenceRows: map[int]int64{1: 0},
	}}, evs[0], "the first thing the group does is report")

	reports := h.progress()
	require.GreaterOrEqual(t, len(reports), 4, "start, every period, and at the end: %+v", reports)
	var got, want ReadTotals
	for _, p := range reports {
		require.Equal(t, 0, p.Group)
		require.Equal(t, 3, p.Generation)
		got.Records += p.Records
		got.Rows += p.Rows
		got.Unparseable += p.Unparseable
		got.ThrownAway += p.ThrownAway
	}
	consumes := h.rec.consumes()
	for _, e := range consumes {
		want.Records += e.consumed.Records
		want.Rows += e.consumed.Rows
		want.Unparseable += e.consumed.Unparseable
	}
	require.Equal(t, want, got)
	require.Equal(t, int64(2*len(consumes)), got.Unparseable)
	require.Equal(t, got.Rows+got.Unparseable, got.Records)

	last := reports[len(reports)-1]
	require.Equal(t, positionAfter(evs, len(evs), start), last.Position, "the last report has the final position")
	// Between the start and the end, the group reports about once a period.
	periodic := 0
	for _, p := range reports[1:] {
		if p.Records > 0 {
			periodic++
		}
	}
	require.GreaterOrEqual(t, periodic, 2)
	require.LessOrEqual(t, len(reports), 6)
	require.True(t, slices.IsSortedFunc(reports, func(a, b GroupProgress) int {
		return int(a.Position.Sum() - b.Position.Sum())
	}), "positions only move forward")
}
