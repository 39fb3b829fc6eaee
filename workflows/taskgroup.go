package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// maxPublishQueue bounds the closed sequences waiting to publish; past it
// the group stops consuming until one commits.
const maxPublishQueue = 2

// taskGroup is the state of one TaskGroupWorkflow run.
type taskGroup struct {
	in        TaskGroupInput
	seqs      []*groupSequence
	pos       domain.Offsets // next offset to read per partition
	wantClose string         // why the open sequence should close, "" if it should not
	requested bool           // a checkpoint request awaits its set-end-offsets
	stopping  bool

	consuming  workflow.Future // in-flight Consume, or nil
	consumeSeq int             // the sequence that Consume reads into
	publishing workflow.Future // in-flight Publish, or nil
	requestAt  workflow.Future // timer to re-send an unanswered request
	err        error           // set when the group must fail
	draining   bool            // continue-as-new is due: start no new activity
}

// TaskGroupWorkflow consumes its partitions chunk by chunk into sequences,
// asks the supervisor to close a sequence when a handoff trigger holds, and
// publishes closed sequences in order. It completes after a stop once every
// sequence that has data is published.
func TaskGroupWorkflow(ctx workflow.Context, in TaskGroupInput) error {
	g := newTaskGroup(ctx, in)
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (TaskGroupStatus, error) {
		return g.status(), nil
	}); err != nil {
		return err
	}
	checkpointCh := workflow.GetSignalChannel(ctx, SignalGroupCheckpoint)
	stopCh := workflow.GetSignalChannel(ctx, SignalGroupStop)
	setEndCh := workflow.GetSignalChannel(ctx, SignalSetEndOffsets)
	for {
		// When the history is long, start nothing new; once nothing is in
		// flight, carry the state into a fresh run.
		g.draining = workflow.GetInfo(ctx).GetContinueAsNewSuggested()
		if g.draining && g.idle() {
			g.drainSignals(checkpointCh, stopCh, setEndCh)
			return workflow.NewContinueAsNewError(ctx, TaskGroupWorkflowName, g.carry())
		}
		g.plan(ctx)
		if g.err != nil {
			return g.err
		}
		if g.finished() {
			return g.finish(ctx)
		}
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(checkpointCh, func(c workflow.ReceiveChannel, _ bool) {
			var s GroupCheckpoint
			c.Receive(ctx, &s)
			g.onCheckpoint(s.Reason)
		})
		sel.AddReceive(stopCh, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, nil)
			g.onStop()
		})
		sel.AddReceive(setEndCh, func(c workflow.ReceiveChannel, _ bool) {
			var s SetEndOffsets
			c.Receive(ctx, &s)
			g.onSetEnd(ctx, s)
		})
		if g.consuming != nil {
			sel.AddFuture(g.consuming, func(f workflow.Future) { g.onConsumed(ctx, f) })
		}
		if g.publishing != nil {
			sel.AddFuture(g.publishing, func(f workflow.Future) { g.onPublished(ctx, f) })
		}
		if g.requestAt != nil {
			sel.AddFuture(g.requestAt, func(workflow.Future) { g.requestAt, g.requested = nil, false })
		}
		sel.Select(ctx)
	}
}

func newTaskGroup(ctx workflow.Context, in TaskGroupInput) *taskGroup {
	g := &taskGroup{in: in, stopping: in.Stopping}
	if c := in.Carry; c != nil {
		for i := range c.Sequences {
			g.seqs = append(g.seqs, &c.Sequences[i])
		}
		g.pos, g.wantClose, g.requested, g.stopping = c.Position, c.WantClose, c.Requested, c.Stopping
		g.in.Carry = nil
		return g
	}
	now := workflow.Now(ctx)
	for _, s := range in.Sequences {
		g.seqs = append(g.seqs, &groupSequence{Sequence: s, OpenedAt: now})
	}
	if len(g.seqs) > 0 {
		g.pos = g.seqs[0].Start.Clone()
	}
	if g.stopping {
		g.wantClose = ReasonStop
	}
	return g
}

func (g *taskGroup) open() *groupSequence {
	if n := len(g.seqs); n > 0 && g.seqs[n-1].Open() {
		return g.seqs[n-1]
	}
	return nil
}

// progressed reports whether anything was read into the open sequence.
func (g *taskGroup) progressed(s *groupSequence) bool {
	return s != nil && g.pos.Reached(s.Start) && !g.pos.Equal(s.Start)
}

