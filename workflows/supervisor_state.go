package workflows

import (
	"slices"

	"handoff/internal/domain"
)

// maxRecentErrors bounds the supervisor's ring of recent errors.
const maxRecentErrors = 10

// SupervisorCarry is the supervisor state carried across continue-as-new.
type SupervisorCarry struct {
	State        string               `json:"state"`
	Stopping     bool                 `json:"stopping,omitempty"`
	Partitions   []int32              `json:"partitions"`
	Groups       map[int]*groupRecord `json:"groups"`
	Committed    domain.Offsets       `json:"committed"`
	Latest       domain.Offsets       `json:"latest"`
	Published    PublishTotals        `json:"published"`
	RecentErrors []ErrorRecord        `json:"recentErrors"`
}

// groupRecord is what the supervisor knows of one task group. Its
// Sequences are the checkpoints: every recorded sequence not yet published,
// the open one last.
type groupRecord struct {
	Partitions     []int32           `json:"partitions"`
	Generation     int               `json:"generation"`
	Sequences      []domain.Sequence `json:"sequences"`
	NextSequenceID int               `json:"nextSequenceId"`
	Running        bool              `json:"running"`
	Finished       bool              `json:"finished,omitempty"`
}

// groupPartitions splits partitions over taskCount groups (p % taskCount);
// groups with no partition are left out.
func groupPartitions(partitions []int32, taskCount int) map[int][]int32 {
	out := map[int][]int32{}
	for _, p := range partitions {
		g := domain.GroupOf(p, taskCount)
		out[g] = append(out[g], p)
	}
	for g := range out {
		slices.Sort(out[g])
	}
	return out
}

// sequence returns the recorded sequence with that id, or nil.
func (r *groupRecord) sequence(id int) *domain.Sequence {
	for i := range r.Sequences {
		if r.Sequences[i].ID == id {
			return &r.Sequences[i]
		}
	}
	return nil
}

func subset(o domain.Offsets, partitions []int32) domain.Offsets {
	out := domain.Offsets{}
	for _, p := range partitions {
		if v, ok := o[p]; ok {
			out[p] = v
		}
	}
	return out
}
