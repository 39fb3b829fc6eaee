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

// setTarget records what the user wants and reconciles at once. A stop
// overrides a suspend; a resume clears both only if not stopping.
func (s *supervisor) setTarget(target string) {
	if s.c.Target == targetStop {
		return
	}
	s.c.Target = target
	s.poke()
}

// checkpoint asks the listed groups (all when none) to close their open
// sequences, and returns a waiter per running group.
func (s *supervisor) checkpoint(ctx workflow.Context, m CheckpointSignal) []*checkpointWaiter {
	var out []*checkpointWaiter
	type sent struct {
		group int
		f     workflow.Future
	}
	var sending []sent
	defer func() {
		for _, x := range sending {
			if err := x.f.Get(ctx, nil); err != nil {
				s.recordError(ctx, fmt.Sprintf("signal %s to group %d: %v", SignalGroupCheckpoint, x.group, err))
			}
		}
	}()
	for _, g := range s.sortedGroups() {
		if len(m.Groups) > 0 && !slices.Contains(m.Groups, g) {
			continue
		}
		w := &checkpointWaiter{result: GroupCheckpointResult{Group: g, Outcome: CheckpointNotRunning}}
		out = append(out, w)
		if !s.c.Groups[g].Running {
			w.done = true
			continue
		}
		s.waiters[g] = append(s.waiters[g], w)
		if s.parallelSignals {
			// Every group hears at once; the deliveries are awaited together.
			f := workflow.SignalExternalWorkflow(ctx, TaskGroupWorkflowID(s.spec.ID, g), "", SignalGroupCheckpoint, GroupCheckpoint{Reason: ReasonUser})
			sending = append(sending, sent{g, f})
			continue
		}
		s.signalGroup(ctx, g, SignalGroupCheckpoint, GroupCheckpoint{Reason: ReasonUser})
	}
	return out
}

// resolve answers every checkpoint waiting on group g.
func (s *supervisor) resolve(g int, r GroupCheckpointResult) {
	for _, w := range s.waiters[g] {
		w.result, w.done = r, true
		w.result.Group = g
	}
	delete(s.waiters, g)
}

// onCheckpointRequest records a sequence boundary and answers the group.
// A repeated request for a sequence already closed gets the same answer.
func (s *supervisor) onCheckpointRequest(ctx workflow.Context, m CheckpointRequest) {
	if m.Progress != nil {
		s.onProgress(ctx, *m.Progress)
	}
	rec, ok := s.c.Groups[m.Group]
	if !ok || !rec.knows(m.Generation) {
		return // from a generation that was replaced
	}
	// The sequences the group closed by itself and has not published yet
	// come first.
	for i, q := range m.ClosedByGroup {
		next := m.SequenceID
		if i+1 < len(m.ClosedByGroup) {
			next = m.ClosedByGroup[i+1].ID
		}
		recordClosed(rec, q.ID, q.End, next)
	}
	seq := rec.sequence(m.SequenceID)
	if seq == nil {
		s.recordError(ctx, fmt.Sprintf("group %d asked to close unknown sequence %d", m.Group, m.SequenceID))
		return
	}
	if seq.Open() {
		seq.End = m.Offsets.Clone()
		// The group proposes the id it already reads into: never one
		// lower than the next this supervisor would give.
		id := max(rec.NextSequenceID, m.NextSequenceID)
		rec.Sequences = append(rec.Sequences, domain.Sequence{ID: id, Start: m.Offsets.Clone()})
		rec.NextSequenceID = id + 1
	}
	next := -1
	for i, q := range rec.Sequences {
		if q.ID == m.SequenceID && i+1 < len(rec.Sequences) {
			next = rec.Sequences[i+1].ID
		}
	}
	seq = rec.sequence(m.SequenceID) // Sequences may have grown
	s.resolve(m.Group, GroupCheckpointResult{Outcome: CheckpointRecorded, SequenceID: seq.ID, End: seq.End})
	s.signalGroup(ctx, m.Group, SignalSetEndOffsets, SetEndOffsets{SequenceID: m.SequenceID, End: seq.End, NextSequenceID: next})
}

func (s *supervisor) onCheckpointDeclined(m CheckpointDeclined) {
	if rec, ok := s.c.Groups[m.Group]; ok && rec.knows(m.Generation) {
		s.resolve(m.Group, GroupCheckpointResult{Outcome: CheckpointEmpty})
	}
}

