package workflows

import (
	"go.temporal.io/sdk/workflow"
)

func (g *taskGroup) addSignals(ctx workflow.Context, sel workflow.Selector, sig groupSignals) {
	sel.AddReceive(sig.checkpoint, func(c workflow.ReceiveChannel, _ bool) {
		var s GroupCheckpoint
		c.Receive(ctx, &s)
		g.onCheckpoint(s.Reason)
	})
	sel.AddReceive(sig.stop, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		g.onStop()
	})
	sel.AddReceive(sig.setEnd, func(c workflow.ReceiveChannel, _ bool) {
		var s SetEndOffsets
		c.Receive(ctx, &s)
		g.onSetEnd(ctx, s)
	})
	sel.AddReceive(sig.addPartitions, func(c workflow.ReceiveChannel, _ bool) {
		var s AddPartitions
		c.Receive(ctx, &s)
		g.onAddPartitions(ctx, s)
	})
	sel.AddReceive(sig.rollover, func(c workflow.ReceiveChannel, _ bool) {
		var s Rollover
		c.Receive(ctx, &s)
		g.onRollover(s)
	})
}

// drainSignals handles every buffered signal before the run ends. A
// set-end-offsets only answers a request, and the run ends with none
// outstanding, so a stray one is dropped.
func (g *taskGroup) drainSignals(ctx workflow.Context, sig groupSignals) {
	for {
		sel := workflow.NewSelector(ctx)
		g.addSignals(ctx, sel, sig)
		if !sel.HasPending() {
			return
		}
		sel.Select(ctx)
	}
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

func (g *taskGroup) onRollover(r Rollover) {
	if g.rolloverTo != 0 || g.stopping {
		return
	}
	g.rolloverTo = r.Generation
	if g.wantClose == "" {
		g.wantClose = ReasonTaskDuration
	}
}

func (g *taskGroup) onSetEnd(ctx workflow.Context, s SetEndOffsets) {
	open := g.open()
	if open == nil || open.ID != s.SequenceID {
		workflow.GetLogger(ctx).Warn("set-end-offsets for a sequence that is not open", "sequence", s.SequenceID)
		return
	}
	open.End, open.ClosedAt = s.End.Clone(), workflow.Now(ctx)
	if g.requestCancel != nil {
		g.requestCancel()
		g.requestCancel = nil
	}
	g.requested, g.requestAt = false, nil
	if g.wantClose != ReasonStop {
		g.wantClose = ""
	}
	next, err := g.adoptEarly(ctx, s) // taskgroup_early.go
	if err != nil {
		g.err = err
		return
	}
	g.seqs = append(g.seqs, next)
}

// onAddPartitions starts reading new partitions into the open sequence.
func (g *taskGroup) onAddPartitions(ctx workflow.Context, a AddPartitions) {
	s := g.sequence(a.SequenceID)
	if open := g.open(); g.selfClose && (s == nil || !s.Open()) && open != nil && a.SequenceID < open.ID {
		// Closed (or even published) by the group before the supervisor
		// heard of it: the partitions join the sequence read into now,
		// where the supervisor's record of the close puts them too.
		s = open
	}
	if s != nil {
		for p, o := range a.Offsets {
			if _, ok := s.Start[p]; !ok {
				s.Start[p] = o
			}
			if _, ok := g.pos[p]; !ok {
				g.pos[p] = o
			}
		}
		g.in.Partitions = append(g.in.Partitions, a.Offsets.Partitions()...)
		g.partsAdded = true // a stream reading the open sequence restarts with them
		return
	}
	workflow.GetLogger(ctx).Warn("add-partitions for an unknown sequence", "sequence", a.SequenceID)
}
