package liveness

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
)

// ActivityRef names one activity attempt running on a worker.
type ActivityRef struct {
	WorkflowID string `json:"workflowId"`
	RunID      string `json:"runId"`
	ActivityID string `json:"activityId,omitempty"` // "": a workflow run served recently
	Type       string `json:"type,omitempty"`
	Attempt    int32  `json:"attempt,omitempty"`
}

func refOf(info activity.Info) ActivityRef {
	return ActivityRef{
		WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID,
		ActivityID: info.ActivityID, Type: info.ActivityType.Name, Attempt: info.Attempt,
	}
}

// Registry is the set of activities the worker runs now, and the
// workflow runs it ran activities for in the last recentFor: a dead
// worker's attempt that started after its lease was last written belongs,
// most often, to a workflow it served just before (a group's next stream,
// its next publish), and takeOver looks at every attempt of each workflow
// listed. Its version moves with every change, so the lease is rewritten
// only when it changed; changed, when set, runs after each start (the
// lease writes the list before the activity runs).
type Registry struct {
	mu      sync.Mutex
	running map[ActivityRef]int // a ref may run twice only by a server bug; count it
	recent  map[ActivityRef]time.Time
	version uint64
	changed func()
}

// recentFor is how long a workflow run stays listed after the worker's
// last activity for it ended.
const recentFor = 2 * time.Minute

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{running: map[ActivityRef]int{}, recent: map[ActivityRef]time.Time{}}
}

// onChange sets what runs after each activity start, before the activity
// does.
func (r *Registry) onChange(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changed = f
}

func (r *Registry) add(a ActivityRef) {
	r.mu.Lock()
	r.running[a]++
	r.version++
	f := r.changed
	r.mu.Unlock()
	if f != nil {
		f()
	}
}

func (r *Registry) remove(a ActivityRef) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running[a]--; r.running[a] <= 0 {
		delete(r.running, a)
	}
	r.recent[ActivityRef{WorkflowID: a.WorkflowID, RunID: a.RunID}] = time.Now()
	r.version++
}

// Snapshot lists the running activities, then the recent workflow runs
// (with no activity id), in a stable order, with the registry's version.
func (r *Registry) Snapshot() ([]ActivityRef, uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for a, at := range r.recent {
		if time.Since(at) > recentFor {
			delete(r.recent, a)
			r.version++
		}
	}
	out := make([]ActivityRef, 0, len(r.running)+len(r.recent))
	for a := range r.running {
		out = append(out, a)
	}
	for a := range r.recent {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b ActivityRef) int {
		return cmp.Or(cmp.Compare(a.WorkflowID, b.WorkflowID), cmp.Compare(a.RunID, b.RunID),
			cmp.Compare(a.ActivityID, b.ActivityID), cmp.Compare(a.Attempt, b.Attempt))
	})
	return out, r.version
}