// onSequencePublished counts a committed sequence, which is no longer the
// group's to publish. A notice from its Publish (Closed set) first takes
// the progress report it carries and records the boundary, if nothing
// recorded it yet.
func (s *supervisor) onSequencePublished(ctx workflow.Context, m SequencePublished) {
	rec, ok := s.c.Groups[m.Group]
	if !ok {
		return
	}
	// A repeated notice (a Publish retried after it told) counts nothing.
	if rec.sequence(m.SequenceID) != nil {
		if m.Progress != nil {
			s.onProgress(ctx, *m.Progress)
		}
		if m.Closed != nil {
			// A commit is a fact, whichever generation tells of it: the
			// Publish of a generation that rolled over while it ran tells
			// under the old one.
			recordClosed(rec, m.SequenceID, m.End, m.Closed.NextSequenceID)
		}
	}
	s.confirmGeneration(ctx, rec, m.Generation)
	before := len(rec.Sequences)
	rec.Sequences = slices.DeleteFunc(rec.Sequences, func(q domain.Sequence) bool { return q.ID == m.SequenceID })
	if len(rec.Sequences) == before {
		return // already counted
	}
	delete(rec.SequenceRows, m.SequenceID)
	rec.Failures, rec.OutOfRange = 0, nil
	if s.c.Committed == nil {
		s.c.Committed = domain.Offsets{}
	}
	for p, o := range m.End {
		// Notices may arrive out of order; offsets only move forward here
		// (a reset sets them itself).
		s.c.Committed[p] = max(s.c.Committed[p], o)
	}
	s.c.Published.Sequences++
	s.c.Published.Segments += m.Segments
	s.c.Published.Rows += m.Rows
	s.c.Published.LastAt = now(ctx)
}

// recordClosed records the boundary of sequence id, which its group closed
// by itself (taskgroup_selfclose.go) at end and read on from into the
// sequence next, as onCheckpointRequest would have. Partitions that joined
// the sequence after the group closed it were read into the next one, and
// start it where the supervisor gave them.
func recordClosed(rec *groupRecord, id int, end domain.Offsets, next int) {
	seq := rec.sequence(id)
	if seq == nil || !seq.Open() {
		return // recorded by an answered request, or a repeated notice
	}
	start := end.Clone()
	for p, o := range seq.Start {
		if _, ok := start[p]; !ok {
			start[p] = o
		}
	}
	seq.End = end.Clone()
	nextID := max(rec.NextSequenceID, next)
	rec.Sequences = append(rec.Sequences, domain.Sequence{ID: nextID, Start: start})
	rec.NextSequenceID = nextID + 1
}

func (s *supervisor) onGroupFinished(m GroupFinished) {
	if rec, ok := s.c.Groups[m.Group]; ok && rec.knows(m.Generation) {
		rec.Finished, rec.Running, rec.RollingTo = true, false, 0
		s.resolve(m.Group, GroupCheckpointResult{Outcome: CheckpointNotRunning})
	}
}

func (s *supervisor) onProgress(ctx workflow.Context, m GroupProgress) {
	rec, ok := s.c.Groups[m.Group]
	if !ok || !rec.knows(m.Generation) {
		return
	}
	s.confirmGeneration(ctx, rec, m.Generation)
	if s.c.Current == nil {
		s.c.Current = domain.Offsets{}
	}
	for p, o := range m.Position {
		s.c.Current[p] = o
	}
	s.c.Read.Add(m.ReadTotals)
	rec.SequenceRows = m.SequenceRows
}

// confirmGeneration completes a rollover once the new generation speaks.
func (s *supervisor) confirmGeneration(ctx workflow.Context, rec *groupRecord, gen int) {
	if rec.RollingTo != 0 && gen == rec.RollingTo {
		rec.Generation, rec.RollingTo, rec.StartedAt = gen, 0, now(ctx)
		// A checkpoint asked during the rollover that closed nothing has
		// had its answer: the rollover closed the sequence, or it was empty.
		for g, r := range s.c.Groups {
			if r == rec {
				s.resolve(g, GroupCheckpointResult{Outcome: CheckpointEmpty})
			}
		}
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
