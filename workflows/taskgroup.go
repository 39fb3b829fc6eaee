package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
)

// taskGroup is the state of one TaskGroupWorkflow run.
type taskGroup struct {
	in         TaskGroupInput
	seqs       []*groupSequence
	pos        domain.Offsets // next offset to read per partition
	wantClose  string         // why the open sequence should close, "" if it should not
	requested  bool           // a checkpoint request awaits its set-end-offsets
	stopping   bool
	rolloverTo int // the generation a rollover goes on as, 0 if none

	consuming  workflow.Future // in-flight Consume, or nil
	consumeSeq int             // the sequence that Consume reads into
	publishing workflow.Future // in-flight Publish, or nil
	requestAt  workflow.Future // timer to re-send an unanswered request
	err        error           // set when the group must fail
	draining   bool            // continue-as-new is due: start no new activity

	asyncSignals   bool            // the run records asyncSignalsVersion
	sending        []pendingSignal // signals to the supervisor in flight
	streamState                    // taskgroup_stream.go
	earlyNextState                 // taskgroup_early.go
	selfCloseState                 // taskgroup_selfclose.go

	spread            bool       // the run records spreadHandoffVersion
	progressInRequest bool       // the run records progressInRequestVersion
	report            ReadTotals // read since the last progress report
	lastReportAt      time.Time
	parseExceptions   int64 // unparseable rows met, against maxParseExceptions
}

// groupSignals are the channels a task group listens on.
type groupSignals struct {
	checkpoint, stop, setEnd, addPartitions, rollover workflow.ReceiveChannel
}

