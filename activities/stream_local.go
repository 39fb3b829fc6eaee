package activities

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"handoff/internal/domain"
)

// localStreams are the streams running in this process, by their group's
// workflow ID, each with what its last heartbeat said. A watch in the same
// process reads a group's positions from here instead of describing the
// group's workflow (watch_local.go): the same heartbeat, without a call
// to Temporal for it.
type localStreams struct {
	mu sync.Mutex
	by map[string]*localStream
}

// localStream is one stream attempt of a group.
type localStream struct {
	runID   string // the group's run
	attempt int32
	started time.Time

	mu      sync.Mutex
	offsets domain.Offsets // read so far, as of its last heartbeat
	held    []domain.HeldPartition
}

// register lists the stream of ctx's activity until the returned func is
// called; a stream outside a workflow (tests) is not listed.
func (l *localStreams) register(ctx context.Context) (*localStream, func()) {
	info := activity.GetInfo(ctx)
	id := info.WorkflowExecution.ID
	if id == "" || info.WorkflowExecution.RunID == "" {
		return nil, func() {}
	}
	ls := &localStream{runID: info.WorkflowExecution.RunID, attempt: info.Attempt, started: time.Now()}
	l.mu.Lock()
	if l.by == nil {
		l.by = map[string]*localStream{}
	}
	l.by[id] = ls
	l.mu.Unlock()
	return ls, func() {
		l.mu.Lock()
		if l.by[id] == ls {
			delete(l.by, id)
		}
		l.mu.Unlock()
	}
}

// get returns the stream of a group's workflow, nil when none runs here.
func (l *localStreams) get(id string) *localStream {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.by[id]
}

// runs lists the run of every stream running here.
func (l *localStreams) runs() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.by))
	for _, ls := range l.by {
		out = append(out, ls.runID)
	}
	return out
}

// beat keeps what the stream just heartbeat (b is not changed after).
func (ls *localStream) beat(b streamBeat) {
	if ls == nil {
		return
	}
	ls.mu.Lock()
	ls.offsets, ls.held = b.Offsets, b.Held
	ls.mu.Unlock()
}

// beaten: the stream heartbeat at least once.
func (ls *localStream) beaten() bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.offsets != nil
}

// last returns what the stream last heartbeat.
func (ls *localStream) last() (domain.Offsets, []domain.HeldPartition) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.offsets, ls.held
}
