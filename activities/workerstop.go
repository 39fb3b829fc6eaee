package activities

import (
	"context"
	"sync"
)

// workerStops turns a worker's stop channel (activity.GetWorkerStopChannel,
// one per worker, closed when it begins to stop) into a context, so that
// each stream reacts to it through context.AfterFunc instead of a
// goroutine of its own waiting on the channel: with a thousand streams on
// a worker, a thousand fewer goroutine stacks.
type workerStops struct {
	mu sync.Mutex
	by map[<-chan struct{}]context.Context
}

// context is canceled once ch is closed; never for a nil ch (an activity
// run outside a worker).
func (w *workerStops) context(ch <-chan struct{}) context.Context {
	if ch == nil {
		return context.Background()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if ctx, ok := w.by[ch]; ok {
		return ctx
	}
	if w.by == nil {
		w.by = map[<-chan struct{}]context.Context{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.by[ch] = ctx
	go func() {
		<-ch
		cancel()
		w.mu.Lock()
		delete(w.by, ch)
		w.mu.Unlock()
	}()
	return ctx
}
