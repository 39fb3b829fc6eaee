package workload

import (
	"context"
	"fmt"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"handoff/internal/domain"
)

// maxFailures bounds the recent failures kept.
const maxFailures = 20

// Tracker bounds and lists the worker's activities. Safe for concurrent use.
type Tracker struct {
	limits Limits
	slots  map[Kind]chan struct{}

	mu       sync.Mutex
	active   map[*Handle]struct{}
	failures []Failure
	memory   Memory
	pushed   chan struct{} // closed while not pushing back

	ingestAt atomic.Int64 // unix nanoseconds of the last consume or publish progress
}

// NewTracker applies the limits' defaults.
func NewTracker(l Limits) *Tracker {
	if l.Consume <= 0 {
		l.Consume = 4
	}
	if l.Publish <= 0 {
		l.Publish = 2
	}
	if l.Compact <= 0 {
		l.Compact = 1
	}
	if l.CompactShare <= 0 || l.CompactShare > 1 {
		l.CompactShare = DefaultCompactShare
	}
	if l.PushBackFraction <= 0 || l.PushBackFraction > 1 {
		l.PushBackFraction = 0.8
	}
	if l.CheckEvery <= 0 {
		l.CheckEvery = 250 * time.Millisecond
	}
	t := &Tracker{
		limits: l,
		slots:  map[Kind]chan struct{}{Consume: make(chan struct{}, l.Consume), Publish: make(chan struct{}, l.Publish), Compact: make(chan struct{}, l.Compact)},
		active: map[*Handle]struct{}{},
		pushed: make(chan struct{}),
	}
	close(t.pushed)
	t.sample(time.Now())
	return t
}

// Limits returns the limits in force.
func (t *Tracker) Limits() Limits { return t.limits }

// Monitor samples the heap every CheckEvery until ctx ends, starting and
// ending push-back as it crosses the threshold.
func (t *Tracker) Monitor(ctx context.Context) {
	tick := time.NewTicker(t.limits.CheckEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			t.sample(now)
		}
	}
}

// memoryLimit is the configured limit, else the runtime's soft limit when
// one is set.
func (t *Tracker) memoryLimit() int64 {
	if t.limits.MemoryLimit > 0 {
		return t.limits.MemoryLimit
	}
	if l := debug.SetMemoryLimit(-1); l > 0 && l < 1<<62 {
		return l
	}
	return 0
}

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}

// sample reads the heap and updates push-back.
func (t *Tracker) sample(now time.Time) {
	s := slices.Clone(heapSample)
	metrics.Read(s)
	heap := s[0].Value.Uint64()
	limit := t.memoryLimit()
	threshold := int64(float64(limit) * t.limits.PushBackFraction)
	over := limit > 0 && int64(heap) > threshold
	t.mu.Lock()
	defer t.mu.Unlock()
	m := &t.memory
	m.HeapBytes, m.Limit, m.Threshold = heap, limit, threshold
	switch {
	case over && !m.PushingBack:
		m.PushingBack, m.PushBackSince = true, now
		t.pushed = make(chan struct{})
	case !over && m.PushingBack:
		m.PushBackTotal += now.Sub(m.PushBackSince)
		m.PushingBack, m.PushBackSince = false, time.Time{}
		close(t.pushed)
	}
}

// Begin registers an activity and waits, listed as waiting, for a slot of
// its kind and, for a consume, until memory push-back ends. The returned
// handle must be ended.
func (t *Tracker) Begin(ctx context.Context, w Work) (*Handle, error) {
	now := time.Now()
	w.StartedAt, w.StateSince, w.State = now, now, StateWaitingForSlot
	h := &Handle{t: t, w: w}
	t.mu.Lock()
	t.active[h] = struct{}{}
	t.mu.Unlock()
	select {
	case t.slots[w.Kind] <- struct{}{}:
		h.slot = true
	case <-ctx.Done():
		h.End(ctx.Err())
		return nil, fmt.Errorf("wait for a %s slot: %w", w.Kind, ctx.Err())
	}
	if w.Kind == Consume {
		t.mu.Lock()
		pushed := t.pushed
		t.mu.Unlock()
		select {
		case <-pushed:
		default:
			h.SetState(StateWaitingForMemory)
			select {
			case <-pushed:
			case <-ctx.Done():
				h.End(ctx.Err())
				return nil, fmt.Errorf("wait for memory: %w", ctx.Err())
			}
		}
	}
	h.SetState(StateStarted)
	return h, nil
}

// Snapshot returns the tracker's state now.
func (t *Tracker) Snapshot() Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := Snapshot{Time: time.Now(), Limits: t.limits, Memory: t.memory, RecentFailures: slices.Clone(t.failures)}
	if s.Memory.PushingBack {
		s.Memory.PushBackTotal += s.Time.Sub(s.Memory.PushBackSince)
	}
	for h := range t.active {
		s.Active = append(s.Active, h.w)
		s.InFlightBytes += h.w.Bytes
	}
	slices.SortFunc(s.Active, func(a, b Work) int { return a.StartedAt.Compare(b.StartedAt) })
	return s
}

// Handle is one registered activity.
type Handle struct {
	t    *Tracker
	w    Work
	slot bool
	done bool
}

// SetState records what the activity does now.
func (h *Handle) SetState(state string) {
	h.t.mu.Lock()
	defer h.t.mu.Unlock()
	if h.w.State != state {
		h.w.State, h.w.StateSince = state, time.Now()
	}
}

// Progress records how far the activity got and the bytes it holds.
func (h *Handle) Progress(offsets domain.Offsets, rows, bytes int64) {
	h.t.mu.Lock()
	defer h.t.mu.Unlock()
	if offsets != nil {
		h.w.Offsets = offsets.Clone()
	}
	h.w.Rows, h.w.Bytes = rows, bytes
	if h.w.Kind == Consume || h.w.Kind == Publish {
		h.t.ingestAt.Store(time.Now().UnixNano())
	}
}

// Work returns the activity's entry as it stands.
func (h *Handle) Work() Work {
	h.t.mu.Lock()
	defer h.t.mu.Unlock()
	return h.w
}

// End releases the slot and unlists the activity; a non-nil err is kept
// among the recent failures. Ending twice does nothing.
func (h *Handle) End(err error) {
	t := h.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if h.done {
		return
	}
	h.done = true
	delete(t.active, h)
	if h.slot {
		<-t.slots[h.w.Kind]
	}
	if err != nil {
		t.failures = append(t.failures, Failure{Time: time.Now(), Work: h.w, Error: err.Error()})
		if n := len(t.failures); n > maxFailures {
			t.failures = t.failures[n-maxFailures:]
		}
	}
}