// TaskGroupWorkflow consumes its partitions chunk by chunk into sequences,
// asks the supervisor to close a sequence when a handoff trigger holds, and
// publishes closed sequences in order. It completes after a stop once every
// sequence that has data is published; it goes on as a new generation after
// a rollover, publishing the old generation's sequences in the new run.
func TaskGroupWorkflow(ctx workflow.Context, in TaskGroupInput) error {
	// A spec carried from an older version lacks newer fields: fill their
	// defaults, as the spec's parser would have.
	in.Spec.ApplyDefaults()
	g := newTaskGroup(ctx, in)
	g.asyncSignals = workflow.GetVersion(ctx, asyncSignalsChange, workflow.DefaultVersion, asyncSignalsVersion) >= asyncSignalsVersion
	g.stream = workflow.GetVersion(ctx, streamConsumeChange, workflow.DefaultVersion, streamConsumeVersion) >= streamConsumeVersion
	g.spread = workflow.GetVersion(ctx, spreadHandoffChange, workflow.DefaultVersion, spreadHandoffVersion) >= spreadHandoffVersion
	g.progressInRequest = workflow.GetVersion(ctx, progressInRequestChange, workflow.DefaultVersion, progressInRequestVersion) >= progressInRequestVersion
	// The early sequence needs streams, and a run that records it.
	g.earlyOn = g.stream && workflow.GetVersion(ctx, earlyNextChange, workflow.DefaultVersion, earlyNextVersion) >= earlyNextVersion
	g.selfClose = g.stream && workflow.GetVersion(ctx, selfCloseChange, workflow.DefaultVersion, selfCloseVersion) >= selfCloseVersion
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (TaskGroupStatus, error) {
		return g.status(), nil
	}); err != nil {
		return err
	}
	sig := groupSignals{
		checkpoint:    workflow.GetSignalChannel(ctx, SignalGroupCheckpoint),
		stop:          workflow.GetSignalChannel(ctx, SignalGroupStop),
		setEnd:        workflow.GetSignalChannel(ctx, SignalSetEndOffsets),
		addPartitions: workflow.GetSignalChannel(ctx, SignalAddPartitions),
		rollover:      workflow.GetSignalChannel(ctx, SignalRollover),
	}
	g.reportProgress(ctx) // also tells the supervisor which generation runs
	for {
		if g.rolledOver() {
			g.flushSignals(ctx)
			g.drainSignals(ctx, sig)
			return workflow.NewContinueAsNewError(ctx, TaskGroupWorkflowName, g.carry())
		}
		// When the history is long, start nothing new; once nothing is in
		// flight, carry the state into a fresh run.
		g.draining = workflow.GetInfo(ctx).GetContinueAsNewSuggested()
		if g.draining && g.idle() {
			g.flushSignals(ctx)
			g.drainSignals(ctx, sig)
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
		g.addSignals(ctx, sel, sig)
		g.settleSignals(ctx, sel)
		if g.consuming != nil && g.stream {
			sel.AddFuture(g.consuming, func(f workflow.Future) { g.onStreamed(ctx, f) })
		} else if g.consuming != nil {
			sel.AddFuture(g.consuming, func(f workflow.Future) { g.onConsumed(ctx, f) })
		}
		if g.waking != nil {
			sel.AddFuture(g.waking, func(f workflow.Future) { g.onWoken(ctx, f) })
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
	g := &taskGroup{in: in, stopping: in.Stopping, lastReportAt: workflow.Now(ctx)}
	g.nextID = in.NextSequenceID
	if c := in.Carry; c != nil {
		for i := range c.Sequences {
			g.seqs = append(g.seqs, &c.Sequences[i])
		}
		g.pos, g.wantClose, g.requested, g.stopping = c.Position, c.WantClose, c.Requested, c.Stopping
		g.parseExceptions, g.report = c.ParseExceptions, c.Unreported
		g.nextID = c.NextSequenceID
		g.in.Carry = nil
		return g
	}
	now := workflow.Now(ctx)
	g.pos = domain.Offsets{}
	for _, s := range in.Sequences {
		g.seqs = append(g.seqs, &groupSequence{Sequence: s, OpenedAt: now})
		// Reading starts where each partition first appears: a partition
		// added later is only in the later sequences.
		for p, o := range s.Start {
			if _, ok := g.pos[p]; !ok {
				g.pos[p] = o
			}
		}
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
	return s != nil && g.pos.Reached(s.Start) && !subset(g.pos, s.Start.Partitions()).Equal(s.Start)
}

// finished: stopping, nothing in flight, and no sequence with data left.
func (g *taskGroup) finished() bool {
	if !g.stopping || g.consuming != nil || g.publishing != nil || g.early != nil {
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
	g.reportProgress(ctx)
	g.flushSignals(ctx) // the supervisor hears all of it before the end
	msg := GroupFinished{Group: g.in.Group, Generation: g.in.Generation}
	return workflow.SignalExternalWorkflow(ctx, SupervisorWorkflowID(g.in.Spec.ID), "", SignalGroupFinished, msg).Get(ctx, nil)
}

// idle: nothing in flight and no answer awaited, so state can be carried.
func (g *taskGroup) idle() bool {
	return g.consuming == nil && g.publishing == nil && !g.requested
}

// rolledOver: a rollover was asked and the open sequence is closed (or had
// nothing to close). The closed ones publish in the next generation's run,
// so in-flight publishes are not waited for.
func (g *taskGroup) rolledOver() bool {
	if g.rolloverTo == 0 || g.consuming != nil || g.requested || g.stopping {
		return false
	}
	return !g.progressed(g.open())
}

func (g *taskGroup) carry() TaskGroupInput {
	in := g.in
	if g.rolloverTo != 0 {
		in.Generation = g.rolloverTo
		if g.wantClose == ReasonTaskDuration {
			g.wantClose = ""
		}
	}
	c := &TaskGroupCarry{Position: g.pos, WantClose: g.wantClose, Requested: g.requested, Stopping: g.stopping, ParseExceptions: g.parseExceptions, Unreported: g.report, NextSequenceID: g.nextID}
	for _, s := range g.seqs {
		c.Sequences = append(c.Sequences, *s)
	}
	in.Carry = c
	return in
}
