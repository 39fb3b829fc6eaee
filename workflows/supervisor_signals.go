package workflows

import (
	"fmt"
	"slices"

	"go.temporal.io/sdk/workflow"

	"handoff/internal/domain"
)

func (s *supervisor) signalGroup(ctx workflow.Context, group int, name string, arg any) {
	id := TaskGroupWorkflowID(s.spec.ID, group)
	if err := workflow.SignalExternalWorkflow(ctx, id, "", name, arg).Get(ctx, nil); err != nil {
		s.recordError(ctx, fmt.Sprintf("signal %s to group %d: %v", name, group, err))
	}
}

func (s *supervisor) onCheckpoint(ctx workflow.Context, m CheckpointSignal) {
	for _, g := range s.sortedGroups() {
		if len(m.Groups) > 0 && !slices.Contains(m.Groups, g) {
			continue
		}
		if s.c.Groups[g].Running {
			s.signalGroup(ctx, g, SignalGroupCheckpoint, GroupCheckpoint{Reason: ReasonUser})
		}
	}
}

func (s *supervisor) onStop(ctx workflow.Context) {
	if s.c.Stopping {
		return
	}
	s.c.Stopping, s.c.State = true, StateStopping
	for _, g := range s.sortedGroups() {
		rec := s.c.Groups[g]
		switch {
		case rec.Running:
			s.signalGroup(ctx, g, SignalGroupStop, nil)
		case !hasClosed(rec):
			// Not running and nothing recorded to publish: what it had read
			// is not committed and will be read again by the next run.
			rec.Finished = true
		}
	}
}

func hasClosed(rec *groupRecord) bool {
	return slices.ContainsFunc(rec.Sequences, func(q domain.Sequence) bool { return !q.Open() })
}

// onCheckpointRequest records a sequence boundary and answers the group.
// A repeated request for a sequence already closed gets the same answer.
func (s *supervisor) onCheckpointRequest(ctx workflow.Context, m CheckpointRequest) {
	rec, ok := s.c.Groups[m.Group]
	if !ok || rec.Generation != m.Generation {
		return // from a generation that was replaced
	}
	seq := rec.sequence(m.SequenceID)
	if seq == nil {
		s.recordError(ctx, fmt.Sprintf("group %d asked to close unknown sequence %d", m.Group, m.SequenceID))
		return
	}
	if seq.Open() {
		seq.End = m.Offsets.Clone()
		rec.Sequences = append(rec.Sequences, domain.Sequence{ID: rec.NextSequenceID, Start: m.Offsets.Clone()})
		rec.NextSequenceID++
	}
	next := -1
	for i, q := range rec.Sequences {
		if q.ID == m.SequenceID && i+1 < len(rec.Sequences) {
			next = rec.Sequences[i+1].ID
		}
	}
	// seq may have moved when Sequences grew; look it up again.
	seq = rec.sequence(m.SequenceID)
	s.signalGroup(ctx, m.Group, SignalSetEndOffsets, SetEndOffsets{SequenceID: m.SequenceID, End: seq.End, NextSequenceID: next})
}

func (s *supervisor) onSequencePublished(m SequencePublished) {
	rec, ok := s.c.Groups[m.Group]
	if !ok {
		return
	}
	before := len(rec.Sequences)
	rec.Sequences = slices.DeleteFunc(rec.Sequences, func(q domain.Sequence) bool { return q.ID == m.SequenceID })
	if len(rec.Sequences) == before {
		return // already counted
	}
	if s.c.Committed == nil {
		s.c.Committed = domain.Offsets{}
	}
	for p, o := range m.End {
		s.c.Committed[p] = o
	}
	s.c.Published.Sequences++
	s.c.Published.Segments += m.Segments
	s.c.Published.Rows += m.Rows
}

func (s *supervisor) onGroupFinished(m GroupFinished) {
	if rec, ok := s.c.Groups[m.Group]; ok && rec.Generation == m.Generation {
		rec.Finished, rec.Running = true, false
	}
}

func (s *supervisor) sortedGroups() []int {
	gs := make([]int, 0, len(s.c.Groups))
	for g := range s.c.Groups {
		gs = append(gs, g)
	}
	slices.Sort(gs)
	return gs
}