func (g *taskGroup) onCheckpoint(reason string) {
	if reason == "" {
		reason = ReasonUser
	}
	if g.wantClose == "" {
		g.wantClose = reason
	}
}

func (g *taskGroup) onStop() {
	g.stopping = true
	g.wantClose = ReasonStop
}

func (g *taskGroup) onSetEnd(ctx workflow.Context, s SetEndOffsets) {
	open := g.open()
	if open == nil || open.ID != s.SequenceID {
		workflow.GetLogger(ctx).Warn("set-end-offsets for a sequence that is not open", "sequence", s.SequenceID)
		return
	}
	open.End = s.End.Clone()
	g.seqs = append(g.seqs, &groupSequence{
		Sequence: domain.Sequence{ID: s.NextSequenceID, Start: s.End.Clone()},
		OpenedAt: workflow.Now(ctx),
	})
	g.requested, g.requestAt = false, nil
	if g.wantClose != ReasonStop {
		g.wantClose = ""
	}
}

// plan starts whatever the state calls for: a checkpoint request, a publish,
// a consume. It never blocks.
func (g *taskGroup) plan(ctx workflow.Context) {
	if g.draining {
		return
	}
	g.checkTriggers(ctx)
	g.planRequest(ctx)
	g.planPublish(ctx)
	g.planConsume(ctx)
}

func (g *taskGroup) checkTriggers(ctx workflow.Context) {
	open := g.open()
	if open == nil || g.wantClose != "" || !g.progressed(open) {
		return
	}
	tc := g.in.Spec.TuningConfig
	switch {
	case open.Rows >= tc.MaxRowsPerSegment:
		g.wantClose = ReasonMaxRows
	case tc.IntermediateHandoffPeriod > 0 && workflow.Now(ctx).Sub(open.OpenedAt) >= tc.IntermediateHandoffPeriod.D():
		g.wantClose = ReasonHandoff
	}
}

// planRequest asks the supervisor to close the open sequence at the current
// position, once no consume is in flight (so the position is final).
func (g *taskGroup) planRequest(ctx workflow.Context) {
	open := g.open()
	if g.wantClose == "" || g.requested || g.consuming != nil || open == nil || !g.pos.Reached(open.Start) {
		return // nothing to close yet, or restored sequences are still being read
	}
	if !g.progressed(open) {
		// An empty sequence is never published: nothing to close.
		if g.wantClose != ReasonStop {
			g.wantClose = ""
		}
		return
	}
	req := CheckpointRequest{
		Group: g.in.Group, Generation: g.in.Generation, SequenceID: open.ID,
		Offsets: g.pos.Clone(), Reason: g.wantClose,
	}
	err := workflow.SignalExternalWorkflow(ctx, SupervisorWorkflowID(g.in.Spec.ID), "", SignalCheckpointRequest, req).Get(ctx, nil)
	if err != nil {
		workflow.GetLogger(ctx).Warn("checkpoint request not delivered", "error", err)
	}
	g.requested = true
	g.requestAt = workflow.NewTimer(ctx, requestResendAfter)
}

// planPublish publishes the oldest closed sequence once it is fully read.
// Publishes of one group commit in sequence order, one at a time.
func (g *taskGroup) planPublish(ctx workflow.Context) {
	if g.publishing != nil || len(g.seqs) == 0 {
		return
	}
	s := g.seqs[0]
	if s.Open() || !g.pos.Reached(s.End) {
		return
	}
	actx := workflow.WithActivityOptions(ctx, publishOptions)
	g.publishing = workflow.ExecuteActivity(actx, protocol.ActivityPublish, protocol.PublishInput{
		Spec: g.in.Spec, Group: g.in.Group, SequenceID: s.ID,
		Start: s.Start, End: s.End, StagingKeys: s.Chunks,
	})
}

// planConsume reads the next chunk: into the first closed sequence not yet
// read to its end, else into the open sequence unless the group waits for
// an answer, is stopping, or has too many sequences waiting to publish.
func (g *taskGroup) planConsume(ctx workflow.Context) {
	if g.consuming != nil {
		return
	}
	target, until := g.consumeTarget()
	if target == nil {
		return
	}
	actx := workflow.WithActivityOptions(ctx, consumeOptions)
	g.consumeSeq = target.ID
	g.consuming = workflow.ExecuteActivity(actx, protocol.ActivityConsume, protocol.ConsumeInput{
		Spec: g.in.Spec, Group: g.in.Group,
		SequenceName: domain.SequenceName(g.in.Spec.ID, g.in.Group, target.ID),
		From:         g.pos.Clone(), Until: until,
	})
}

