package workflows

import "slices"

// status builds the answer to QueryStatus.
func (s *supervisor) status() SupervisorStatus {
	st := SupervisorStatus{
		ID: s.spec.ID, DataSource: s.spec.DataSchema.DataSource, Topic: s.spec.IOConfig.Topic,
		State: s.c.State, Partitions: slices.Clone(s.c.Partitions),
		Committed: s.c.Committed.Clone(), Latest: s.c.Latest.Clone(),
		Published: s.c.Published, RecentErrors: slices.Clone(s.c.RecentErrors),
	}
	for p, latest := range s.c.Latest {
		if c, ok := s.c.Committed[p]; ok && latest > c {
			st.Lag += latest - c
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
