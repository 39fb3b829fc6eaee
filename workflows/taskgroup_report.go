package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"
)

// signalSupervisor sends a signal to the supervisor's current run. A failed
// delivery is logged: every such signal is repeated or recovered from (a
// request is re-sent, progress is reported again, a lost publish notice is
// found by the next restart's offset check).
func (g *taskGroup) signalSupervisor(ctx workflow.Context, name string, arg any) {
	err := workflow.SignalExternalWorkflow(ctx, SupervisorWorkflowID(g.in.Spec.ID), "", name, arg).Get(ctx, nil)
	if err != nil {
		workflow.GetLogger(ctx).Warn("signal to supervisor not delivered", "signal", name, "error", err)
	}
}

// reportProgress tells the supervisor the group's position, what it read
// since the last report, and the rows of its unpublished sequences.
func (g *taskGroup) reportProgress(ctx workflow.Context) {
	rows := map[int]int64{}
	for _, s := range g.seqs {
		rows[s.ID] = s.Rows
	}
	g.signalSupervisor(ctx, SignalProgress, GroupProgress{
		Group: g.in.Group, Generation: g.in.Generation, Position: g.pos.Clone(),
		Records: g.report.Records, Rows: g.report.Rows, Unparseable: g.report.Unparseable, ThrownAway: g.report.ThrownAway,
		SequenceRows: rows,
	})
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
	return b.String()
}

func (g *taskGroup) status() TaskGroupStatus {
	st := TaskGroupStatus{Group: g.in.Group, Generation: g.in.Generation, Position: g.pos.Clone(), Stopping: g.stopping}
	for _, s := range g.seqs {
		st.Sequences = append(st.Sequences, SequenceStatus{Sequence: s.Sequence, Rows: s.Rows, Chunks: len(s.Chunks)})
	}
	return st
}