func (g *taskGroup) consumeTarget() (*groupSequence, domain.Offsets) {
	closed := 0
	for _, s := range g.seqs {
		if s.Open() {
			break
		}
		if !g.pos.Reached(s.End) {
			return s, s.End
		}
		closed++
	}
	open := g.open()
	if open == nil || g.requested || g.stopping || g.wantClose != "" || closed >= maxPublishQueue {
		return nil, nil
	}
	return open, nil
}

func (g *taskGroup) onConsumed(ctx workflow.Context, f workflow.Future) {
	g.consuming = nil
	var res protocol.ConsumeResult
	if err := f.Get(ctx, &res); err != nil {
		g.err = fmt.Errorf("consume group %d: %w", g.in.Group, err)
		return
	}
	for p, o := range res.To {
		g.pos[p] = o
	}
	for _, s := range g.seqs {
		if s.ID == g.consumeSeq {
			if res.StagingKey != "" {
				s.Chunks = append(s.Chunks, res.StagingKey)
			}
			s.Rows += res.Rows
		}
	}
}

func (g *taskGroup) onPublished(ctx workflow.Context, f workflow.Future) {
	g.publishing = nil
	var res protocol.PublishResult
	if err := f.Get(ctx, &res); err != nil {
		g.err = fmt.Errorf("publish group %d sequence %d: %w", g.in.Group, g.seqs[0].ID, err)
		return
	}
	s := g.seqs[0]
	g.seqs = g.seqs[1:]
	msg := SequencePublished{
		Group: g.in.Group, Generation: g.in.Generation, SequenceID: s.ID,
		End: s.End, Segments: len(res.SegmentIDs), Rows: res.Rows,
	}
	err := workflow.SignalExternalWorkflow(ctx, SupervisorWorkflowID(g.in.Spec.ID), "", SignalSequencePublished, msg).Get(ctx, nil)
	if err != nil {
		workflow.GetLogger(ctx).Warn("sequence-published not delivered", "error", err)
	}
}

// finished: stopping, nothing in flight, and no sequence with data left.
func (g *taskGroup) finished() bool {
	if !g.stopping || g.consuming != nil || g.publishing != nil {
		return false
	}
	for _, s := range g.seqs {
		if !s.Open() || g.progressed(s) {
			return false
		}
	}
	return true
}

func (g *taskGroup) finish(ctx workflow.Context) error {
	msg := GroupFinished{Group: g.in.Group, Generation: g.in.Generation}
	return workflow.SignalExternalWorkflow(ctx, SupervisorWorkflowID(g.in.Spec.ID), "", SignalGroupFinished, msg).Get(ctx, nil)
}

// idle: nothing in flight and no answer awaited, so state can be carried.
func (g *taskGroup) idle() bool {
	return g.consuming == nil && g.publishing == nil && !g.requested
}

func (g *taskGroup) drainSignals(checkpointCh, stopCh, setEndCh workflow.ReceiveChannel) {
	for {
		var s GroupCheckpoint
		if !checkpointCh.ReceiveAsync(&s) {
			break
		}
		g.onCheckpoint(s.Reason)
	}
	for stopCh.ReceiveAsync(nil) {
		g.onStop()
	}
	// set-end-offsets only answers a request, and idle() means none is
	// outstanding; a stray one is dropped with the run.
	for setEndCh.ReceiveAsync(nil) {
	}
}

func (g *taskGroup) carry() TaskGroupInput {
	in := g.in
	c := &TaskGroupCarry{Position: g.pos, WantClose: g.wantClose, Requested: g.requested, Stopping: g.stopping}
	for _, s := range g.seqs {
		c.Sequences = append(c.Sequences, *s)
	}
	in.Carry = c
	return in
}

func (g *taskGroup) status() TaskGroupStatus {
	st := TaskGroupStatus{Group: g.in.Group, Generation: g.in.Generation, Position: g.pos.Clone(), Stopping: g.stopping}
	for _, s := range g.seqs {
		st.Sequences = append(st.Sequences, SequenceStatus{Sequence: s.Sequence, Rows: s.Rows, Chunks: len(s.Chunks)})
	}
	return st
}
