package liveness

import (
	"cmp"
	"slices"
	"sync"

	"go.temporal.io/sdk/activity"
)

// ActivityRef names one activity attempt running on a worker.
type ActivityRef struct {
	WorkflowID string `json:"workflowId"`
	RunID      string `json:"runId"`
	ActivityID string `json:"activityId"`
	Type       string `json:"type"`
	Attempt    int32  `json:"attempt"`
}

func refOf(info activity.Info) ActivityRef {
	return ActivityRef{
		WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID,
		ActivityID: info.ActivityID, Type: info.ActivityType.Name, Attempt: info.Attempt,
	}
}

// Registry is the set of activities the worker runs now; its version
// moves with every change, so the lease is rewritten only when it changed.
type Registry struct {
	mu      sync.Mutex
	running map[ActivityRef]int // a ref may run twice only by a server bug; count it
	version uint64
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{running: map[ActivityRef]int{}} }

func (r *Registry) add(a ActivityRef) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.running[a]++
	r.version++
}

func (r *Registry) remove(a ActivityRef) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running[a]--; r.running[a] <= 0 {
		delete(r.running, a)
	}
	r.version++
}

// Snapshot lists the running activities in a stable order, with the
// registry's version.
func (r *Registry) Snapshot() ([]ActivityRef, uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]ActivityRef, 0, len(r.running))
	for a := range r.running {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b ActivityRef) int {
		return cmp.Or(cmp.Compare(a.WorkflowID, b.WorkflowID), cmp.Compare(a.ActivityID, b.ActivityID), cmp.Compare(a.Attempt, b.Attempt))
	})
	return out, r.version
}
