package activities

import (
	"slices"
	"time"

	"handoff/internal/domain"
	"handoff/internal/kafka"
)

// saw notes what a fetch of p said of the partition's end: its latest
// offset as the stream's isolation level sees it (for status), and, under
// read committed, whether an open transaction holds the stream at the last
// stable offset while the log goes on. A hold is kept with when it began,
// for the heartbeat (and so the supervisor's status) and the metrics: a
// transaction left hanging must show, not stall in silence.
func (s *stream) saw(p domain.Partition, res kafka.FetchResult, iso kafka.Isolation) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hwm[p] = res.Latest(iso)
	lso := res.LastStableOffset
	if iso != kafka.ReadCommitted || lso < 0 || res.HighWatermark <= lso || res.Next < lso {
		if _, ok := s.held[p]; ok {
			delete(s.held, p)
			s.heldChanged = true
			s.heldMetric(p, 0)
		}
		return
	}
	h, ok := s.held[p]
	if !ok || h.Offset != lso {
		h = domain.HeldPartition{Partition: p, Offset: lso, Since: now}
		s.heldChanged = true
	}
	h.HighWatermark = res.HighWatermark
	if s.held == nil {
		s.held = map[domain.Partition]domain.HeldPartition{}
	}
	s.held[p] = h
	s.heldMetric(p, now.Sub(h.Since))
}

func (s *stream) heldMetric(p domain.Partition, d time.Duration) {
	if s.a.Metrics != nil {
		s.a.Metrics.HeldByTransaction(s.in.Spec.ID, s.in.Spec.IOConfig.TopicOf(p), p.Partition, d)
	}
}

// heldNow lists the held partitions in order, and says whether the list
// changed since the last call.
func (s *stream) heldNow() ([]domain.HeldPartition, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := s.heldChanged
	s.heldChanged = false
	out := make([]domain.HeldPartition, 0, len(s.held))
	for _, h := range s.held {
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b domain.HeldPartition) int { return domain.ComparePartitions(a.Partition, b.Partition) })
	return out, changed
}

// heldMoved: a hold began or ended since the last heartbeat, which is then
// due at the busy pace.
func (s *stream) heldMoved() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.heldChanged
}
