package workflows

import (
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"
)

// signalSupervisor sends a signal to the supervisor's current run. A failed
// delivery is logged: every such signal is repeated or recovered from (a
// request is re-sent, progress is reported again, a lost publish notice is
// found by the next restart's offset check).
//
// Runs that record asyncSignalsVersion do not wait for the delivery: the
// main loop settles it later (settleSignals), and the run waits for every
// one before it ends (flushSignals). Older runs waited for each, a round
// trip through the server that put every progress report on the way of a
// checkpoint.
func (g *taskGroup) signalSupervisor(ctx workflow.Context, name string, arg any) {
	f := workflow.SignalExternalWorkflow(ctx, SupervisorWorkflowID(g.in.Spec.ID), "", name, arg)
	if g.asyncSignals {
		g.sending = append(g.sending, pendingSignal{name: name, f: f})
		return
	}
	g.settle(ctx, name, f)
}

// pendingSignal is a signal sent and not yet known to be delivered.
type pendingSignal struct {
	name string
	f    workflow.Future
}

func (g *taskGroup) settle(ctx workflow.Context, name string, f workflow.Future) {
	if err := f.Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("signal to supervisor not delivered", "signal", name, "error", err)
	}
}

// settleSignals adds the signals in flight to sel: each is logged if it
// failed and forgotten once delivered.
func (g *taskGroup) settleSignals(ctx workflow.Context, sel workflow.Selector) {
	for _, p := range g.sending {
		sel.AddFuture(p.f, func(f workflow.Future) {
			g.settle(ctx, p.name, f)
			g.sending = slices.DeleteFunc(g.sending, func(q pendingSignal) bool { return q.f == f })
		})
	}
}

// flushSignals waits until every signal in flight is delivered (or
// failed), so none is lost with the run and they arrive before what the
// run sends last.
func (g *taskGroup) flushSignals(ctx workflow.Context) {
	for _, p := range g.sending {
		g.settle(ctx, p.name, p.f)
	}
	g.sending = nil
}

// reportProgress tells the supervisor the group's position, what it read
// since the last report, and the rows of its unpublished sequences.
func (g *taskGroup) reportProgress(ctx workflow.Context) {
	g.signalSupervisor(ctx, SignalProgress, g.progress())
	g.reported(ctx)
}

// progress is the group's progress report.
func (g *taskGroup) progress() GroupProgress {
	rows := map[int]int64{}
	for _, s := range g.seqs {
		rows[s.ID] = s.Rows
	}
	return GroupProgress{
		Group: g.in.Group, Generation: g.in.Generation, Position: g.pos.Clone(),
		ReadTotals:   g.report,
		SequenceRows: rows,
	}
}

// reported starts the next report, once one was sent.
func (g *taskGroup) reported(ctx workflow.Context) {
	g.report, g.lastReportAt = ReadTotals{}, workflow.Now(ctx)
	workflow.SetCurrentDetails(ctx, g.details())
}

// details is the group's markdown summary for the Temporal UI.
func (g *taskGroup) details() string {
	var b strings.Builder
	fmt.Fprintf(&b, "**group %d** of `%s` · generation %d · reading %s\n\n", g.in.Group, g.in.Spec.ID, g.in.Generation, g.pos)
	b.WriteString("| sequence | from | to | rows | chunks |\n|---|---|---|---|---|\n")
	for _, s := range g.seqs {
		to := "open"
		if !s.Open() {
			to = s.End.String()
		}
		fmt.Fprintf(&b, "| s%d | %s | %s | %d | %d |\n", s.ID, s.Start, to, s.Rows, len(s.Chunks))
	}
	if e := g.early; e != nil {
		fmt.Fprintf(&b, "| s%d | %s | open (its start is being recorded) | %d | %d |\n", e.ID, e.Start, e.Rows, len(e.Chunks))
	}
	return b.String()
}

func (g *taskGroup) status() TaskGroupStatus {
	st := TaskGroupStatus{Group: g.in.Group, Generation: g.in.Generation, Position: g.pos.Clone(), Stopping: g.stopping}
	for _, s := range g.seqs {
		st.Sequences = append(st.Sequences, SequenceStatus{Sequence: s.Sequence, Rows: s.Rows, Chunks: len(s.Chunks)})
	}
	if e := g.early; e != nil { // read into while the close before it is recorded
		st.Sequences = append(st.Sequences, SequenceStatus{Sequence: e.Sequence, Rows: e.Rows, Chunks: len(e.Chunks)})
	}
	return st
}
