package workflows

import (
	"slices"

	"handoff/internal/domain"
)

// status builds the answer to QueryStatus.
func (s *supervisor) status() SupervisorStatus {
	st := SupervisorStatus{
		ID: s.spec.ID, DataSource: s.spec.DataSchema.DataSource, Topic: s.spec.IOConfig.Topic,
		State: s.c.State, Partitions: slices.Clone(s.c.Partitions),
		Committed: s.c.Committed.Clone(), Latest: s.c.Latest.Clone(),
		Published: s.c.Published, RecentErrors: slices.Clone(s.c.RecentErrors),
	}
	// Lag counts from the committed offset or, before the first publish,
	// from where the group started reading.
	base := domain.Offsets{}
	for _, rec := range s.c.Groups {
		if len(rec.Sequences) > 0 {
			for p, o := range rec.Sequences[0].Start {
				base[p] = o
			}
		}
	}
	for p, o := range s.c.Committed {
		base[p] = o
	}
	for p, latest := range s.c.Latest {
		if b, ok := base[p]; ok && latest > b {
			st.Lag += latest - b
		}
	}
	for _, g := range s.sortedGroups() {
		rec := s.c.Groups[g]
		st.Groups = append(st.Groups, GroupStatus{
			Group: g, WorkflowID: TaskGroupWorkflowID(s.spec.ID, g), Generation: rec.Generation,
			Partitions: rec.Partitions, Sequences: slices.Clone(rec.Sequences), Running: rec.Running,
		})
	}
	return st
}
