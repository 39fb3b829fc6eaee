package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
)

// A group of a run that records earlyNextVersion does not stop reading at
// a handoff. When it asks its supervisor to close the open sequence S at
// offsets O, it opens S's successor at once, as the supervisor will: with
// the next sequence id (which the group tracks, and proposes in its
// request) and starting at O, and streams into it while the request is
// recorded and S publishes. That successor is the early sequence. The
// supervisor's answer (set-end-offsets) adopts it: it must close S at O
// and name the proposed id, as it always does for the group that asked;
// anything else fails the group, which restarts from the committed offsets
// (the offsets compare-and-swap keeps that exactly-once).
//
// Nothing is read early when the request closes the group's last sequence
// before a stop or rollover, while the run drains towards continue-as-new,
// or when as many sequences wait to publish as maxPendingPublishes allows.

// earlyNextState is the task group's part of reading on at a handoff.
type earlyNextState struct {
	earlyOn bool // the run records earlyNextVersion
	// nextID is the id the supervisor gives the group's next sequence (0:
	// unknown, from an older supervisor, until its first answer: nothing
	// is read early).
	nextID int
	// early is the open sequence's successor, read into while the request
	// that closes the open sequence awaits its answer; nil if none.
	early *groupSequence
	// earlyClose is a handoff trigger a stream into the early sequence
	// returned with: nothing more is read into it, and it closes once
	// adopted.
	earlyClose string
}

// openEarly opens the successor of the sequence just asked to close at end.
func (g *taskGroup) openEarly(ctx workflow.Context, end domain.Offsets) {
	if !g.earlyOn || g.nextID == 0 || g.early != nil || g.stopping || g.rolloverTo != 0 || g.draining || g.partsAdded || g.wantClose == ReasonStop {
		return
	}
	closing := 1 // the one asked to close
	for _, s := range g.seqs {
		if !s.Open() {
			closing++
		}
	}
	if closing >= g.in.Spec.TuningConfig.MaxPendingPublishes {
		return
	}
	g.early = &groupSequence{Sequence: domain.Sequence{ID: g.nextID, Start: end.Clone()}, OpenedAt: workflow.Now(ctx)}
}

// adoptEarly takes the supervisor's answer for the open sequence: the next
// sequence it names is the early one, or, with none, a new empty one.
func (g *taskGroup) adoptEarly(ctx workflow.Context, s SetEndOffsets) (*groupSequence, error) {
	g.nextID = max(g.nextID, s.NextSequenceID+1)
	e := g.early
	g.early = nil
	if g.earlyClose != "" && g.wantClose != ReasonStop {
		g.wantClose = g.earlyClose
	}
	g.earlyClose = ""
	if e == nil {
		return &groupSequence{Sequence: domain.Sequence{ID: s.NextSequenceID, Start: s.End.Clone()}, OpenedAt: workflow.Now(ctx)}, nil
	}
	// Partitions that joined the early sequence are not in the end.
	if e.ID != s.NextSequenceID || !subset(e.Start, s.End.Partitions()).Equal(s.End) {
		return nil, fmt.Errorf("group %d: the supervisor closed sequence %d at %s and named sequence %d next, but the group asked to close it at %s and read on into sequence %d: it restarts from the committed offsets",
			g.in.Group, s.SequenceID, s.End, s.NextSequenceID, e.Start, e.ID)
	}
	return e, nil
}

// sequence is the group's sequence id, the early one included; nil if none.
func (g *taskGroup) sequence(id int) *groupSequence {
	for _, s := range g.seqs {
		if s.ID == id {
			return s
		}
	}
	if g.early != nil && g.early.ID == id {
		return g.early
	}
	return nil
}
