package workflows

import (
	"encoding/json"

	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// A group of a run that records selfCloseVersion closes its open sequence
// by itself when a handoff trigger holds (maxRowsPerSegment,
// maxSequenceBytes, maxTotalRows, intermediateHandoffPeriod): it ends the
// sequence at its position, opens the next one there under the next
// sequence id, as the supervisor would have, and streams into it at once.
// The supervisor hears of the boundary from the sequence's Publish, which
// signals it once the sequence has committed: a SequencePublished with
// Closed set, which records the boundary if nothing recorded it yet and
// counts the publish. So a handoff writes one signal to the supervisor's
// history and none to the group's, where a request, an answer and a
// published notice each cost both workflows a signal and a workflow task.
//
// The supervisor need not record a boundary before it commits: the offsets
// compare-and-swap of the commit is what makes it exactly-once, and a group
// restarted before the notice lands resumes from the committed offsets
// (restoreSequences). A user's checkpoint, a stop and a rollover still ask
// the supervisor (planRequest): their callers wait for its answer.
//
// Every Publish of such a run tells the supervisor itself, so the group
// signals nothing when one completes. Until that notice lands, the
// supervisor's status shows the closed sequence as still open.

// selfCloseState is the task group's part of closing its own sequences.
type selfCloseState struct {
	selfClose bool // the run records selfCloseVersion
	// notifying: the in-flight Publish tells the supervisor itself.
	notifying bool
}

// closesItself: the group closes its open sequence without asking, because
// a handoff trigger holds and it knows the next sequence id.
func (g *taskGroup) closesItself() bool {
	if !g.selfClose || g.nextID == 0 {
		return false
	}
	switch g.wantClose {
	case ReasonMaxRows, ReasonMaxSequenceBytes, ReasonMaxTotalRows, ReasonHandoff:
		return true
	}
	return false
}

// closeItself ends open at end and opens its successor there.
func (g *taskGroup) closeItself(ctx workflow.Context, open *groupSequence, end domain.Offsets) {
	now := workflow.Now(ctx)
	open.End, open.ClosedAt = end, now
	g.seqs = append(g.seqs, &groupSequence{Sequence: domain.Sequence{ID: g.nextID, Start: end.Clone()}, OpenedAt: now})
	g.nextID++
	g.wantClose = ""
}

// publishNotice is what the Publish of the group's oldest sequence s tells
// the supervisor once s has committed, with the group's progress report;
// nil in a run that signals the publish itself.
func (g *taskGroup) publishNotice(ctx workflow.Context, s *groupSequence) *protocol.PublishNotify {
	if !g.selfClose {
		return nil
	}
	next := 0
	if len(g.seqs) > 1 {
		next = g.seqs[1].ID
	} else if g.early != nil {
		next = g.early.ID
	}
	p := g.progress()
	notice, err := json.Marshal(SequencePublished{
		Group: g.in.Group, Generation: g.in.Generation, SequenceID: s.ID, End: s.End,
		Closed: &ClosedByGroup{NextSequenceID: next}, Progress: &p,
	})
	if err != nil { // not for these types; the group then signals itself
		workflow.GetLogger(ctx).Error("encode the publish notice", "sequence", s.ID, "error", err)
		return nil
	}
	g.reported(ctx)
	return &protocol.PublishNotify{WorkflowID: SupervisorWorkflowID(g.in.Spec.ID), Signal: SignalSequencePublished, Notice: notice}
}

// closedUnpublished are the group's closed sequences, oldest first, for a
// request to carry: the supervisor may not have heard of those the group
// closed itself. Nil in a run that never closes one itself.
func (g *taskGroup) closedUnpublished() []domain.Sequence {
	if !g.selfClose {
		return nil
	}
	var out []domain.Sequence
	for _, s := range g.seqs {
		if !s.Open() {
			out = append(out, s.Sequence)
		}
	}
	return out
}
